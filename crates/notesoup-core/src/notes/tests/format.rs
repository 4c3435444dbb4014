//! The frontmatter codec: tolerant parsing and exact serialization.

use jiff::tz::{self, TimeZone};
use notesoup_core::notes::{
    FrontmatterExtra, NoteMeta, NoteOrigin, parse_note, serialize_note, strip_frontmatter,
};
use serde_json::{Value, json};

const NOW: i64 = 1_789_464_705_392;

fn parse(text: &str) -> (NoteMeta, String, bool) {
    let parsed = parse_note(text, NOW, &TimeZone::UTC);
    (parsed.meta, parsed.body.to_owned(), parsed.has_frontmatter)
}

fn extras(meta: &NoteMeta) -> Vec<(&str, &Value, &str)> {
    meta.extras
        .iter()
        .map(|extra| (extra.key(), extra.value(), extra.raw()))
        .collect()
}

#[test]
fn missing_or_unclosed_frontmatter_is_all_body() {
    for text in [
        "plain body",
        "---\norigin: user\nno close",
        "--- \norigin: user\n---\n",
        "",
        "---",
    ] {
        let (meta, body, has) = parse(text);
        assert_eq!((body.as_str(), has), (text, false), "{text:?}");
        assert_eq!(meta, NoteMeta::new_at(NOW));
    }
    let (_, body, _) = parse("\u{feff}just text");
    assert_eq!(body, "just text", "a BOM is stripped");
}

#[test]
fn known_keys_bom_and_crlf() {
    let text = "\u{feff}---\r\norigin: user\r\ncreatedAt: 2026-09-15T17:31:45.392+08:00\r\nupdatedAt: \"2026-09-15T09:31:45.392Z\"\r\nlastAccessed: 1789464705000\r\naccessCount: \"7\"\r\ncrumpledAt: 2026-09-15T09:31:45.392+00:00\r\nproject: demo-1234abcd\r\n---\r\n\r\nbody\r\nline two\r\n";
    let (meta, body, has) = parse(text);
    assert!(has);
    assert_eq!(body, "body\r\nline two\r\n");
    assert_eq!(meta.origin, NoteOrigin::User);
    assert_eq!(
        (meta.created_at, meta.updated_at, meta.last_accessed),
        (NOW, NOW, 1_789_464_705_000)
    );
    assert_eq!(meta.access_count, 7);
    assert_eq!(meta.crumpled_at, Some(NOW));
    assert_eq!(meta.project.as_deref(), Some("demo-1234abcd"));
    assert!(meta.extras.is_empty());
}

#[test]
fn defaults_and_garbage_values() {
    let (meta, body, _) = parse(
        "---\norigin: robot\ncreatedAt: someday\naccessCount: -3\ncrumpledAt: null\nproject:\n---\nno blank line\n",
    );
    assert_eq!(body, "no blank line\n");
    assert_eq!(meta.origin, NoteOrigin::SelfAuthored);
    assert_eq!(meta.created_at, NOW);
    assert_eq!(meta.access_count, 0);
    assert_eq!(meta.crumpled_at, None);
    assert_eq!(meta.project, None);
    let (_, body, _) = parse("---\n---\n\n\ntwo blank lines\n");
    assert_eq!(
        body, "\ntwo blank lines\n",
        "only one blank line is dropped"
    );
}

#[test]
fn unknown_keys_are_kept_verbatim_in_order() {
    let text = "---\nzeta: 1\nstatus: active\ncreated_at: 2020-01-01\nscope: project\ntags:\n  - \"a b\"\n  - 2\n  -\n- 'q'\nnote: \"quoted: yes\"\n  stray continuation\nsingle: 'x'\nempty:\n---\n\nbody";
    let (meta, _, _) = parse(text);
    assert_eq!(
        extras(&meta),
        vec![
            ("zeta", &json!(1), "zeta: 1"),
            ("status", &json!("active"), "status: active"),
            ("created_at", &json!("2020-01-01"), "created_at: 2020-01-01"),
            (
                "tags",
                &json!(["a b", 2, "", "q"]),
                "tags:\n  - \"a b\"\n  - 2\n  -\n- 'q'"
            ),
            (
                "note",
                &json!("quoted: yes"),
                "note: \"quoted: yes\"\n  stray continuation"
            ),
            ("single", &json!("x"), "single: 'x'"),
            ("empty", &json!([]), "empty:"),
        ]
    );
    assert_eq!(meta.extra("status"), Some(&json!("active")));
    let written = serialize_note(&meta, "body", &TimeZone::UTC);
    assert_eq!(
        written,
        "---\norigin: self\ncreatedAt: 2026-09-15T09:31:45.392+00:00\nupdatedAt: 2026-09-15T09:31:45.392+00:00\nlastAccessed: 2026-09-15T09:31:45.392+00:00\naccessCount: 0\nzeta: 1\nstatus: active\ncreated_at: 2020-01-01\ntags:\n  - \"a b\"\n  - 2\n  -\n- 'q'\nnote: \"quoted: yes\"\n  stray continuation\nsingle: 'x'\nempty:\n---\n\nbody",
        "known keys first, the legacy scope key dropped, extras verbatim"
    );
    assert_eq!(
        parse(&written).0,
        meta,
        "a written note reads back the same"
    );
}

#[test]
fn serialization_order_offsets_and_quoting() {
    let mut meta = NoteMeta::new_at(NOW);
    meta.origin = NoteOrigin::External;
    meta.access_count = 12;
    meta.crumpled_at = Some(NOW + 1);
    meta.project = Some("my project-1234abcd".into());
    meta.extras
        .push(FrontmatterExtra::new("flag", json!("yes")).expect("extra"));
    meta.extras
        .push(FrontmatterExtra::new("path", json!("a/b:c+d.e_f-g")).expect("extra"));
    meta.extras
        .push(FrontmatterExtra::new("list", json!(["x", 1])).expect("extra"));
    assert!(
        FrontmatterExtra::new("origin", json!("x")).is_none(),
        "known keys are not extras"
    );
    assert!(
        FrontmatterExtra::new("scope", json!("x")).is_none(),
        "the legacy scope key is never written"
    );
    assert!(FrontmatterExtra::new("1bad", json!("x")).is_none());
    let tz = TimeZone::fixed(tz::offset(8));
    assert_eq!(
        serialize_note(&meta, "", &tz),
        "---\norigin: external\ncreatedAt: 2026-09-15T17:31:45.392+08:00\nupdatedAt: 2026-09-15T17:31:45.392+08:00\nlastAccessed: 2026-09-15T17:31:45.392+08:00\naccessCount: 12\ncrumpledAt: 2026-09-15T17:31:45.393+08:00\nproject: \"my project-1234abcd\"\nflag: \"yes\"\npath: a/b:c+d.e_f-g\nlist: [\"x\",1]\n---\n\n"
    );
    let west = TimeZone::fixed(tz::offset(-5));
    assert!(
        serialize_note(&meta, "", &west).contains("createdAt: 2026-09-15T04:31:45.392-05:00\n")
    );
    let reread = parse_note(&serialize_note(&meta, "", &tz), 0, &tz).meta;
    assert_eq!(reread, meta);
}

#[test]
fn strip_frontmatter_of_written_content() {
    assert_eq!(strip_frontmatter("---\na: 1\n---\n\nbody"), "body");
    assert_eq!(
        strip_frontmatter("\u{feff}---\r\na: 1\r\n---\r\nbody"),
        "body"
    );
    assert_eq!(strip_frontmatter("no frontmatter"), "no frontmatter");
    assert_eq!(strip_frontmatter("---\nunclosed"), "---\nunclosed");
}

#[test]
fn a_repeated_known_key_takes_the_last_value() {
    let (meta, _, _) =
        parse("---\norigin: user\norigin: external\naccessCount: 1\naccessCount: 2\n---\n\n");
    assert_eq!((meta.origin, meta.access_count), (NoteOrigin::External, 2));
}

/// Fields written by hand in other forms: a count as digits in a string, a
/// crumple time and a project as numbers; an empty string is no value.
#[test]
fn hand_written_field_forms() {
    let meta = |fields: &str| parse(&format!("---\n{fields}---\n\nbody")).0;
    let counts: Vec<u64> = ["\"12\"", "\"\"", "\"1x\"", "\"+5\"", "-1", "7"]
        .iter()
        .map(|count| meta(&format!("accessCount: {count}\n")).access_count)
        .collect();
    assert_eq!(counts, [12, 0, 0, 0, 0, 7]);
    assert_eq!(
        meta("crumpledAt: 1789464705000\n").crumpled_at,
        Some(1_789_464_705_000)
    );
    assert_eq!(meta("crumpledAt: \"\"\n").crumpled_at, None);
    assert_eq!(meta("project: 1234\n").project.as_deref(), Some("1234"));
    assert_eq!(meta("project: \"\"\n").project, None);
}
