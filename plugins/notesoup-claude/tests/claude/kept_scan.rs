//! The boot scan kept between hooks equals a fresh backward scan of the
//! same bytes after every change: appends cut at any byte (mid-line
//! included), boots and boundaries on and off the main thread, garbage,
//! truncations, in-place rewrites of the head and replacements.

use std::io::Write;

use notesoup_claude::transcript::scan::{
    BootScan, KeptScan, boot_scan, boot_scan_kept, last_reply, reply_written,
};
use proptest::prelude::*;

use crate::support::append;

/// One generated row.
#[derive(Debug, Clone)]
enum Gen {
    Boot {
        ordinal: u8,
        sidechain: bool,
    },
    Boundary {
        sidechain: bool,
    },
    /// A SessionStart context that is not a notesoup boot.
    OtherContext,
    Plain,
    Garbage,
}

fn row() -> impl Strategy<Value = Gen> {
    prop_oneof![
        (1u8..9, any::<bool>()).prop_map(|(ordinal, sidechain)| Gen::Boot { ordinal, sidechain }),
        any::<bool>().prop_map(|sidechain| Gen::Boundary { sidechain }),
        Just(Gen::OtherContext),
        Just(Gen::Plain),
        Just(Gen::Plain),
        Just(Gen::Garbage),
    ]
}

fn line(row: &Gen, n: usize) -> String {
    match row {
        Gen::Boot { ordinal, sidechain } => format!(
            r#"{{"type":"attachment","uuid":"b{n}","isSidechain":{sidechain},"attachment":{{"type":"hook_additional_context","hookEvent":"SessionStart","content":["<context_window>\nAgent name: claude (brain: claude)\nFirst context window id: claude:s{n}:1\nCurrent context window id: claude:s{n}:{ordinal}\n</context_window>"]}}}}"#
        ),
        Gen::Boundary { sidechain } => format!(
            r#"{{"type":"system","subtype":"compact_boundary","uuid":"c{n}","parentUuid":null,"isSidechain":{sidechain}}}"#
        ),
        Gen::OtherContext => format!(
            r#"{{"type":"attachment","uuid":"o{n}","isSidechain":false,"attachment":{{"type":"hook_additional_context","hookEvent":"SessionStart","content":["another plugin's context"]}}}}"#
        ),
        Gen::Plain => format!(
            r#"{{"type":"user","uuid":"u{n}","isSidechain":false,"message":{{"role":"user","content":"prompt {n} {}"}}}}"#,
            "x".repeat(n % 7 * 900)
        ),
        Gen::Garbage => "{torn compact_boundary hook_additional_context".to_owned(),
    }
}

/// A temp dir and the path of `t.jsonl` in it (not written yet).
fn temp_transcript() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    (dir, path)
}

/// A transcript's first line: a main-thread boot of window `ordinal`.
fn boot_line(ordinal: u8) -> String {
    line(
        &Gen::Boot {
            ordinal,
            sidechain: false,
        },
        0,
    )
}

/// What happens to the transcript between two hooks.
#[derive(Debug, Clone)]
enum Change {
    /// The next `bytes` of the generated text are appended.
    Append { bytes: usize },
    /// The file is cut back to `keep` of its bytes.
    Truncate { keep: usize },
    /// The first byte is rewritten in place (same length, same inode).
    RewriteHead,
    /// Another file (the same text so far) is renamed over it.
    Replace,
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        6 => (1usize..6_000).prop_map(|bytes| Change::Append { bytes }),
        1 => (0usize..4_000).prop_map(|keep| Change::Truncate { keep }),
        1 => Just(Change::RewriteHead),
        1 => Just(Change::Replace),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn the_kept_scan_equals_a_fresh_scan_after_every_change(
        rows in prop::collection::vec(row(), 0..40),
        changes in prop::collection::vec(change(), 1..30),
    ) {
        let (dir, path) = temp_transcript();
        let text: String = rows
            .iter()
            .enumerate()
            .map(|(n, row)| line(row, n) + "\n")
            .collect();
        let text = text.as_bytes();
        std::fs::write(&path, b"").unwrap();
        let mut written = 0;
        let mut kept: Option<KeptScan> = None;
        for change in changes {
            let change_name = format!("{change:?}");
            match change {
                Change::Append { bytes } => {
                    let end = (written + bytes).min(text.len());
                    append(&path, &text[written..end]);
                    written = end;
                }
                Change::Truncate { keep } => {
                    written = written.min(keep);
                    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
                    file.set_len(written as u64).unwrap();
                }
                Change::RewriteHead => {
                    if written > 0 {
                        let mut bytes = std::fs::read(&path).unwrap();
                        bytes[0] = if bytes[0] == b'{' { b' ' } else { b'{' };
                        let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
                        file.write_all(&bytes).unwrap();
                    }
                }
                Change::Replace => {
                    let other = dir.path().join("other.jsonl");
                    std::fs::write(&other, std::fs::read(&path).unwrap()).unwrap();
                    std::fs::rename(&other, &path).unwrap();
                }
            }
            let (scan, next) = boot_scan_kept(&path, kept.as_ref()).unwrap();
            prop_assert_eq!(&scan, &boot_scan(&path).unwrap(), "after {:?}", change_name);
            prop_assert!(next.is_some());
            // What is kept for the next run is what a scan afresh keeps.
            prop_assert_eq!(&next, &boot_scan_kept(&path, None).unwrap().1, "after {:?}", change_name);
            kept = next;
        }
    }
}

#[test]
fn a_kept_scan_reads_only_what_was_appended() {
    let (dir, path) = temp_transcript();
    let boot = boot_line(2) + "\n";
    let boundary = line(&Gen::Boundary { sidechain: false }, 1) + "\n";
    std::fs::write(&path, &boot).unwrap();
    let (scan, kept) = boot_scan_kept(&path, None).unwrap();
    assert!(scan.in_live_window);
    assert_eq!(scan.last_boot.as_ref().unwrap().current.ordinal, 2);
    // Kept across lines longer than the probes.
    let long = line(&Gen::Plain, 6) + "\n";
    append(&path, long.repeat(3).as_bytes());
    let (_, kept) = boot_scan_kept(&path, kept.as_ref()).unwrap();
    append(&path, boundary.as_bytes());
    let (scan, _) = boot_scan_kept(&path, kept.as_ref()).unwrap();
    assert_eq!(
        scan,
        BootScan {
            in_live_window: false,
            boundaries_after: 1,
            ..scan.clone()
        }
    );
    assert_eq!(scan, boot_scan(&path).unwrap());
    assert_eq!(
        boot_scan_kept(&dir.path().join("none.jsonl"), kept.as_ref()).unwrap(),
        (BootScan::default(), None)
    );
}

#[test]
fn a_torn_last_line_is_read_but_not_kept() {
    let (_dir, path) = temp_transcript();
    let boundary = line(&Gen::Boundary { sidechain: false }, 1);
    // The boundary row has no newline yet: it counts now, and it is read
    // again (not counted twice) once finished.
    std::fs::write(&path, &boundary).unwrap();
    let (scan, kept) = boot_scan_kept(&path, None).unwrap();
    assert_eq!(scan.boundaries_after, 1);
    append(&path, b"\n");
    let (scan, kept) = boot_scan_kept(&path, kept.as_ref()).unwrap();
    assert_eq!(scan.boundaries_after, 1);
    let (again, _) = boot_scan_kept(&path, kept.as_ref()).unwrap();
    assert_eq!(again, scan);
}

/// Two transcripts of one length, with and without a boundary in the
/// middle: the text around a middle line, a plain middle and a boundary of
/// the same length. Only what no probe covers differs.
fn probed_pair() -> (impl Fn(&str) -> String, String, String) {
    let boot = boot_line(1);
    let boundary = line(&Gen::Boundary { sidechain: false }, 1);
    let long = format!(
        r#"{{"type":"user","uuid":"long","content":"{}"}}"#,
        "p".repeat(10_000)
    );
    let plain = format!(
        r#"{{"type":"user","uuid":"x","pad":"{}"}}"#,
        "q".repeat(boundary.len() - r#"{"type":"user","uuid":"x","pad":""}"#.len())
    );
    assert_eq!(plain.len(), boundary.len());
    let text = move |middle: &str| format!("{boot}\n{long}\n{middle}\n{long}\n");
    (text, plain, boundary)
}

/// The plain one of the probed pair written at `path` and scanned: the
/// text around a middle line, the boundary middle, and the scan with what
/// it kept.
fn plain_scanned(
    path: &std::path::Path,
) -> (
    impl Fn(&str) -> String,
    String,
    (BootScan, Option<KeptScan>),
) {
    let (text, plain, boundary) = probed_pair();
    std::fs::write(path, text(&plain)).unwrap();
    let scanned = boot_scan_kept(path, None).unwrap();
    (text, boundary, scanned)
}

#[test]
fn a_replaced_transcript_is_scanned_again_even_when_its_probes_match() {
    let (dir, path) = temp_transcript();
    let (text, boundary, (_, kept)) = plain_scanned(&path);
    let other = dir.path().join("other.jsonl");
    std::fs::write(&other, text(&boundary)).unwrap();
    std::fs::rename(&other, &path).unwrap();
    let (scan, _) = boot_scan_kept(&path, kept.as_ref()).unwrap();
    assert_eq!(scan.boundaries_after, 1);
    assert_eq!(scan, boot_scan(&path).unwrap());
}

#[test]
fn a_transcript_that_cannot_be_opened_is_an_error_and_no_file_is_empty() {
    let dir = tempfile::tempdir().unwrap();
    // A path below a file cannot be opened (not a directory on its way).
    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    let below = file.join("t.jsonl");
    assert!(boot_scan_kept(&below, None).is_err());
    assert!(boot_scan(&below).is_err());
    assert!(last_reply(&below).is_err());
    assert!(reply_written(&below, "Done.").is_err());
    // No file, or a directory in its place: nothing to scan.
    for empty in [dir.path().join("missing.jsonl"), dir.path().to_path_buf()] {
        assert_eq!(last_reply(&empty).unwrap(), None);
        assert!(!reply_written(&empty, "Done.").unwrap());
        assert_eq!(boot_scan(&empty).unwrap(), BootScan::default());
        assert_eq!(
            boot_scan_kept(&empty, None).unwrap(),
            (BootScan::default(), None)
        );
    }
}

/// What a kept scan rests on: Claude Code only appends, so the bytes a
/// kept scan covered are not read again. A rewrite in place that no probe
/// covers (same inode, same length, same first and last bytes) is not seen;
/// the same bytes renamed into place are (see above).
#[test]
fn a_kept_scan_does_not_read_again_the_bytes_it_covered() {
    let (_dir, path) = temp_transcript();
    let (text, boundary, (before, kept)) = plain_scanned(&path);
    let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.write_all(text(&boundary).as_bytes()).unwrap();
    drop(file);
    assert_eq!(boot_scan(&path).unwrap().boundaries_after, 1);
    let (scan, again) = boot_scan_kept(&path, kept.as_ref()).unwrap();
    assert_eq!(scan, before);
    assert_eq!(again, kept);
    // What is appended after it is read.
    append(&path, format!("{boundary}\n").as_bytes());
    let (scan, _) = boot_scan_kept(&path, kept.as_ref()).unwrap();
    assert_eq!(scan.boundaries_after, 1);
    assert_eq!(boot_scan(&path).unwrap().boundaries_after, 2);
}

#[test]
fn a_torn_last_line_is_read_up_to_the_longest_line_a_scan_reads() {
    use notesoup_claude::transcript::tail::MAX_LINE_BYTES;
    let (_dir, path) = temp_transcript();
    let boot = boot_line(1);
    let head = r#"{"type":"system","subtype":"compact_boundary","uuid":"c","parentUuid":null,"isSidechain":false,"pad":""#;
    for size in [MAX_LINE_BYTES, MAX_LINE_BYTES + 1] {
        let boundary = format!("{head}{}\"}}", "z".repeat(size - head.len() - 2));
        assert_eq!(boundary.len(), size);
        std::fs::write(&path, format!("{boot}\n{boundary}")).unwrap();
        let (scan, _) = boot_scan_kept(&path, None).unwrap();
        assert_eq!(scan, boot_scan(&path).unwrap(), "{size} bytes");
        assert_eq!(
            scan.boundaries_after,
            u64::from(size == MAX_LINE_BYTES),
            "{size} bytes"
        );
    }
}
