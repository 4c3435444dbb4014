//! The model-facing texts of the notes tools.

use std::fmt::Write;

use super::types::{
    ListedNote, NoteMetadata, NotesListData, NotesReadData, NotesSearchData, NotesUpdateData,
    NotesWriteData,
};
use crate::notes::ChangeKind;
use crate::tools::{ToolData, render_window};

// Writing to a String cannot fail, so `write!` results are ignored below.

/// The label before a diff that had to be shortened.
const SHORTENED_DIFF_LABEL: &str = "diff (this receipt's diff was shortened to fit the output budget; the update itself was applied):";

impl ToolData for NotesWriteData {
    fn render(&self) -> String {
        let mut text = format!("{} ", self.outcome.as_str());
        push_identity(&mut text, &self.address, self.project_key.as_deref());
        text
    }
}

impl ToolData for NotesUpdateData {
    fn render(&self) -> String {
        let mut text = String::with_capacity(self.diff.len() + 128);
        match &self.rename_from {
            Some(from) => {
                let _ = write!(text, "moved {from} -> {}", self.address);
                if self.replaced_crumpled_target == Some(true) {
                    text.push_str(" (replaced a crumpled note)");
                }
            }
            None => {
                text.push_str(if self.change_kind == ChangeKind::None {
                    "unchanged "
                } else {
                    "updated "
                });
                push_identity(&mut text, &self.address, self.project_key.as_deref());
                let _ = write!(text, ": {}", plural(self.applied, "edit", "edits"));
            }
        }
        if self.diff_truncated == Some(true) {
            text.push('\n');
            text.push_str(SHORTENED_DIFF_LABEL);
        } else if !self.diff.is_empty() {
            text.push_str("\ndiff:");
        }
        if !self.diff.is_empty() {
            text.push('\n');
            text.push_str(&self.diff);
        }
        text
    }
}

impl ToolData for NotesReadData {
    fn render(&self) -> String {
        let mut text = String::with_capacity(self.text.len() + 256);
        push_identity(&mut text, &self.address, self.project_key.as_deref());
        text.push('\n');
        push_metadata(&mut text, &self.metadata);
        text.push_str("\n\n");
        render_window(
            &mut text,
            &self.text,
            self.offset_chars,
            self.total_chars,
            self.next_offset_chars,
            self.limited_by,
        );
        text
    }
}

impl ToolData for NotesListData {
    fn render(&self) -> String {
        let mut text = plural(self.files.len() as u32, "note", "notes");
        for file in &self.files {
            push_listed(&mut text, file);
        }
        push_snapshot_footer(
            &mut text,
            self.more,
            self.crumpled_excluded,
            &self.homes_unavailable,
        );
        text
    }
}

/// One row of a `notes_list` text: `\n- <identity> | updated T[ | crumpled T]`.
pub(super) fn push_listed(text: &mut String, file: &ListedNote) {
    text.push_str("\n- ");
    push_identity(text, &file.address, file.project_key.as_deref());
    push_times(text, &file.updated_at, file.crumpled_at.as_deref());
}

impl ToolData for NotesSearchData {
    fn render(&self) -> String {
        let mut text = plural(self.files.len() as u32, "file", "files");
        for file in &self.files {
            text.push_str("\n- ");
            push_identity(&mut text, &file.address, file.project_key.as_deref());
            push_times(&mut text, &file.updated_at, file.crumpled_at.as_deref());
            let _ = write!(
                text,
                " | {}",
                plural(file.matches_total, "match", "matches")
            );
            if (file.matches.len() as u32) < file.matches_total {
                let _ = write!(text, " ({} shown)", file.matches.len());
            }
            for found in &file.matches {
                let _ = write!(
                    text,
                    "\n  line {} at offset_chars {}: {}",
                    found.line, found.offset_chars, found.text
                );
                if found.truncated {
                    text.push_str(" [line shortened]");
                }
            }
        }
        push_snapshot_footer(
            &mut text,
            self.more,
            self.crumpled_excluded,
            &self.homes_unavailable,
        );
        text
    }
}

/// `N thing` or `N things`.
fn plural(count: u32, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

/// `<address>[ (project <key>)]`
fn push_identity(text: &mut String, address: &str, project_key: Option<&str>) {
    text.push_str(address);
    if let Some(key) = project_key {
        let _ = write!(text, " (project {key})");
    }
}

/// ` | updated T[ | crumpled T]`
fn push_times(text: &mut String, updated_at: &str, crumpled_at: Option<&str>) {
    let _ = write!(text, " | updated {updated_at}");
    if let Some(crumpled) = crumpled_at {
        let _ = write!(text, " | crumpled {crumpled}");
    }
}

/// `origin X | created T | updated T[ | crumpled T][ | project P][ | extra {json}][ | N more metadata values (B bytes) are in the note file but too large to show]`
fn push_metadata(text: &mut String, metadata: &NoteMetadata) {
    let _ = write!(
        text,
        "origin {} | created {} | updated {}",
        metadata.origin.as_str(),
        metadata.created_at,
        metadata.updated_at
    );
    if let Some(crumpled) = &metadata.crumpled_at {
        let _ = write!(text, " | crumpled {crumpled}");
    }
    if let Some(project) = &metadata.project {
        let _ = write!(text, " | project {project}");
    }
    if !metadata.extra.0.is_empty() {
        let extra = serde_json::to_string(&metadata.extra).unwrap_or_default();
        let _ = write!(text, " | extra {extra}");
    }
    if let Some(omitted) = metadata.omitted_extra {
        let _ = write!(
            text,
            " | {} more metadata values ({} bytes) are in the note file but too large to show",
            omitted.keys, omitted.bytes
        );
    }
}

/// The omitted / hidden / unreadable lines shared by list and search.
fn push_snapshot_footer(
    text: &mut String,
    more: u32,
    crumpled_excluded: u32,
    homes_unavailable: &[String],
) {
    if more > 0 {
        let _ = write!(
            text,
            "\n{more} more matching notes omitted; narrow with pattern"
        );
    }
    if crumpled_excluded > 0 {
        let _ = write!(
            text,
            "\n{crumpled_excluded} crumpled notes hidden; pass wastebasket to list them"
        );
    }
    for home in homes_unavailable {
        let _ = write!(text, "\n{home} could not be read");
    }
}
