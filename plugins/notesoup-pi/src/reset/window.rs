//! Windows on a Pi branch: ids, the active window, boots, committed
//! boundaries and the repairable reset tail.
//!
//! Everything here reads the active branch (root first) and never a global
//! entry tail, so navigating to a sibling branch never inherits another
//! branch's window state.

use serde_json::Value;

use super::kinds::Kind;
use crate::projection::{ResetMarker, is_checkpoint_backed, reset_markers};
use crate::session::{CustomMessageEntry, Entry};

/// The first 8 characters of a session id, as window ids carry them.
pub fn session_prefix(session_id: &str) -> &str {
    match session_id.char_indices().nth(8) {
        Some((end, _)) => &session_id[..end],
        None => session_id,
    }
}

/// The root window: `pcw:<session8>:root`.
pub fn root_window_id(session_id: &str) -> String {
    format!("pcw:{}:root", session_prefix(session_id))
}

/// A new reset window id, `pcw:<session8>:<8 hex>`, re-minted while it
/// collides with a marker on the branch (or the root id).
pub fn mint_window_id(
    session_id: &str,
    branch: &[&Entry],
    mut random_hex8: impl FnMut() -> String,
) -> String {
    let markers = reset_markers(branch);
    let root = root_window_id(session_id);
    loop {
        let candidate = format!("pcw:{}:{}", session_prefix(session_id), random_hex8());
        if candidate != root && !markers.iter().any(|m| m.window_id == candidate) {
            return candidate;
        }
    }
}

/// Eight random hex digits from a v4 UUID.
pub fn random_hex8() -> String {
    let mut hex = uuid::Uuid::new_v4().simple().to_string();
    hex.truncate(8);
    hex
}

/// The window a branch is in now.
#[derive(Debug, Clone)]
pub struct ActiveWindow<'a> {
    /// The window id: the last marker's, or the root id.
    pub id: String,
    /// The last reset marker, if any.
    pub marker: Option<ResetMarker<'a>>,
    /// Branch position of the window's first entry (after its marker).
    pub start: usize,
    /// The window before this one.
    pub previous: Option<String>,
}

/// The active window of `branch`.
pub fn active_window<'a>(branch: &[&'a Entry], session_id: &str) -> ActiveWindow<'a> {
    let mut markers = reset_markers(branch);
    let Some(last) = markers.pop() else {
        return ActiveWindow {
            id: root_window_id(session_id),
            marker: None,
            start: 0,
            previous: None,
        };
    };
    let previous = markers
        .last()
        .map_or_else(|| root_window_id(session_id), |m| m.window_id.to_owned());
    ActiveWindow {
        id: last.window_id.to_owned(),
        start: last.position + 1,
        marker: Some(last),
        previous: Some(previous),
    }
}

/// A custom message entry of `kind`.
pub fn custom_message_of(entry: &Entry, kind: Kind) -> Option<&CustomMessageEntry> {
    match entry {
        Entry::CustomMessage(custom) if kind.matches(&custom.custom_type) => Some(custom),
        _ => None,
    }
}

/// The `details.windowId` of a boot entry.
pub fn boot_window_id(entry: &Entry) -> Option<&str> {
    let boot = custom_message_of(entry, Kind::Boot)?;
    details_str(boot.details.as_ref(), "windowId")
}

fn details_str<'v>(details: Option<&'v Value>, key: &str) -> Option<&'v str> {
    details?.get(key)?.as_str()
}

/// Whether a boot's details name this session's root window. New boots
/// record the full `sessionId` (a fork made soon after its origin can share
/// the `pcw:<session8>:root` id); older boots are judged by the window id.
pub fn is_own_root_boot(details: Option<&Value>, session_id: &str) -> bool {
    match details_str(details, "sessionId") {
        Some(owner) => owner == session_id,
        None => details_str(details, "windowId") == Some(root_window_id(session_id).as_str()),
    }
}

/// Whether the active window already has its boot.
pub fn window_has_boot(branch: &[&Entry], window: &ActiveWindow<'_>, session_id: &str) -> bool {
    branch[window.start..].iter().any(|entry| {
        let Some(boot) = custom_message_of(entry, Kind::Boot) else {
            return false;
        };
        match window.marker {
            Some(_) => details_str(boot.details.as_ref(), "windowId") == Some(window.id.as_str()),
            None => is_own_root_boot(boot.details.as_ref(), session_id),
        }
    })
}

/// Whether the active window holds a persisted custom message of `kind`.
pub fn window_has(branch: &[&Entry], window: &ActiveWindow<'_>, kind: Kind) -> bool {
    branch[window.start..]
        .iter()
        .any(|entry| custom_message_of(entry, kind).is_some())
}

/// Entries that carry no conversation: they never break a boundary.
fn is_metadata(entry: &Entry) -> bool {
    match entry {
        Entry::ModelChange(_)
        | Entry::ThinkingLevelChange(_)
        | Entry::Label(_)
        | Entry::SessionInfo(_)
        | Entry::Usage(_)
        | Entry::ContextEdit(_) => true,
        Entry::Custom(custom) => !Kind::ResetMarker.matches(&custom.custom_type),
        _ => false,
    }
}

/// `resetBoundaryCommitted`: the marker of `window_id` is checkpoint-backed
/// and followed by its hidden boot and then a hidden continuation, with
/// nothing but metadata in between. Later conversation does not undo a
/// commit.
pub fn boundary_committed(branch: &[&Entry], window_id: &str) -> bool {
    let Some(marker) = reset_markers(branch)
        .into_iter()
        .rfind(|marker| marker.window_id == window_id)
    else {
        return false;
    };
    if !is_checkpoint_backed(branch, &marker) {
        return false;
    }
    let mut boot = false;
    for entry in &branch[marker.position + 1..] {
        if is_metadata(entry) {
            continue;
        }
        match entry {
            Entry::CustomMessage(custom) if !custom.display => {
                if !boot
                    && Kind::Boot.matches(&custom.custom_type)
                    && details_str(custom.details.as_ref(), "windowId") == Some(window_id)
                {
                    boot = true;
                    continue;
                }
                return boot && Kind::Continuation.matches(&custom.custom_type);
            }
            _ => return false,
        }
    }
    false
}

/// What the reset tail of a branch needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tail {
    /// No reset marker on the branch.
    NoMarker,
    /// The last marker has its boot and continuation.
    Complete,
    /// The last marker misses its boot and/or continuation, and nothing but
    /// metadata follows: re-send what is missing, boot first.
    Repair {
        /// The marker's window.
        window_id: String,
        /// Send the boot.
        boot: bool,
        /// Send the continuation.
        continuation: bool,
    },
    /// Later conversation, or misordered or duplicate artifacts: repairing
    /// would move the boundary. `/fresh-window` is the way out.
    Refused {
        /// The marker's window.
        window_id: String,
        /// Why.
        reason: &'static str,
    },
}

/// `inspectResetTail`: whether the whole suffix after the last marker is
/// safe to repair. Repair never moves a boundary or promotes a compaction.
pub fn inspect_tail(branch: &[&Entry]) -> Tail {
    let Some(marker) = reset_markers(branch).pop() else {
        return Tail::NoMarker;
    };
    let window_id = marker.window_id.to_owned();
    let refused = |reason| Tail::Refused {
        window_id: window_id.clone(),
        reason,
    };
    let (mut boot, mut continuation) = (false, false);
    for entry in &branch[marker.position + 1..] {
        if is_metadata(entry) {
            continue;
        }
        let is_own_boot = custom_message_of(entry, Kind::Boot)
            .is_some_and(|b| details_str(b.details.as_ref(), "windowId") == Some(&*window_id));
        if is_own_boot {
            if boot {
                return refused("duplicate boot after the reset marker");
            }
            if continuation {
                return refused("boot after the continuation");
            }
            boot = true;
        } else if custom_message_of(entry, Kind::Continuation).is_some() {
            if continuation {
                return refused("duplicate continuation after the reset marker");
            }
            if !boot {
                return refused("continuation before the boot");
            }
            continuation = true;
        } else if boot && continuation {
            return Tail::Complete;
        } else {
            return refused("conversation follows an incomplete reset boundary");
        }
    }
    if boot && continuation {
        Tail::Complete
    } else {
        Tail::Repair {
            window_id,
            boot: !boot,
            continuation: !continuation,
        }
    }
}

/// Whether any entry of `branch` is a reset marker.
pub fn has_marker(branch: &[&Entry]) -> bool {
    !reset_markers(branch).is_empty()
}

/// The entries of window `window_id` on `branch`: after its marker (from the
/// root for the root window) up to the next marker. `None` when the branch
/// has no such window.
pub fn window_entries<'b, 'a>(
    branch: &'b [&'a Entry],
    window_id: &str,
    session_id: &str,
) -> Option<&'b [&'a Entry]> {
    let markers = reset_markers(branch);
    let (start, index) = if window_id == root_window_id(session_id) {
        (0, None)
    } else {
        let index = markers.iter().rposition(|m| m.window_id == window_id)?;
        (markers[index].position + 1, Some(index))
    };
    let next = index.map_or(0, |i| i + 1);
    let end = markers.get(next).map_or(branch.len(), |m| m.position);
    branch.get(start..end.max(start))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use super::*;
    use crate::session::SessionFile;

    /// Entries from `(id, kind)` pairs, each the child of the one before:
    /// `user`, `checkpoint` (retain-none, empty), `compaction` (generic),
    /// `marker:<window>`, `boot:<window>`, `shownboot:<window>` (a boot
    /// shown to the user), `continuation`, `label`,
    /// `custom:<type>`, `shown` (a visible custom message).
    fn branch(spec: &[(&str, &str)]) -> SessionFile {
        let mut lines = vec![r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#.to_owned()];
        let mut parent = serde_json::Value::Null;
        for (id, kind) in spec {
            let base = format!(
                r#""id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z""#
            );
            let (kind, arg) = kind.split_once(':').unwrap_or((kind, ""));
            lines.push(match kind {
                "user" => format!(r#"{{"type":"message",{base},"message":{{"role":"user","content":"hi","timestamp":1}}}}"#),
                "checkpoint" => format!(r#"{{"type":"compaction",{base},"summary":"","firstKeptEntryId":"{id}","tokensBefore":1}}"#),
                "compaction" => format!(r#"{{"type":"compaction",{base},"summary":"s","firstKeptEntryId":"x","tokensBefore":1}}"#),
                "marker" => format!(r#"{{"type":"custom","customType":"notesoup/reset-marker","data":{{"windowId":"{arg}"}},{base}}}"#),
                "boot" => format!(r#"{{"type":"custom_message","customType":"pi-context/boot","content":"b","display":false,"details":{{"windowId":"{arg}"}},{base}}}"#),
                "shownboot" => format!(r#"{{"type":"custom_message","customType":"pi-context/boot","content":"b","display":true,"details":{{"windowId":"{arg}"}},{base}}}"#),
                "continuation" => format!(r#"{{"type":"custom_message","customType":"notesoup/continuation","content":"c","display":false,{base}}}"#),
                "shown" => format!(r#"{{"type":"custom_message","customType":"other","content":"c","display":true,{base}}}"#),
                "label" => format!(r#"{{"type":"label",{base},"targetId":"x","label":"l"}}"#),
                "custom" => format!(r#"{{"type":"custom","customType":"{arg}",{base}}}"#),
                other => panic!("unknown kind {other}"),
            });
            parent = serde_json::Value::String((*id).to_owned());
        }
        SessionFile::parse(lines.join("\n").as_bytes())
    }

    fn on_branch(file: &SessionFile) -> Vec<&Entry> {
        let index = file.index();
        let last = file.entries().last().map(Entry::id).unwrap_or("");
        index.branch(last)
    }

    #[test]
    fn committed_boundaries() {
        let cases: [(&[(&str, &str)], bool); 9] = [
            (
                &[
                    ("c", "checkpoint"),
                    ("m", "marker:w"),
                    ("n", "continuation"),
                ],
                false,
            ),
            (
                &[
                    ("c", "checkpoint"),
                    ("m", "marker:w"),
                    ("b", "shownboot:w"),
                    ("n", "continuation"),
                ],
                false,
            ),
            (
                &[
                    ("c", "checkpoint"),
                    ("m", "marker:w"),
                    ("b", "boot:w"),
                    ("n", "continuation"),
                ],
                true,
            ),
            (
                &[
                    ("c", "checkpoint"),
                    ("m", "marker:w"),
                    ("l", "label"),
                    ("b", "boot:w"),
                    ("x", "custom:other"),
                    ("n", "continuation"),
                    ("u", "user"),
                ],
                true,
            ),
            (
                &[("c", "checkpoint"), ("m", "marker:w"), ("b", "boot:w")],
                false,
            ),
            (
                &[
                    ("c", "checkpoint"),
                    ("m", "marker:w"),
                    ("u", "user"),
                    ("b", "boot:w"),
                    ("n", "continuation"),
                ],
                false,
            ),
            (
                &[
                    ("c", "checkpoint"),
                    ("m", "marker:w"),
                    ("b", "boot:other"),
                    ("n", "continuation"),
                ],
                false,
            ),
            (
                &[
                    ("c", "compaction"),
                    ("m", "marker:w"),
                    ("b", "boot:w"),
                    ("n", "continuation"),
                ],
                false,
            ),
            (
                &[
                    ("u", "user"),
                    ("m", "marker:w"),
                    ("b", "boot:w"),
                    ("n", "continuation"),
                ],
                false,
            ),
        ];
        for (spec, expect) in cases {
            let file = branch(spec);
            assert_eq!(
                boundary_committed(&on_branch(&file), "w"),
                expect,
                "{spec:?}"
            );
        }
    }

    #[test]
    fn repairable_tails() {
        let repair = |boot, continuation| Tail::Repair {
            window_id: "w".into(),
            boot,
            continuation,
        };
        let refused = |reason| Tail::Refused {
            window_id: "w".into(),
            reason,
        };
        let cases: [(&[(&str, &str)], Tail); 10] = [
            (&[("u", "user")], Tail::NoMarker),
            (
                &[("m", "marker:w"), ("b", "boot:w"), ("u", "user")],
                refused("conversation follows an incomplete reset boundary"),
            ),
            (
                &[("c", "checkpoint"), ("m", "marker:w")],
                repair(true, true),
            ),
            (
                &[("c", "checkpoint"), ("m", "marker:w"), ("l", "label")],
                repair(true, true),
            ),
            (&[("m", "marker:w"), ("b", "boot:w")], repair(false, true)),
            (
                &[
                    ("m", "marker:w"),
                    ("b", "boot:w"),
                    ("n", "continuation"),
                    ("u", "user"),
                ],
                Tail::Complete,
            ),
            (
                &[("m", "marker:w"), ("u", "user")],
                refused("conversation follows an incomplete reset boundary"),
            ),
            (
                &[("m", "marker:w"), ("n", "continuation")],
                refused("continuation before the boot"),
            ),
            (
                &[("m", "marker:w"), ("b", "boot:w"), ("d", "boot:w")],
                refused("duplicate boot after the reset marker"),
            ),
            (
                &[("m", "marker:w"), ("s", "shown")],
                refused("conversation follows an incomplete reset boundary"),
            ),
        ];
        for (spec, expect) in cases {
            let file = branch(spec);
            assert_eq!(inspect_tail(&on_branch(&file)), expect, "{spec:?}");
        }
    }

    /// The active window starts after its marker, and a boot counts for it
    /// only when it names that window (the root window: when it names this
    /// session, by its id or by the root window's id).
    #[test]
    fn the_active_window_and_its_boot() {
        let file = branch(&[
            ("u", "user"),
            ("m", "marker:pcw:s:aaaa0000"),
            ("b", "boot:pcw:s:other000"),
            ("n", "continuation"),
        ]);
        let entries = on_branch(&file);
        let window = active_window(&entries, "s");
        assert_eq!(
            (window.id.as_str(), window.start, window.previous.as_deref()),
            ("pcw:s:aaaa0000", 2, Some("pcw:s:root"))
        );
        assert_eq!(boot_window_id(entries[2]), Some("pcw:s:other000"));
        assert_eq!(
            boot_window_id(entries[3]),
            None,
            "a continuation is no boot"
        );
        assert!(
            !window_has_boot(&entries, &window, "s"),
            "another window's boot"
        );
        assert!(window_has(&entries, &window, Kind::Continuation));
        assert!(!window_has(&entries, &window, Kind::Warning));

        let own = branch(&[("m", "marker:pcw:s:aaaa0000"), ("b", "boot:pcw:s:aaaa0000")]);
        let entries = on_branch(&own);
        let window = active_window(&entries, "s");
        assert_eq!(window.start, 1);
        assert!(window_has_boot(&entries, &window, "s"));
        assert!(!window_has(&entries, &window, Kind::Continuation));

        let root = branch(&[("u", "user"), ("b", "boot:pcw:s:root")]);
        let entries = on_branch(&root);
        let window = active_window(&entries, "s");
        assert_eq!((window.start, window.marker.is_none()), (0, true));
        assert!(window_has_boot(&entries, &window, "s"));
        assert!(
            !window_has_boot(&entries, &window, "t"),
            "another session's root"
        );
        assert!(is_own_root_boot(
            Some(&serde_json::json!({"sessionId": "s", "windowId": "pcw:x:root"})),
            "s"
        ));
        assert!(!is_own_root_boot(
            Some(&serde_json::json!({"sessionId": "t", "windowId": "pcw:s:root"})),
            "s"
        ));
    }

    #[test]
    fn a_branch_has_a_marker_only_with_one() {
        assert!(has_marker(&on_branch(&branch(&[
            ("u", "user"),
            ("m", "marker:w")
        ]))));
        assert!(!has_marker(&on_branch(&branch(&[
            ("u", "user"),
            ("b", "boot:w")
        ]))));
        let hex = random_hex8();
        assert_eq!(hex.len(), 8);
        assert!(hex.bytes().all(|byte| byte.is_ascii_hexdigit()), "{hex}");
    }

    #[test]
    fn window_ids_and_ranges() {
        assert_eq!(root_window_id("0195f000-0000-7000"), "pcw:0195f000:root");
        assert_eq!(root_window_id("short"), "pcw:short:root");
        let file = branch(&[
            ("m", "marker:pcw:0195f000:aaaa0000"),
            ("u", "user"),
            ("n", "marker:pcw:0195f000:bbbb0000"),
            ("v", "user"),
        ]);
        let entries = on_branch(&file);
        let mut candidates = ["aaaa0000", "bbbb0000", "root", "cccc0000"].into_iter();
        let minted = mint_window_id("0195f000-0000", &entries, || {
            candidates.next().unwrap().to_owned()
        });
        assert_eq!(minted, "pcw:0195f000:cccc0000", "collisions are re-minted");
        assert!(random_hex8().chars().all(|c| c.is_ascii_hexdigit()));
        let window = active_window(&entries, "0195f000-0000");
        assert_eq!(window.id, "pcw:0195f000:bbbb0000");
        assert_eq!(window.previous.as_deref(), Some("pcw:0195f000:aaaa0000"));
        let ids = |slice: Option<&[&Entry]>| {
            slice.map(|s| s.iter().map(|e| e.id().to_owned()).collect::<Vec<_>>())
        };
        assert_eq!(
            ids(window_entries(
                &entries,
                "pcw:0195f000:root",
                "0195f000-0000"
            )),
            Some(vec![])
        );
        assert_eq!(
            ids(window_entries(
                &entries,
                "pcw:0195f000:aaaa0000",
                "0195f000-0000"
            )),
            Some(vec!["u".to_owned()])
        );
        assert_eq!(
            ids(window_entries(
                &entries,
                "pcw:0195f000:bbbb0000",
                "0195f000-0000"
            )),
            Some(vec!["v".to_owned()])
        );
        assert_eq!(
            ids(window_entries(&entries, "pcw:nope", "0195f000-0000")),
            None
        );
    }
}
