//! The kept, incrementally extended decode equals a fresh decode of the same
//! bytes after every change: appends cut at any byte (mid-line included),
//! forks and rewinds, compactions with preserved segments, boots, tool
//! pairs, sidechains, garbage, truncations and replacements. On a
//! transcript that only grows along its branch, no change after the first
//! decodes the file again.

use std::path::Path;

use notesoup_claude::transcript::decode::{ChainFile, decode_chain};
use notesoup_claude::transcript::incremental::{ChainDecoder, Update};
use notesoup_core::history::ItemKind;
use proptest::prelude::*;

use crate::support::append;

/// One generated row; `n` is its index, `parent` the index of the row it
/// hangs off (or `None`).
#[derive(Debug, Clone)]
enum Gen {
    User,
    Assistant {
        tools: u8,
    },
    Result {
        of: usize,
        error: bool,
    },
    Boundary {
        anchor: AnchorGen,
        kept: KeptGen,
    },
    Summary,
    /// A row whose parent is the newest boundary's anchor.
    AfterAnchor,
    /// A row whose parent is the newest boundary's first kept row.
    AfterHead,
    /// A compaction as Claude Code 2.1.332 writes it: several rows.
    Compaction {
        shape: Shape,
        kept: u8,
    },
    Boot {
        ordinal: u8,
    },
    Sidechain,
    Bookkeeping,
    Garbage,
    Untimed,
}

/// What a generated boundary names as its anchor.
#[derive(Debug, Clone, Copy)]
enum AnchorGen {
    None,
    /// An id no row has (yet: a later row may have it).
    Missing,
    /// The next row.
    Next,
    /// An earlier row.
    Earlier(usize),
}

/// What a generated boundary keeps.
#[derive(Debug, Clone, Copy)]
enum KeptGen {
    None,
    /// The last rows, listed (`preservedMessages`).
    Listed {
        count: u8,
        missing: MissingGen,
    },
    /// The last rows by their ends (`preservedSegment` only).
    Walk {
        count: u8,
        broken: MissingGen,
    },
}

/// A kept row that is not there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MissingGen {
    No,
    /// Never written.
    Gone,
    /// Written after the boundary.
    Later,
}

/// The shapes of [`Gen::Compaction`] (see tests/reference/compactions.rs).
#[derive(Debug, Clone, Copy)]
enum Shape {
    /// The kept head is Claude Code's synthetic answer to a turn cut off;
    /// the command's rows hang off it.
    OffTheHead,
    /// The last rows are kept; the rows after the summary hang off it.
    OffTheAnchor,
    /// Compacted on its own at a prompt: the prompt is kept too, attachments
    /// stand between the boundary and the summary.
    Automatic,
}

/// How a row picks its parent.
#[derive(Debug, Clone, Copy)]
enum Parent {
    Previous,
    Earlier(usize),
    Missing,
    Null,
    /// The same uuid as an earlier row.
    Duplicate(usize),
}

fn gen_missing(wild: bool) -> BoxedStrategy<MissingGen> {
    if wild {
        prop_oneof![
            2 => Just(MissingGen::No),
            1 => Just(MissingGen::Gone),
            1 => Just(MissingGen::Later),
        ]
        .boxed()
    } else {
        // Along one branch nothing arrives for an id a walk missed.
        prop_oneof![3 => Just(MissingGen::No), 1 => Just(MissingGen::Gone)].boxed()
    }
}

fn gen_boundary(wild: bool) -> impl Strategy<Value = Gen> {
    // An earlier row's id may be an earlier boundary's anchor too, which
    // decodes again.
    let earlier = if wild { 1 } else { 0 };
    let anchor = prop_oneof![
        2 => Just(AnchorGen::None),
        1 => Just(AnchorGen::Missing),
        2 => Just(AnchorGen::Next),
        earlier => any::<usize>().prop_map(AnchorGen::Earlier),
    ];
    let kept = prop_oneof![
        2 => Just(KeptGen::None),
        2 => (1u8..5, gen_missing(wild)).prop_map(|(count, missing)| KeptGen::Listed { count, missing }),
        1 => (1u8..5, gen_missing(wild)).prop_map(|(count, broken)| KeptGen::Walk { count, broken }),
    ];
    (anchor, kept).prop_map(|(anchor, kept)| Gen::Boundary { anchor, kept })
}

fn gen_row(wild: bool) -> impl Strategy<Value = (Gen, Parent)> {
    let shape = prop_oneof![
        Just(Shape::OffTheHead),
        Just(Shape::OffTheAnchor),
        Just(Shape::Automatic),
    ];
    let kind = prop_oneof![
        4 => Just(Gen::User),
        4 => (0u8..3).prop_map(|tools| Gen::Assistant { tools }),
        3 => (any::<usize>(), any::<bool>()).prop_map(|(of, error)| Gen::Result { of, error }),
        2 => gen_boundary(wild),
        1 => Just(Gen::Summary),
        1 => Just(Gen::AfterAnchor),
        1 => Just(Gen::AfterHead),
        2 => (shape, 1u8..5).prop_map(|(shape, kept)| Gen::Compaction { shape, kept }),
        1 => (1u8..4).prop_map(|ordinal| Gen::Boot { ordinal }),
        1 => Just(Gen::Sidechain),
        1 => Just(Gen::Bookkeeping),
        1 => Just(Gen::Garbage),
        1 => Just(Gen::Untimed),
    ];
    let parent = if wild {
        prop_oneof![
            8 => Just(Parent::Previous),
            1 => any::<usize>().prop_map(Parent::Earlier),
            1 => Just(Parent::Missing),
            1 => Just(Parent::Null),
            1 => any::<usize>().prop_map(Parent::Duplicate),
        ]
        .boxed()
    } else {
        Just(Parent::Previous).boxed()
    };
    (kind, parent)
}

/// The newest boundary a generated transcript wrote: its uuid, anchor and
/// first kept row.
#[derive(Default)]
struct LastBoundary {
    uuid: Option<String>,
    anchor: Option<String>,
    head: Option<String>,
}

/// The `compactMetadata` of a boundary keeping `kept` (oldest first) with
/// `anchor`: listed, or by the segment's ends only.
fn compact_metadata(anchor: Option<&str>, kept: &[String], listed: bool) -> String {
    let quote = |id: Option<&str>| id.map_or("null".to_owned(), |id| format!("\"{id}\""));
    let segment = format!(
        r#""preservedSegment":{{"headUuid":{},"anchorUuid":{},"tailUuid":{}}}"#,
        quote(kept.first().map(String::as_str)),
        quote(anchor),
        quote(kept.last().map(String::as_str))
    );
    if !listed {
        return format!(r#","compactMetadata":{{"trigger":"manual",{segment}}}"#);
    }
    let uuids: Vec<String> = kept.iter().map(|uuid| format!("\"{uuid}\"")).collect();
    format!(
        r#","compactMetadata":{{"trigger":"manual",{segment},"preservedMessages":{{"anchorUuid":{},"uuids":[{}]}}}}"#,
        quote(anchor),
        uuids.join(",")
    )
}

/// The JSONL text of generated rows.
fn render(rows: &[(Gen, Parent)], session: &str, wild: bool) -> String {
    let mut out = String::new();
    // The uuids of the rows written (not sidechain, bookkeeping or garbage),
    // in order: `Parent::Previous` names the last.
    let mut written: Vec<String> = Vec::new();
    let mut last_boundary = LastBoundary::default();
    let mut tool_ids: Vec<String> = Vec::new();
    for (n, (kind, parent)) in rows.iter().enumerate() {
        let last_kept = written.last().cloned();
        let mut uuid = format!("r{n}");
        let parent_uuid = match parent {
            Parent::Previous => last_kept.as_ref().map(|p| format!("\"{p}\"")),
            Parent::Earlier(k) if n > 0 => Some(format!("\"r{}\"", k % n)),
            Parent::Earlier(_) | Parent::Null => None,
            // A row or anchor not written yet: a later row may fill it.
            Parent::Missing => Some(match n % 3 {
                0 => format!("\"gone{n}\""),
                1 => format!("\"r{}\"", n + 1 + n % 4),
                _ => format!("\"anchor{}\"", n + 1 + n % 4),
            }),
            Parent::Duplicate(k) => {
                if n > 0 {
                    uuid = format!("r{}", k % n);
                }
                last_kept.as_ref().map(|p| format!("\"{p}\""))
            }
        };
        let parent_json = parent_uuid.clone().unwrap_or_else(|| "null".to_owned());
        // Without forks every row is timed (a first timestamp arriving
        // after the first window closed would decode again).
        let time = format!(r#""timestamp":"2026-01-01T00:00:{:02}Z","#, n % 60);
        let mut lines: Vec<String> = Vec::new();
        let mut uuids = vec![uuid.clone()];
        match kind {
            Gen::User => lines.push(format!(
                r#"{{"type":"user","uuid":"{uuid}","parentUuid":{parent_json},"isSidechain":false,{time}"message":{{"role":"user","content":"prompt {n}"}}}}"#
            )),
            Gen::Untimed if wild => lines.push(format!(
                r#"{{"type":"user","uuid":"{uuid}","parentUuid":{parent_json},"message":{{"role":"user","content":"<command-name>/x</command-name> {n}"}}}}"#
            )),
            Gen::Untimed => lines.push(format!(
                r#"{{"parentUuid":{parent_json},"type":"user","uuid":"{uuid}",{time}"message":{{"role":"user","content":"<command-name>/x</command-name> {n}"}}}}"#
            )),
            Gen::Assistant { tools } => {
                let mut blocks = vec![format!(r#"{{"type":"text","text":"answer {n}"}}"#)];
                for t in 0..*tools {
                    let id = format!("t{n}_{t}");
                    blocks.push(format!(
                        r#"{{"type":"tool_use","id":"{id}","name":"Bash","input":{{"command":"ls {n}"}}}}"#
                    ));
                    tool_ids.push(id);
                }
                lines.push(format!(
                    r#"{{"type":"assistant","uuid":"{uuid}","parentUuid":{parent_json},"isSidechain":false,{time}"message":{{"id":"m{n}","model":"claude-opus-5-5","role":"assistant","content":[{}]}}}}"#,
                    blocks.join(",")
                ));
            }
            Gen::Result { of, error } => {
                let id = if tool_ids.is_empty() {
                    "t-none".to_owned()
                } else {
                    tool_ids[of % tool_ids.len()].clone()
                };
                lines.push(format!(
                    r#"{{"type":"user","uuid":"{uuid}","parentUuid":{parent_json},{time}"message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"out {n}","is_error":{error}}}]}}}}"#
                ));
            }
            Gen::Boundary { anchor, kept } => {
                let anchor = match anchor {
                    AnchorGen::None => None,
                    AnchorGen::Missing => Some(format!("anchor{n}")),
                    AnchorGen::Next => Some(format!("r{}", n + 1)),
                    AnchorGen::Earlier(k) => Some(format!("r{}", k % n.max(1))),
                };
                let tail_of = |count: u8| -> Vec<String> {
                    let from = written.len().saturating_sub(usize::from(count));
                    written[from..].to_vec()
                };
                let missing_id = |missing: MissingGen| match missing {
                    MissingGen::No => None,
                    MissingGen::Gone => Some(format!("gone{n}")),
                    MissingGen::Later => Some(format!("r{}", n + 2)),
                };
                let (meta, head) = match kept {
                    KeptGen::None => (
                        anchor
                            .as_deref()
                            .map(|anchor| {
                                format!(
                                    r#","compactMetadata":{{"preservedSegment":{{"anchorUuid":"{anchor}"}}}}"#
                                )
                            })
                            .unwrap_or_default(),
                        None,
                    ),
                    KeptGen::Listed { count, missing } => {
                        let mut kept = tail_of(*count);
                        if let Some(id) = missing_id(*missing) {
                            kept.insert(kept.len() / 2, id);
                        }
                        (
                            compact_metadata(anchor.as_deref(), &kept, true),
                            kept.first().cloned(),
                        )
                    }
                    KeptGen::Walk { count, broken } => {
                        let mut kept = tail_of(*count);
                        if let Some(id) = missing_id(*broken) {
                            // A head the walk up from the tail never meets.
                            kept.insert(0, id);
                        }
                        (
                            compact_metadata(anchor.as_deref(), &kept, false),
                            kept.first().cloned(),
                        )
                    }
                };
                last_boundary = LastBoundary {
                    uuid: Some(uuid.clone()),
                    anchor,
                    head,
                };
                lines.push(format!(
                    r#"{{"type":"system","subtype":"compact_boundary","uuid":"{uuid}","parentUuid":null,"logicalParentUuid":{parent_json},{time}"content":"Conversation compacted"{meta}}}"#
                ));
            }
            Gen::Summary => {
                // Along one branch the summary follows its boundary.
                let parent = match &last_boundary.uuid {
                    Some(b) if wild => format!("\"{b}\""),
                    _ => parent_json.clone(),
                };
                lines.push(format!(
                    r#"{{"type":"user","uuid":"{uuid}","parentUuid":{parent},"isCompactSummary":true,{time}"message":{{"role":"user","content":"summary {n}"}}}}"#
                ));
            }
            Gen::AfterAnchor | Gen::AfterHead => {
                let named = match kind {
                    Gen::AfterAnchor => &last_boundary.anchor,
                    _ => &last_boundary.head,
                };
                let parent = match named {
                    Some(id) if wild => format!("\"{id}\""),
                    _ => parent_json.clone(),
                };
                lines.push(format!(
                    r#"{{"type":"assistant","uuid":"{uuid}","parentUuid":{parent},{time}"message":{{"id":"m{n}","model":"claude-opus-5-5","content":[{{"type":"text","text":"after {n}"}}]}}}}"#
                ));
            }
            Gen::Compaction { shape, kept } => {
                let (head, boundary, summary, after) =
                    (format!("{uuid}h"), format!("{uuid}b"), format!("{uuid}s"), format!("{uuid}c"));
                let mut kept_rows = {
                    let from = written.len().saturating_sub(usize::from(*kept));
                    written[from..].to_vec()
                };
                let mut logical = parent_json.clone();
                uuids.clear();
                if let Shape::OffTheHead = shape {
                    lines.push(format!(
                        r#"{{"type":"assistant","uuid":"{head}","parentUuid":{parent_json},"isSidechain":false,{time}"message":{{"id":"syn{n}","model":"<synthetic>","role":"assistant","content":[{{"type":"text","text":"No response requested."}}]}}}}"#
                    ));
                    uuids.push(head.clone());
                    kept_rows = vec![head.clone()];
                    logical = format!("\"{head}\"");
                }
                let meta = compact_metadata(Some(&summary), &kept_rows, true);
                lines.push(format!(
                    r#"{{"type":"system","subtype":"compact_boundary","uuid":"{boundary}","parentUuid":null,"logicalParentUuid":{logical},{time}"content":"Conversation compacted"{meta}}}"#
                ));
                uuids.push(boundary.clone());
                let mut summary_parent = boundary.clone();
                if let Shape::Automatic = shape {
                    let date = format!("{uuid}d");
                    lines.push(format!(
                        r#"{{"type":"attachment","uuid":"{date}","parentUuid":"{boundary}","isSidechain":false,{time}"attachment":{{"type":"date","date":"2026-01-01"}}}}"#
                    ));
                    uuids.push(date.clone());
                    summary_parent = date;
                }
                lines.push(format!(
                    r#"{{"type":"user","uuid":"{summary}","parentUuid":"{summary_parent}","isCompactSummary":true,{time}"message":{{"role":"user","content":"summary {n}"}}}}"#
                ));
                uuids.push(summary.clone());
                let after_parent = match shape {
                    Shape::OffTheHead => &head,
                    _ => &summary,
                };
                lines.push(format!(
                    r#"{{"type":"user","uuid":"{after}","parentUuid":"{after_parent}","isMeta":true,{time}"message":{{"role":"user","content":"<local-command-caveat>caveat {n}</local-command-caveat>"}}}}"#
                ));
                uuids.push(after);
                last_boundary = LastBoundary {
                    uuid: Some(boundary),
                    anchor: Some(summary),
                    head: kept_rows.first().cloned(),
                };
            }
            Gen::Boot { ordinal } => lines.push(format!(
                r#"{{"type":"attachment","uuid":"{uuid}","parentUuid":{parent_json},"isSidechain":false,{time}"attachment":{{"type":"hook_additional_context","hookEvent":"SessionStart","content":["<context_window>\nFirst context window id: claude:{session}:1\nCurrent context window id: claude:{session}:{ordinal}\n</context_window>"]}}}}"#
            )),
            Gen::Sidechain => lines.push(format!(
                r#"{{"type":"assistant","uuid":"side{n}","parentUuid":{parent_json},"isSidechain":true,{time}"message":{{"id":"s{n}","content":[{{"type":"text","text":"side"}}]}}}}"#
            )),
            Gen::Bookkeeping => {
                lines.push(format!(r#"{{"type":"queue-operation","operation":"enqueue","n":{n}}}"#));
            }
            Gen::Garbage => lines.push(format!("not json {n}")),
        }
        if !matches!(kind, Gen::Sidechain | Gen::Bookkeeping | Gen::Garbage) {
            written.extend(uuids);
        }
        for line in lines {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap();
}

/// A chain of an earlier, finished transcript and the growing one.
fn chain(dir: &Path, with_earlier: bool) -> Vec<ChainFile> {
    let mut files = Vec::new();
    if with_earlier {
        files.push(ChainFile {
            session_id: "s0".into(),
            path: dir.join("s0.jsonl"),
        });
    }
    files.push(ChainFile {
        session_id: "s1".into(),
        path: dir.join("s1.jsonl"),
    });
    files
}

/// Grows the newest file in pieces of the given sizes; after each piece
/// the kept decode must equal a fresh one. Returns how each update went.
fn grow_and_compare(
    text: &str,
    cuts: &[usize],
    with_earlier: bool,
) -> Result<Vec<Update>, TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let files = chain(dir.path(), with_earlier);
    if with_earlier {
        write(&files[0].path, render_earlier().as_bytes());
    }
    let newest = &files[files.len() - 1].path;
    let bytes = text.as_bytes();
    // The file does not exist yet: Claude Code creates it lazily.
    let mut kept = ChainDecoder::decode("s0", &files).unwrap();
    prop_assert_eq!(kept.transcript(), decode_chain("s0", &files).unwrap());
    let mut updates = Vec::new();
    let mut written = 0;
    for cut in cuts.iter().chain(std::iter::once(&bytes.len())) {
        let end = (written + cut).min(bytes.len());
        append(newest, &bytes[written..end]);
        written = end;
        updates.push(kept.update("s0", &files).unwrap());
        let fresh = decode_chain("s0", &files).unwrap();
        prop_assert_eq!(
            &kept.transcript(),
            &fresh,
            "after {} of {} bytes",
            written,
            bytes.len()
        );
        // Asked again without a change: unchanged and the same.
        prop_assert_eq!(kept.update("s0", &files).unwrap(), Update::Unchanged);
        prop_assert_eq!(&kept.transcript(), &fresh);
        if written == bytes.len() {
            break;
        }
    }
    Ok(updates)
}

fn render_earlier() -> String {
    let rows = [
        (Gen::Boot { ordinal: 1 }, Parent::Previous),
        (Gen::User, Parent::Previous),
        (Gen::Assistant { tools: 1 }, Parent::Previous),
        (
            Gen::Boundary {
                anchor: AnchorGen::None,
                kept: KeptGen::None,
            },
            Parent::Previous,
        ),
        (Gen::User, Parent::Previous),
    ];
    render(&rows, "s0", false)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Rows along one branch, appended in random pieces: every update after
    /// the file appears extends the kept decode, none decodes it again.
    #[test]
    fn appends_along_the_branch_extend_and_equal_a_fresh_decode(
        rows in proptest::collection::vec(gen_row(false), 1..50),
        cuts in proptest::collection::vec(1usize..300, 1..16),
        with_earlier in any::<bool>(),
    ) {
        let text = render(&rows, "s1", false);
        let updates = grow_and_compare(&text, &cuts, with_earlier)?;
        // The first append creates the file (another file than none).
        prop_assert_eq!(updates[0], Update::Decoded);
        for update in &updates[1..] {
            prop_assert_eq!(*update, Update::Extended, "{:?}", updates);
        }
    }

    /// Forks, rewinds, missing parents, reused uuids, preserved segments:
    /// whatever the kept decode does, it equals a fresh decode.
    #[test]
    fn any_append_equals_a_fresh_decode(
        rows in proptest::collection::vec(gen_row(true), 1..60),
        cuts in proptest::collection::vec(1usize..400, 1..16),
        with_earlier in any::<bool>(),
    ) {
        let text = render(&rows, "s1", true);
        grow_and_compare(&text, &cuts, with_earlier)?;
    }

    /// Truncations and replacements between appends are decoded again:
    /// nothing decoded from the old bytes is served.
    #[test]
    fn truncated_or_replaced_transcripts_equal_a_fresh_decode(
        rows in proptest::collection::vec(gen_row(true), 2..40),
        steps in proptest::collection::vec((0u8..4, 1usize..600), 1..12),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let files = chain(dir.path(), false);
        let path = &files[0].path;
        let text = render(&rows, "s1", true);
        let other = render(&rows[rows.len() / 2..], "s1", true);
        let bytes = text.as_bytes();
        write(path, &bytes[..bytes.len() / 2]);
        let mut kept = ChainDecoder::decode("s0", &files).unwrap();
        for (op, n) in steps {
            let len = std::fs::metadata(path).unwrap().len() as usize;
            match op {
                // Append the next bytes of the text (or wrap around).
                0 => {
                    let from = len.min(bytes.len());
                    let to = (from + n).min(bytes.len());
                    append(path, &bytes[from..to]);
                }
                // Truncate.
                1 => {
                    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
                    file.set_len((len.saturating_sub(n)) as u64).unwrap();
                }
                // Replace with another file (another inode), renamed over.
                2 => {
                    let tmp = dir.path().join("tmp");
                    write(&tmp, &other.as_bytes()[..n.min(other.len())]);
                    std::fs::rename(&tmp, path).unwrap();
                }
                // Rewrite in place with a different head, then grow.
                _ => {
                    let mut changed = bytes[..n.min(bytes.len())].to_vec();
                    if let Some(first) = changed.first_mut() {
                        *first = b' ';
                    }
                    changed.extend_from_slice(b"{\"type\":\"user\",\"uuid\":\"late\",\"message\":{\"content\":\"late\"}}\n");
                    write(path, &changed);
                }
            }
            kept.update("s0", &files).unwrap();
            prop_assert_eq!(kept.transcript(), decode_chain("s0", &files).unwrap());
        }
    }

    /// A first decode adds its rows a piece at a time while it parses the
    /// next: in pieces of any size (forks back into an earlier piece send
    /// it back to add every row at once), it equals a decode of all rows
    /// at once, and what it keeps extends as a fresh decode does.
    #[test]
    fn a_first_decode_by_pieces_equals_a_decode_at_once(
        rows in proptest::collection::vec(gen_row(true), 1..60),
        piece in 1usize..1_500,
        kept_share in 1usize..=4,
        with_earlier in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let files = chain(dir.path(), with_earlier);
        if with_earlier {
            write(&files[0].path, render_earlier().as_bytes());
        }
        let newest = &files[files.len() - 1].path;
        let text = render(&rows, "s1", true);
        let bytes = text.as_bytes();
        let first = bytes.len() * kept_share / 4;
        write(newest, &bytes[..first]);
        let mut kept = ChainDecoder::decode_in_pieces("s0", &files, piece).unwrap();
        prop_assert_eq!(kept.transcript(), decode_chain("s0", &files).unwrap());
        append(newest, &bytes[first..]);
        kept.update("s0", &files).unwrap();
        prop_assert_eq!(kept.transcript(), decode_chain("s0", &files).unwrap());
    }
}

/// A fork back into an earlier piece: the rows added piece by piece are
/// forgotten and every row is added at once, the other branch off it.
#[test]
fn a_fork_into_an_earlier_piece_decodes_every_row_at_once() {
    let rows = [
        (Gen::User, Parent::Previous),
        (Gen::Assistant { tools: 1 }, Parent::Previous),
        (
            Gen::Result {
                of: 1,
                error: false,
            },
            Parent::Previous,
        ),
        (Gen::User, Parent::Previous),
        (Gen::Assistant { tools: 0 }, Parent::Previous),
        (Gen::User, Parent::Earlier(1)),
        (Gen::Assistant { tools: 0 }, Parent::Previous),
    ];
    let text = render(&rows, "s1", true);
    let dir = tempfile::tempdir().unwrap();
    let files = chain(dir.path(), true);
    write(&files[0].path, render_earlier().as_bytes());
    write(&files[1].path, text.as_bytes());
    let at_once = decode_chain("s0", &files).unwrap();
    assert!(
        !at_once.off_branch.is_empty(),
        "the fork leaves rows off the branch"
    );
    for piece in [1, 64, 200, text.len()] {
        let by_pieces = ChainDecoder::decode_in_pieces("s0", &files, piece).unwrap();
        assert_eq!(
            by_pieces.into_transcript(),
            at_once,
            "pieces of {piece} bytes"
        );
    }
}

#[test]
fn a_row_decoded_before_its_newline_waits_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let files = chain(dir.path(), false);
    let path = &files[0].path;
    let row = r#"{"type":"user","uuid":"u1","parentUuid":null,"timestamp":"2026-01-01T00:00:00Z","message":{"content":"one"}}"#;
    write(path, row.as_bytes());
    let mut kept = ChainDecoder::decode("s0", &files).unwrap();
    let seqs = |t: &notesoup_core::history::Transcript| t.highest_seq;
    assert_eq!(seqs(&kept.transcript()), 1);
    // Its newline and the next row: extended, not decoded again.
    append(
        path,
        b"\n{\"type\":\"user\",\"uuid\":\"u2\",\"parentUuid\":\"u1\",\"message\":{\"content\":\"two\"}}\n",
    );
    assert_eq!(kept.update("s0", &files).unwrap(), Update::Extended);
    assert_eq!(kept.transcript(), decode_chain("s0", &files).unwrap());
    assert_eq!(seqs(&kept.transcript()), 2);
    // The same row continued on its line is another line: decoded again.
    append(
        path,
        br#"{"type":"user","uuid":"u3","parentUuid":"u2","message":{"content":"three"}}"#,
    );
    assert_eq!(kept.update("s0", &files).unwrap(), Update::Extended);
    append(path, b"garbage\n");
    assert_eq!(kept.update("s0", &files).unwrap(), Update::Decoded);
    assert_eq!(kept.transcript(), decode_chain("s0", &files).unwrap());
    assert_eq!(seqs(&kept.transcript()), 2);
}

/// Rows appended that a kept walk ended at (a parent or an anchor it
/// missed) put earlier rows on the branch: the chain is decoded again.
#[test]
fn a_row_or_anchor_for_a_parent_the_walk_missed_decodes_again() {
    let user = |uuid: &str, parent: &str| {
        format!(
            r#"{{"type":"user","uuid":"{uuid}","parentUuid":{parent},"timestamp":"2026-01-01T00:00:00Z","message":{{"content":"text of {uuid}"}}}}"#
        ) + "\n"
    };
    let boundary = r#"{"type":"system","subtype":"compact_boundary","uuid":"b","parentUuid":null,"logicalParentUuid":"r1","compactMetadata":{"preservedSegment":{"anchorUuid":"gone"}}}"#.to_owned() + "\n";
    for filler in [user("gone", "null"), boundary] {
        let dir = tempfile::tempdir().unwrap();
        let files = chain(dir.path(), false);
        let path = &files[0].path;
        write(
            path,
            (user("r1", "null") + &user("r2", r#""gone""#)).as_bytes(),
        );
        let mut kept = ChainDecoder::decode("s0", &files).unwrap();
        append(path, (filler + &user("r3", r#""r2""#)).as_bytes());
        assert_eq!(kept.update("s0", &files).unwrap(), Update::Decoded);
        let fresh = decode_chain("s0", &files).unwrap();
        assert_eq!(kept.transcript(), fresh);
        // The filler pulled an earlier row onto the branch.
        assert!(fresh.off_branch.len() <= 1, "{fresh:?}");
    }
}

/// A newest transcript that cannot be opened for another reason than
/// being absent (or not a regular file) is an error, not an empty session.
#[test]
fn a_newest_transcript_that_cannot_be_opened_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain");
    write(&plain, b"a file, not a directory");
    let files = chain(&plain, false);
    assert!(ChainDecoder::decode("s0", &files).is_err());
    assert!(ChainDecoder::decode_in_pieces("s0", &files, 7).is_err());
    // Absent, or a directory, is an empty session.
    let files = chain(dir.path(), false);
    assert!(ChainDecoder::decode("s0", &files).is_ok());
    std::fs::create_dir(&files[0].path).unwrap();
    assert!(ChainDecoder::decode("s0", &files).is_ok());
}

/// Sub-agent calls reach the kept decode as they reach a fresh one: the
/// recorded session with a sub-agent, grown a line at a time (the spawning
/// call's result arrives in a later append than the call).
#[test]
fn sub_agent_calls_are_kept_as_a_fresh_decode_has_them() {
    let session = "82b232c0-2a2f-40a3-ab23-c6865a637a58";
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(crate::support::fixture(&format!(
        "subagent/{session}.jsonl"
    )))
    .unwrap();
    let path = dir.path().join(format!("{session}.jsonl"));
    write(&path, b"");
    let files = [ChainFile {
        session_id: session.into(),
        path: path.clone(),
    }];
    let mut kept = ChainDecoder::decode(session, &files).unwrap();
    // The sub-agent ran after the server's first decode: an append that
    // brings a result reads its calls.
    let agents = dir.path().join(session).join("subagents");
    std::fs::create_dir_all(&agents).unwrap();
    let recorded = crate::support::fixture(&format!("subagent/{session}/subagents"));
    for entry in std::fs::read_dir(recorded).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), agents.join(entry.file_name())).unwrap();
    }
    let mut written = 0;
    for end in crate::decode::line_ends(&bytes) {
        append(&path, &bytes[written..end]);
        written = end;
        kept.update(session, &files).unwrap();
        assert_eq!(kept.transcript(), decode_chain(session, &files).unwrap());
    }
    let nested = kept
        .transcript()
        .windows
        .iter()
        .flat_map(|window| &window.items)
        .filter(|item| {
            matches!(&item.kind, ItemKind::ToolResult(result) if result.nested_calls.is_some())
        })
        .count();
    assert_eq!(nested, 1);
}

/// Every recorded compaction grown as Claude Code wrote it, a line at a
/// time and in pieces cut mid-line: after each append the kept decode
/// equals a fresh one. Where the compaction kept rows (relinked, they are
/// walked on from the kept state) it only ever extends; an automatic
/// compaction whose boundary names a row before the newest as its logical
/// parent leaves the rows after that one off the branch, which decodes
/// again.
#[test]
fn recorded_compactions_extend_and_equal_a_fresh_decode() {
    for (name, _) in crate::decode::COMPACTIONS {
        let relinked = name.starts_with("kept-") || name == "compact-after-tool-calls";
        let (session, recorded) = crate::decode::compaction(name);
        let bytes = std::fs::read(&recorded.path).unwrap();
        for piece in [None, Some(977)] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.jsonl");
            write(&path, b"");
            let files = [ChainFile {
                session_id: session.clone(),
                path: path.clone(),
            }];
            let mut kept = ChainDecoder::decode(&session, &files).unwrap();
            let ends = match piece {
                None => crate::decode::line_ends(&bytes),
                Some(piece) => (1..=bytes.len().div_ceil(piece))
                    .map(|n| (n * piece).min(bytes.len()))
                    .collect(),
            };
            let mut written = 0;
            for end in ends {
                append(&path, &bytes[written..end]);
                written = end;
                let update = kept.update(&session, &files).unwrap();
                if relinked {
                    assert_eq!(update, Update::Extended, "{name} after {end} bytes");
                }
                assert_eq!(
                    kept.transcript(),
                    decode_chain(&session, &files).unwrap(),
                    "{name} after {end} bytes"
                );
            }
        }
    }
}

/// Appends `lines` one at a time to a fresh transcript; after each the
/// kept decode equals a fresh one. Returns how each update went.
fn grow_by_lines(lines: &[String]) -> Vec<Update> {
    let dir = tempfile::tempdir().unwrap();
    let files = chain(dir.path(), false);
    let path = &files[0].path;
    write(path, b"");
    let mut kept = ChainDecoder::decode("s0", &files).unwrap();
    let mut updates = Vec::new();
    for line in lines {
        append(path, format!("{line}\n").as_bytes());
        updates.push(kept.update("s0", &files).unwrap());
        assert_eq!(
            kept.transcript(),
            decode_chain("s0", &files).unwrap(),
            "after {line}"
        );
    }
    updates
}

fn row(kind: &str, uuid: &str, parent: Option<&str>, extra: &str) -> String {
    let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"{kind}","uuid":"{uuid}","parentUuid":{parent},"timestamp":"2026-01-01T00:00:00Z"{extra}}}"#
    )
}

fn text_row(uuid: &str, parent: Option<&str>) -> String {
    row(
        "user",
        uuid,
        parent,
        &format!(r#","message":{{"content":"text of {uuid}"}}"#),
    )
}

/// A kept row that arrives after its boundary makes the boundary relink
/// from then on (Claude Code relinks nothing while a listed row is
/// missing), which moves rows decoded before onto the branch: the chain is
/// decoded again.
#[test]
fn a_kept_row_written_after_its_boundary_decodes_again() {
    let boundary = row(
        "system",
        "b",
        None,
        r#","subtype":"compact_boundary","logicalParentUuid":"h","compactMetadata":{"preservedMessages":{"anchorUuid":"s","uuids":["h","late"]}}"#,
    );
    let summary = row(
        "user",
        "s",
        Some("b"),
        r#","isCompactSummary":true,"message":{"content":"summary"}"#,
    );
    let lines = [
        text_row("u1", None),
        text_row("h", Some("u1")),
        boundary,
        summary,
        text_row("c", Some("h")),
        text_row("late", Some("c")),
    ];
    let updates = grow_by_lines(&lines);
    assert_eq!(updates.last(), Some(&Update::Decoded), "{updates:?}");
    // Before the late row, nothing relinked: the boundary is off the branch.
    let dir = tempfile::tempdir().unwrap();
    let files = chain(dir.path(), false);
    write(&files[0].path, (lines[..5].join("\n") + "\n").as_bytes());
    assert_eq!(decode_chain("s0", &files).unwrap().windows.len(), 1);
    write(&files[0].path, (lines.join("\n") + "\n").as_bytes());
    assert_eq!(decode_chain("s0", &files).unwrap().windows.len(), 2);
}

/// Rows hanging off an anchor that names no row, written after the
/// boundary's summary (which then stands in for the anchor), extend the
/// kept decode.
#[test]
fn rows_off_an_anchor_that_names_no_row_extend() {
    let lines = [
        text_row("u1", None),
        text_row("a1", Some("u1")),
        row(
            "system",
            "b",
            None,
            r#","subtype":"compact_boundary","logicalParentUuid":"a1","compactMetadata":{"preservedSegment":{"headUuid":"a1","anchorUuid":"gone","tailUuid":"a1"}}"#,
        ),
        row(
            "user",
            "s",
            Some("b"),
            r#","isCompactSummary":true,"message":{"content":"summary"}"#,
        ),
        text_row("c", Some("gone")),
        text_row("d", Some("c")),
    ];
    let updates = grow_by_lines(&lines);
    assert!(
        updates.iter().all(|update| *update == Update::Extended),
        "{updates:?}"
    );
}

/// A transcript whose second row is longer than what is left of the kept
/// head (4096 bytes) after the first, its text ending in `last`.
fn past_the_head(last: &str) -> String {
    let long = |uuid: &str, parent: Option<&str>, text: &str| {
        row(
            "user",
            uuid,
            parent,
            &format!(r#","message":{{"content":"{}{text}"}}"#, "x".repeat(3000)),
        )
    };
    [long("r1", None, ""), long("r2", Some("r1"), last)].join("\n") + "\n"
}

/// Another file renamed over the transcript, or the transcript rewritten
/// in place, is decoded again even when it starts with the same 4096 bytes
/// as before: a longer file of another inode (another file, whatever its
/// head), or the same inode at the length decoded (nothing was appended,
/// so something was rewritten).
#[test]
fn a_transcript_replaced_past_its_head_decodes_again() {
    for rename in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let files = chain(dir.path(), false);
        let path = &files[0].path;
        write(path, past_the_head("old").as_bytes());
        let mut kept = ChainDecoder::decode("s0", &files).unwrap();
        let mut new = past_the_head("new");
        if rename {
            new += &(text_row("r3", Some("r2")) + "\n");
            let other = dir.path().join("other");
            write(&other, new.as_bytes());
            std::fs::rename(&other, path).unwrap();
        } else {
            write(path, new.as_bytes());
        }
        assert_eq!(kept.update("s0", &files).unwrap(), Update::Decoded);
        let fresh = decode_chain("s0", &files).unwrap();
        assert_eq!(kept.transcript(), fresh, "renamed: {rename}");
        assert!(format!("{fresh:?}").contains("xnew"));
    }
}

/// A chain that gains a transcript, or whose earlier transcript changed,
/// is decoded again.
#[test]
fn a_chain_that_changes_before_its_newest_file_decodes_again() {
    let dir = tempfile::tempdir().unwrap();
    let both = chain(dir.path(), true);
    write(&both[0].path, render_earlier().as_bytes());
    write(&both[1].path, (text_row("n1", None) + "\n").as_bytes());
    // The newest alone, then with the transcript before it.
    let mut kept = ChainDecoder::decode("s0", &both[1..]).unwrap();
    assert_eq!(kept.update("s0", &both).unwrap(), Update::Decoded);
    assert_eq!(kept.transcript(), decode_chain("s0", &both).unwrap());
    assert_eq!(kept.update("s0", &both).unwrap(), Update::Unchanged);
    // The earlier transcript gains a row.
    append(&both[0].path, (text_row("e9", None) + "\n").as_bytes());
    assert_eq!(kept.update("s0", &both).unwrap(), Update::Decoded);
    let fresh = decode_chain("s0", &both).unwrap();
    assert_eq!(kept.transcript(), fresh);
    assert!(format!("{fresh:?}").contains("text of e9"));
}

/// The generation changes with the decoded transcript: a decode again and
/// a row appended change it; half a line appended does not.
#[test]
fn the_generation_changes_when_the_transcript_does() {
    let dir = tempfile::tempdir().unwrap();
    let files = chain(dir.path(), false);
    let path = &files[0].path;
    write(path, (text_row("u1", None) + "\n").as_bytes());
    let mut kept = ChainDecoder::decode("s0", &files).unwrap();
    let first = kept.generation();
    let line = text_row("u2", Some("u1")) + "\n";
    let (half, rest) = line.split_at(line.len() / 2);
    append(path, half.as_bytes());
    assert_eq!(kept.update("s0", &files).unwrap(), Update::Extended);
    assert_eq!(kept.generation(), first);
    append(path, rest.as_bytes());
    assert_eq!(kept.update("s0", &files).unwrap(), Update::Extended);
    let extended = kept.generation();
    assert_ne!(extended, first);
    write(path, (text_row("v1", None) + "\n").as_bytes());
    assert_eq!(kept.update("s0", &files).unwrap(), Update::Decoded);
    assert_ne!(kept.generation(), extended);
    assert_eq!(kept.transcript(), decode_chain("s0", &files).unwrap());
}

/// A kept decode's debug form names where the decode stands, never the
/// transcript's text (it may be tens of megabytes).
#[test]
fn a_kept_decode_debugs_without_its_text() {
    let dir = tempfile::tempdir().unwrap();
    let files = chain(dir.path(), false);
    write(&files[0].path, (text_row("u1", None) + "\n").as_bytes());
    let kept = ChainDecoder::decode("s0", &files).unwrap();
    let debug = format!("{kept:?}");
    let read = std::fs::metadata(&files[0].path).unwrap().len();
    assert!(debug.contains("highest_seq: 1"), "{debug}");
    assert!(debug.contains(&format!("read: {read}, ")), "{debug}");
    assert!(!debug.contains("text of u1"), "{debug}");
}
