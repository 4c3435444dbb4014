//! A Pi session's entries around a notesoup reset, as the tests of the
//! reference Pi host and of real Pi both read them (entry kinds such as
//! `message:assistant` or `custom_message:notesoup/boot`).

/// One committed reset, in order: Pi's compaction (the retain-none
/// checkpoint), then notesoup's marker, the fresh window's boot and the
/// continuation message.
pub const RESET: [&str; 4] = [
    "compaction",
    "custom:notesoup/reset-marker",
    "custom_message:notesoup/boot",
    "custom_message:notesoup/continuation",
];

/// The entry kinds `before`, one [`RESET`], then `after`.
pub fn reset_between(before: &[&str], after: &[&str]) -> Vec<String> {
    before
        .iter()
        .chain(&RESET)
        .chain(after)
        .map(|kind| (*kind).to_owned())
        .collect()
}
