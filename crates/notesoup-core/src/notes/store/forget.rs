//! What a change report asks a cache of note heads to stop serving: below
//! both the cache and the watcher that reports the changes.

use std::ffi::OsString;

/// What a change report asks a cache to stop serving without a stamp
/// check.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Forget {
    /// The head kept for this path.
    Path(OsString),
    /// Every head at or below this path.
    Below(OsString),
    /// Every head.
    All,
}

/// Whether `path` is `dir` or below it.
pub(super) fn is_at_or_below(path: &std::ffi::OsStr, dir: &std::ffi::OsStr) -> bool {
    let (path, dir) = (path.as_encoded_bytes(), dir.as_encoded_bytes());
    path.strip_prefix(dir).is_some_and(|rest| {
        rest.is_empty() || rest.starts_with(std::path::MAIN_SEPARATOR_STR.as_bytes())
    })
}
