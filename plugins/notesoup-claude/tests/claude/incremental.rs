//! The kept, incrementally extended decode equals a fresh decode of the same
//! bytes after every change: appends cut at any byte (mid-line included),
//! forks and rewinds, compactions with preserved segments, boots, tool
//! pairs, sidechains, garbage, truncations and replacements. On a
//! transcript that only grows along its branch, no change after the first
//! decodes the file again.

use std::io::Write;
use std::path::Path;

use notesoup_claude::transcript::decode::{ChainFile, decode_chain};
use notesoup_claude::transcript::incremental::{ChainDecoder, Update};
use notesoup_core::history::ItemKind;
use proptest::prelude::*;

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
        anchor: bool,
    },
    Summary,
    /// A row whose parent is the newest boundary's anchor.
    AfterAnchor,
    Boot {
        ordinal: u8,
    },
    Sidechain,
    Bookkeeping,
    Garbage,
    Untimed,
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

fn gen_row(wild: bool) -> impl Strategy<Value = (Gen, Parent)> {
    let kind = prop_oneof![
        4 => Just(Gen::User),
        4 => (0u8..3).prop_map(|tools| Gen::Assistant { tools }),
        3 => (any::<usize>(), any::<bool>()).prop_map(|(of, error)| Gen::Result { of, error }),
        1 => any::<bool>().prop_map(move |anchor| Gen::Boundary { anchor: anchor && wild }),
        1 => Just(Gen::Summary),
        1 => Just(Gen::AfterAnchor),
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

/// The JSONL text of generated rows.
fn render(rows: &[(Gen, Parent)], session: &str, wild: bool) -> String {
    let mut out = String::new();
    let mut last_kept: Option<usize> = None;
    let mut last_boundary: Option<usize> = None;
    let mut tool_ids: Vec<String> = Vec::new();
    for (n, (kind, parent)) in rows.iter().enumerate() {
        let mut uuid = format!("r{n}");
        let parent_uuid = match parent {
            Parent::Previous => last_kept.map(|p| format!("\"r{p}\"")),
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
                last_kept.map(|p| format!("\"r{p}\""))
            }
        };
        let parent_json = parent_uuid.clone().unwrap_or_else(|| "null".to_owned());
        // Without forks every row is timed (a first timestamp arriving
        // after the first window closed would decode again).
        let time = format!(r#""timestamp":"2026-01-01T00:00:{:02}Z","#, n % 60);
        let line = match kind {
            Gen::User => format!(
                r#"{{"type":"user","uuid":"{uuid}","parentUuid":{parent_json},"isSidechain":false,{time}"message":{{"role":"user","content":"prompt {n}"}}}}"#
            ),
            Gen::Untimed if wild => format!(
                r#"{{"type":"user","uuid":"{uuid}","parentUuid":{parent_json},"message":{{"role":"user","content":"<command-name>/x</command-name> {n}"}}}}"#
            ),
            Gen::Untimed => format!(
                r#"{{"parentUuid":{parent_json},"type":"user","uuid":"{uuid}",{time}"message":{{"role":"user","content":"<command-name>/x</command-name> {n}"}}}}"#
            ),
            Gen::Assistant { tools } => {
                let mut blocks = vec![format!(r#"{{"type":"text","text":"answer {n}"}}"#)];
                for t in 0..*tools {
                    let id = format!("t{n}_{t}");
                    blocks.push(format!(
                        r#"{{"type":"tool_use","id":"{id}","name":"Bash","input":{{"command":"ls {n}"}}}}"#
                    ));
                    tool_ids.push(id);
                }
                format!(
                    r#"{{"type":"assistant","uuid":"{uuid}","parentUuid":{parent_json},"isSidechain":false,{time}"message":{{"id":"m{n}","model":"claude-opus-5-5","role":"assistant","content":[{}]}}}}"#,
                    blocks.join(",")
                )
            }
            Gen::Result { of, error } => {
                let id = if tool_ids.is_empty() {
                    "t-none".to_owned()
                } else {
                    tool_ids[of % tool_ids.len()].clone()
                };
                format!(
                    r#"{{"type":"user","uuid":"{uuid}","parentUuid":{parent_json},{time}"message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"out {n}","is_error":{error}}}]}}}}"#
                )
            }
            Gen::Boundary { anchor } => {
                last_boundary = Some(n);
                let meta = if *anchor {
                    format!(
                        r#","compactMetadata":{{"preservedSegment":{{"anchorUuid":"anchor{n}"}}}}"#
                    )
                } else {
                    String::new()
                };
                format!(
                    r#"{{"type":"system","subtype":"compact_boundary","uuid":"{uuid}","parentUuid":null,"logicalParentUuid":{parent_json},{time}"content":"Conversation compacted"{meta}}}"#
                )
            }
            Gen::Summary => {
                // Along one branch the summary follows its boundary.
                let parent = match last_boundary {
                    Some(b) if wild => format!("\"r{b}\""),
                    _ => parent_json.clone(),
                };
                format!(
                    r#"{{"type":"user","uuid":"{uuid}","parentUuid":{parent},"isCompactSummary":true,{time}"message":{{"role":"user","content":"summary {n}"}}}}"#
                )
            }
            Gen::AfterAnchor => {
                let parent = match last_boundary {
                    Some(b) if wild => format!("\"anchor{b}\""),
                    _ => parent_json.clone(),
                };
                format!(
                    r#"{{"type":"assistant","uuid":"{uuid}","parentUuid":{parent},{time}"message":{{"id":"m{n}","model":"claude-opus-5-5","content":[{{"type":"text","text":"after {n}"}}]}}}}"#
                )
            }
            Gen::Boot { ordinal } => format!(
                r#"{{"type":"attachment","uuid":"{uuid}","parentUuid":{parent_json},"isSidechain":false,{time}"attachment":{{"type":"hook_additional_context","hookEvent":"SessionStart","content":["<context_window>\nFirst context window id: claude:{session}:1\nCurrent context window id: claude:{session}:{ordinal}\n</context_window>"]}}}}"#
            ),
            Gen::Sidechain => format!(
                r#"{{"type":"assistant","uuid":"side{n}","parentUuid":{parent_json},"isSidechain":true,{time}"message":{{"id":"s{n}","content":[{{"type":"text","text":"side"}}]}}}}"#
            ),
            Gen::Bookkeeping => {
                format!(r#"{{"type":"queue-operation","operation":"enqueue","n":{n}}}"#)
            }
            Gen::Garbage => format!("not json {n}"),
        };
        if !matches!(kind, Gen::Sidechain | Gen::Bookkeeping | Gen::Garbage) {
            last_kept = Some(n);
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap();
}

fn append(path: &Path, bytes: &[u8]) {
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .unwrap();
    file.write_all(bytes).unwrap();
    file.flush().unwrap();
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
        (Gen::Boundary { anchor: false }, Parent::Previous),
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
    for end in memchr_ends(&bytes) {
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

/// The end of every line of `bytes`, its newline included.
fn memchr_ends(bytes: &[u8]) -> Vec<usize> {
    bytes
        .iter()
        .enumerate()
        .filter(|(_, byte)| **byte == b'\n')
        .map(|(at, _)| at + 1)
        .collect()
}
