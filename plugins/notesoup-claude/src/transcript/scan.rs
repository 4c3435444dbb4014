//! The backward scans hooks run on the hot path: the last main-thread usage
//! of the live window, and the boot notesoup injected into it.

use std::io;
use std::path::Path;

use super::row::{Row, Usage};
use super::tail::{Needles, ReverseLines};
use crate::files::{is_absent, open_regular};
use crate::window::{BootIds, boot_ids};

/// The last model reply of the live window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastReply {
    /// Its usage: the size of the next request is `usage.context_tokens()`.
    pub usage: Usage,
    /// The model that answered.
    pub model: Option<String>,
    /// The model id the user selected (it may carry the `[1m]` suffix).
    pub requested_model: Option<String>,
}

const BOUNDARY: &[u8] = b"compact_boundary";

/// The usage of the last main-thread model reply after the last compact
/// boundary, read from the end of the transcript. Rows sharing a message id
/// resolve to the last one written, which is the first one met backwards;
/// synthetic and sidechain rows are skipped. `None` when the live window has
/// no reply yet, or when there is no regular file at `path` (a FIFO or a
/// directory reads as no transcript, and never blocks).
pub fn last_reply(path: &Path) -> io::Result<Option<LastReply>> {
    let mut lines = match ReverseLines::open(path) {
        Ok(lines) => lines,
        Err(err) if is_absent(&err) => return Ok(None),
        Err(err) => return Err(err),
    };
    let needles = Needles::new(&[BOUNDARY, b"\"assistant\""]);
    while let Some(line) = lines.next_line_containing(&needles)? {
        let Some(row) = Row::parse(&line) else {
            continue;
        };
        if row.is_compact_boundary() && !row.is_sidechain {
            return Ok(None);
        }
        if !row.is_model_reply() {
            continue;
        }
        let Some(message) = row.message else { continue };
        let Some(usage) = message.usage else { continue };
        return Ok(Some(LastReply {
            usage,
            model: message.model,
            requested_model: row.requested_model,
        }));
    }
    Ok(None)
}

/// What a transcript says about notesoup's windows, for a session whose
/// state record is missing (resume, fork) and for the live-window check.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BootScan {
    /// The newest notesoup boot in the transcript, if any.
    pub last_boot: Option<BootIds>,
    /// Whether that boot lies in the live window (after the last boundary).
    pub in_live_window: bool,
    /// Compact boundaries written after that boot (or in the whole file
    /// when there is no boot).
    pub boundaries_after: u64,
}

/// Scans backwards for the newest SessionStart context that carries a
/// notesoup boot (its `Current context window id: claude:…` line).
pub fn boot_scan(path: &Path) -> io::Result<BootScan> {
    let mut scan = BootScan::default();
    let mut lines = match ReverseLines::open(path) {
        Ok(lines) => lines,
        Err(err) if is_absent(&err) => return Ok(scan),
        Err(err) => return Err(err),
    };
    let needles = Needles::new(&[BOUNDARY, b"hook_additional_context"]);
    while let Some(line) = lines.next_line_containing(&needles)? {
        let Some(row) = Row::parse(&line) else {
            continue;
        };
        if row.is_sidechain {
            continue;
        }
        if row.is_compact_boundary() {
            scan.boundaries_after += 1;
            continue;
        }
        let Some((event, texts)) = row.hook_context() else {
            continue;
        };
        if event != "SessionStart" {
            continue;
        }
        if let Some(ids) = texts.iter().find_map(|text| boot_ids(text)) {
            scan.in_live_window = scan.boundaries_after == 0;
            scan.last_boot = Some(ids);
            return Ok(scan);
        }
    }
    Ok(scan)
}

/// The Claude session id a transcript's rows name (the first one that has
/// one), for a transcript read without its session record.
pub fn session_id_of(path: &Path) -> io::Result<Option<String>> {
    #[derive(serde::Deserialize)]
    struct Named {
        #[serde(rename = "sessionId")]
        session_id: Option<String>,
    }
    let file = std::io::BufReader::new(open_regular(path)?);
    for line in std::io::BufRead::split(file, b'\n') {
        if let Ok(Named {
            session_id: Some(id),
        }) = serde_json::from_slice(&line?)
        {
            return Ok(Some(id));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(lines: &[&str]) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), lines.join("\n")).unwrap();
        file
    }

    const BOOT: &str = r#"{"type":"attachment","uuid":"b","isSidechain":false,"attachment":{"type":"hook_additional_context","hookEvent":"SessionStart","content":["<context_window>\nAgent name: claude (brain: claude)\nFirst context window id: claude:s:1\nCurrent context window id: claude:s:2\n</context_window>"]}}"#;
    const BOUNDARY: &str = r#"{"type":"system","subtype":"compact_boundary","uuid":"c","parentUuid":null,"isSidechain":false}"#;

    fn reply(id: &str, input: u64, model: &str, sidechain: bool) -> String {
        format!(
            r#"{{"type":"assistant","uuid":"{id}{input}","isSidechain":{sidechain},"requestedModel":"{model}[1m]","message":{{"id":"{id}","model":"{model}","usage":{{"input_tokens":{input},"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}}}}"#
        )
    }

    #[test]
    fn last_reply_is_the_newest_main_thread_reply_of_the_live_window() {
        let a = reply("m1", 100, "claude-x", false);
        let b = reply("m2", 200, "claude-x", false);
        let side = reply("m3", 999, "claude-x", true);
        let synthetic = r#"{"type":"assistant","uuid":"z","message":{"id":"m4","model":"<synthetic>","usage":{"input_tokens":0}}}"#;
        let f = file(&[&a, &b, &side, synthetic, "{torn"]);
        let got = last_reply(f.path()).unwrap().unwrap();
        assert_eq!(got.usage.context_tokens(), 201);
        assert_eq!(got.requested_model.as_deref(), Some("claude-x[1m]"));

        let after_boundary = file(&[&a, BOUNDARY, BOOT]);
        assert_eq!(last_reply(after_boundary.path()).unwrap(), None);
        assert_eq!(last_reply(Path::new("/nonexistent/t.jsonl")).unwrap(), None);
    }

    #[test]
    fn rows_sharing_a_message_id_resolve_to_the_last_one() {
        let first = reply("m1", 100, "claude-x", false);
        let last = reply("m1", 150, "claude-x", false);
        let f = file(&[&first, &last]);
        assert_eq!(
            last_reply(f.path()).unwrap().unwrap().usage.input_tokens,
            150
        );
    }

    #[test]
    fn boot_scan_finds_the_live_boot_and_counts_boundaries() {
        let live = file(&[BOUNDARY, BOOT, &reply("m", 1, "c", false)]);
        let scan = boot_scan(live.path()).unwrap();
        assert!(scan.in_live_window);
        assert_eq!(scan.last_boot.unwrap().current.ordinal, 2);

        let stale = file(&[BOOT, BOUNDARY, BOUNDARY]);
        let scan = boot_scan(stale.path()).unwrap();
        assert!(!scan.in_live_window);
        assert_eq!(scan.boundaries_after, 2);

        let none = file(&[BOUNDARY]);
        assert_eq!(
            boot_scan(none.path()).unwrap(),
            BootScan {
                last_boot: None,
                in_live_window: false,
                boundaries_after: 1
            }
        );
    }
}
