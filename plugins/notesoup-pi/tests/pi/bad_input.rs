//! Malformed session files: never a panic, never lost data.

use notesoup_pi::session::{DiagnosticCode, Entry, SessionFile, append_entry};
use proptest::prelude::*;

const HEADER: &str = r#"{"type":"session","version":3,"id":"0197a1b2-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work"}"#;
const USER: &str = r#"{"type":"message","id":"aaaa0001","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1767225601000}}"#;
const CUSTOM: &str = r#"{"type":"custom","customType":"x/y","data":{"n":1},"id":"aaaa0002","parentId":"aaaa0001","timestamp":"2026-01-01T00:00:02.000Z"}"#;

/// What a rewrite of `bytes` holds: every byte, plus a newline for a torn
/// last line.
fn rewritten(bytes: &[u8]) -> Vec<u8> {
    let mut expect = bytes.to_vec();
    if !expect.is_empty() && !expect.ends_with(b"\n") {
        expect.push(b'\n');
    }
    expect
}

/// Parses `bytes` and checks the diagnostics (line, code) and the entry ids,
/// then that a rewrite keeps every byte ([`rewritten`]); the parsed file.
fn check(bytes: &[u8], diagnostics: &[(usize, DiagnosticCode)], entry_ids: &[&str]) -> SessionFile {
    let file = SessionFile::parse(bytes);
    let got: Vec<(usize, DiagnosticCode)> = file
        .diagnostics()
        .iter()
        .map(|d| (d.line, d.code))
        .collect();
    assert_eq!(got, diagnostics, "{:#?}", file.diagnostics());
    let ids: Vec<&str> = file.entries().iter().map(Entry::id).collect();
    assert_eq!(ids, entry_ids);
    assert_eq!(
        file.to_jsonl().unwrap(),
        rewritten(bytes),
        "rewrite changed bytes"
    );
    file
}

fn lines(lines: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in lines {
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    out
}

#[test]
fn clean_file_has_no_diagnostics() {
    check(
        &lines(&[HEADER.as_bytes(), USER.as_bytes(), CUSTOM.as_bytes()]),
        &[],
        &["aaaa0001", "aaaa0002"],
    );
}

#[test]
fn truncated_last_line_is_reported_and_kept() {
    let mut bytes = lines(&[HEADER.as_bytes(), USER.as_bytes()]);
    bytes.extend_from_slice(&CUSTOM.as_bytes()[..40]);
    check(&bytes, &[(3, DiagnosticCode::TruncatedLine)], &["aaaa0001"]);
}

#[test]
fn valid_last_line_without_newline_is_read() {
    let mut bytes = lines(&[HEADER.as_bytes(), USER.as_bytes()]);
    bytes.extend_from_slice(CUSTOM.as_bytes());
    check(
        &bytes,
        &[(3, DiagnosticCode::MissingFinalNewline)],
        &["aaaa0001", "aaaa0002"],
    );
}

#[test]
fn garbage_blank_and_non_object_lines_are_kept() {
    let bytes = lines(&[
        HEADER.as_bytes(),
        b"",
        b"this is not json",
        USER.as_bytes(),
        b"  ",
        b"[1,2]",
        b"42",
        CUSTOM.as_bytes(),
    ]);
    check(
        &bytes,
        &[
            (3, DiagnosticCode::InvalidJson),
            (6, DiagnosticCode::NotAnObject),
            (7, DiagnosticCode::NotAnObject),
        ],
        &["aaaa0001", "aaaa0002"],
    );
}

/// A session file of the header, a user message and a custom entry, then
/// `rest`.
fn after_the_first_three(rest: &[&[u8]]) -> Vec<u8> {
    lines(
        &[
            &[HEADER.as_bytes(), USER.as_bytes(), CUSTOM.as_bytes()],
            rest,
        ]
        .concat(),
    )
}

#[test]
fn unknown_entry_types_stay_in_the_tree() {
    let future = br#"{"type":"hologram","id":"aaaa0003","parentId":"aaaa0002","timestamp":"2026-01-01T00:00:03.000Z","beam":[1,2.5]}"#;
    let child = br#"{"type":"message","id":"aaaa0004","parentId":"aaaa0003","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"again","timestamp":1767225604000}}"#;
    let bytes = after_the_first_three(&[future, child]);
    let file = check(
        &bytes,
        &[(4, DiagnosticCode::UnknownEntryType)],
        &["aaaa0001", "aaaa0002", "aaaa0003", "aaaa0004"],
    );
    let index = file.index();
    assert_eq!(
        index.branch("aaaa0004").len(),
        4,
        "the unknown entry links its child to the root"
    );
}

#[test]
fn malformed_known_entries_are_kept_untyped() {
    let no_role = br#"{"type":"message","id":"aaaa0003","parentId":"aaaa0002","timestamp":"2026-01-01T00:00:03.000Z","message":{"content":"?"}}"#;
    let bad_tokens = br#"{"type":"compaction","id":"aaaa0004","parentId":"aaaa0003","timestamp":"t","summary":"s","firstKeptEntryId":"aaaa0004","tokensBefore":"many"}"#;
    let bytes = after_the_first_three(&[no_role, bad_tokens]);
    let file = check(
        &bytes,
        &[(5, DiagnosticCode::MalformedEntry)],
        &["aaaa0001", "aaaa0002", "aaaa0003", "aaaa0004"],
    );
    // A message without a role is an unknown message, not a malformed entry.
    assert!(matches!(&file.entries()[2], Entry::Message(m) if m.message.role().is_empty()));
    assert!(
        matches!(&file.entries()[3], Entry::Unknown(u) if u.entry_type() == Some("compaction"))
    );
}

#[test]
fn invalid_utf8_is_read_lossily_and_written_back_unchanged() {
    let mut bad = USER.as_bytes().to_vec();
    let at = bad.windows(2).position(|w| w == b"hi").unwrap();
    bad[at] = 0xff;
    let bytes = lines(&[HEADER.as_bytes(), &bad]);
    let file = check(&bytes, &[(2, DiagnosticCode::InvalidUtf8)], &["aaaa0001"]);
    let Some(Entry::Message(message)) = file.entries().first() else {
        panic!("no message")
    };
    let json = serde_json::to_string(&message.message).unwrap();
    assert!(json.contains("\u{fffd}i"), "{json}");
}

#[test]
fn missing_and_extra_headers_are_reported() {
    check(
        &lines(&[USER.as_bytes(), HEADER.as_bytes()]),
        &[(1, DiagnosticCode::MissingHeader)],
        &["aaaa0001"],
    );
    let file = SessionFile::parse(&lines(&[USER.as_bytes()]));
    assert!(!file.is_loadable_by_pi());
    check(
        &lines(&[HEADER.as_bytes(), HEADER.as_bytes(), USER.as_bytes()]),
        &[(2, DiagnosticCode::ExtraHeader)],
        &["aaaa0001"],
    );
    let legacy =
        br#"{"type":"session","id":"old","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/"}"#;
    check(
        &lines(&[legacy]),
        &[(1, DiagnosticCode::LegacyVersion)],
        &[],
    );
}

#[test]
fn version_2_hook_messages_read_as_custom() {
    let header = br#"{"type":"session","version":2,"id":"s","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/"}"#;
    let hook = br#"{"type":"message","id":"aaaa0001","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"hookMessage","customType":"h","content":"x","display":true,"timestamp":1}}"#;
    let file = SessionFile::parse(&lines(&[header, hook]));
    assert!(matches!(
        file.entries()[0].message(),
        Some(notesoup_pi::session::AgentMessage::Custom(_))
    ));
}

#[test]
fn empty_input_is_an_empty_file() {
    check(b"", &[], &[]);
}

#[test]
fn append_repairs_a_torn_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut torn = lines(&[HEADER.as_bytes(), USER.as_bytes()]);
    torn.extend_from_slice(b"{\"type\":\"cus");
    std::fs::write(&path, &torn).unwrap();
    let entry: Entry = serde_json::from_str(CUSTOM).unwrap();
    append_entry(&path, &entry).unwrap();
    let file = SessionFile::read(&path).unwrap();
    let codes: Vec<DiagnosticCode> = file.diagnostics().iter().map(|d| d.code).collect();
    assert_eq!(codes, [DiagnosticCode::InvalidJson]);
    assert_eq!(file.entries().len(), 2);
    assert!(
        std::fs::read(&path)
            .unwrap()
            .ends_with(format!("{CUSTOM}\n").as_bytes())
    );
    // An empty file gets the line alone; one that ends whole, no blank line.
    std::fs::write(&path, "").unwrap();
    append_entry(&path, &entry).unwrap();
    append_entry(&path, &entry).unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        format!("{CUSTOM}\n{CUSTOM}\n")
    );
}

#[test]
fn rewrite_goes_through_a_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let bytes = lines(&[HEADER.as_bytes(), b"garbage", USER.as_bytes()]);
    let mut file = SessionFile::parse(&bytes);
    file.push(serde_json::from_str(CUSTOM).unwrap());
    file.write_to(&path).unwrap();
    let mut expect = bytes.clone();
    expect.extend_from_slice(format!("{CUSTOM}\n").as_bytes());
    assert_eq!(std::fs::read(&path).unwrap(), expect);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary file left"
    );
}

proptest! {
    #[test]
    fn any_bytes_parse_without_panic_and_rewrite_losslessly(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let file = SessionFile::parse(&bytes);
        prop_assert_eq!(file.to_jsonl().unwrap(), rewritten(&bytes));
    }

    #[test]
    fn cutting_a_valid_file_anywhere_never_loses_the_complete_lines(cut in 0usize..400) {
        let bytes = lines(&[HEADER.as_bytes(), USER.as_bytes(), CUSTOM.as_bytes()]);
        let cut = cut.min(bytes.len());
        let file = SessionFile::parse(&bytes[..cut]);
        let complete_lines = bytes[..cut].iter().filter(|b| **b == b'\n').count();
        prop_assert!(file.entries().len() + usize::from(file.header().is_some()) >= complete_lines);
        let _ = file.index().path(notesoup_pi::session::Leaf::Last);
    }
}

/// An irregular line is said as `line N: code: detail` (the command line
/// prints it on stderr), its code a stable snake_case name.
#[test]
fn diagnostics_are_said_with_their_line_and_stable_code() {
    let mut bytes = lines(&[HEADER.as_bytes(), b"{not json", USER.as_bytes()]);
    bytes.extend_from_slice(&CUSTOM.as_bytes()[..40]);
    let said: Vec<String> = SessionFile::parse(&bytes)
        .diagnostics()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(said[0].starts_with("line 2: invalid_json: "), "{said:?}");
    assert!(said[1].starts_with("line 4: truncated_line: "), "{said:?}");
    let codes = [
        (DiagnosticCode::InvalidJson, "invalid_json"),
        (DiagnosticCode::NotAnObject, "not_an_object"),
        (DiagnosticCode::InvalidUtf8, "invalid_utf8"),
        (DiagnosticCode::TruncatedLine, "truncated_line"),
        (DiagnosticCode::MissingFinalNewline, "missing_final_newline"),
        (DiagnosticCode::MissingHeader, "missing_header"),
        (DiagnosticCode::ExtraHeader, "extra_header"),
        (DiagnosticCode::LegacyVersion, "legacy_version"),
        (DiagnosticCode::UnknownEntryType, "unknown_entry_type"),
        (DiagnosticCode::MalformedEntry, "malformed_entry"),
        (DiagnosticCode::LineTooLong, "line_too_long"),
    ];
    for (code, text) in codes {
        assert_eq!(code.as_str(), text);
    }
}
