//! The row texts the notes tools share.

use std::fmt::Write;

// Writing to a String cannot fail, so `write!` results are ignored below.

/// `N thing` or `N things`.
pub(super) fn plural(count: u32, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

/// `<address>[ (project <key>)]`
pub(super) fn push_identity(text: &mut String, address: &str, project_key: Option<&str>) {
    text.push_str(address);
    if let Some(key) = project_key {
        let _ = write!(text, " (project {key})");
    }
}

/// ` | updated T[ | crumpled T]`
pub(super) fn push_times(text: &mut String, updated_at: &str, crumpled_at: Option<&str>) {
    let _ = write!(text, " | updated {updated_at}");
    if let Some(crumpled) = crumpled_at {
        let _ = write!(text, " | crumpled {crumpled}");
    }
}

/// `\n- <identity> | updated T[ | crumpled T]`: the first line of a
/// `notes_list` or `notes_search` row.
pub(super) fn push_row_head(
    text: &mut String,
    address: &str,
    project_key: Option<&str>,
    updated_at: &str,
    crumpled_at: Option<&str>,
) {
    text.push_str("\n- ");
    push_identity(text, address, project_key);
    push_times(text, updated_at, crumpled_at);
}

/// The omitted / hidden / unreadable lines shared by list and search.
pub(super) fn push_snapshot_footer(
    text: &mut String,
    more: u32,
    crumpled_excluded: u32,
    homes_unavailable: &[String],
) {
    if more > 0 {
        let notes = plural(more, "more matching note", "more matching notes");
        let _ = write!(text, "\n{notes} omitted; narrow with pattern");
    }
    if crumpled_excluded > 0 {
        let notes = plural(crumpled_excluded, "crumpled note", "crumpled notes");
        let _ = write!(text, "\n{notes} hidden; pass wastebasket to list them");
    }
    for home in homes_unavailable {
        let _ = write!(text, "\n{home} could not be read");
    }
}
