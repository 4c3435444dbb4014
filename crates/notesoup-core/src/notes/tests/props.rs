//! Property tests: address round trip, frontmatter round trip, search offsets.

use jiff::tz::{self, TimeZone};
use notesoup_core::notes::{
    Address, FrontmatterExtra, Home, LiteralQueries, NoteMeta, NoteOrigin, NotesIdentity,
    parse_note, serialize_note,
};
use proptest::prelude::*;
use serde_json::Value;

fn me() -> NotesIdentity {
    NotesIdentity::new("/notes", "s1", "proj-12345678", "alice", "gpt").expect("identity")
}

fn slug() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("alice".to_owned()),
        Just("gpt".to_owned()),
        "[a-z0-9]{1,4}(-[a-z0-9]{1,3}){0,2}"
    ]
}

fn home() -> impl Strategy<Value = Home> {
    prop_oneof![
        Just(Home::Session),
        Just(Home::Project),
        Just(Home::Human),
        slug().prop_map(Home::Agent),
        slug().prop_map(Home::Model),
    ]
}

fn segment() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 ._~#äß漢-]{1,12}".prop_filter("not . or ..", |s| s != "." && s != "..")
}

proptest! {
    #[test]
    fn addresses_round_trip(home in home(), segments in prop::collection::vec(segment(), 1..5)) {
        let id = me();
        let address = Address::new(home, &segments.join("/")).expect("valid path");
        let rendered = address.render(&id);
        prop_assert_eq!(Address::parse(&rendered, &id).expect("reparse"), address.clone());
        prop_assert_eq!(Address::parse(&address.concrete(), &id).expect("concrete"), address.clone());
        prop_assert!(address.path().ends_with(".md"));
    }
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        Just(Value::Null),
        any::<String>().prop_map(Value::from),
        "[A-Za-z0-9_.+:/-]{1,10}".prop_map(Value::from),
    ];
    prop_oneof![
        4 => leaf.clone(),
        1 => prop::collection::vec(leaf, 0..4).prop_map(Value::from),
    ]
}

fn extra_key() -> impl Strategy<Value = String> {
    "[A-Za-z_][A-Za-z0-9_-]{0,10}"
}

fn meta() -> impl Strategy<Value = NoteMeta> {
    let times = (
        0i64..4_000_000_000_000,
        0i64..4_000_000_000_000,
        0i64..4_000_000_000_000,
    );
    let extras = prop::collection::vec((extra_key(), json_value()), 0..6);
    (
        prop_oneof![
            Just(NoteOrigin::User),
            Just(NoteOrigin::SelfAuthored),
            Just(NoteOrigin::External)
        ],
        times,
        any::<u64>(),
        prop::option::of(0i64..4_000_000_000_000),
        prop::option::of(any::<String>().prop_filter("non-empty", |s| !s.is_empty())),
        extras,
    )
        .prop_map(
            |(
                origin,
                (created_at, updated_at, last_accessed),
                access_count,
                crumpled_at,
                project,
                extras,
            )| {
                NoteMeta {
                    origin,
                    created_at,
                    updated_at,
                    last_accessed,
                    access_count,
                    crumpled_at,
                    project,
                    extras: extras
                        .into_iter()
                        .filter_map(|(key, value)| FrontmatterExtra::new(&key, value))
                        .collect(),
                }
            },
        )
}

fn zone() -> impl Strategy<Value = TimeZone> {
    (-12i8..=14).prop_map(|hours| TimeZone::fixed(tz::offset(hours)))
}

proptest! {
    #[test]
    fn frontmatter_round_trips(meta in meta(), body in any::<String>(), tz in zone()) {
        let text = serialize_note(&meta, &body, &tz);
        let parsed = parse_note(&text, 0, &tz);
        prop_assert!(parsed.has_frontmatter);
        prop_assert_eq!(parsed.body, body.as_str());
        prop_assert_eq!(&parsed.meta, &meta);
        prop_assert_eq!(serialize_note(&parsed.meta, parsed.body, &tz), text);
    }

    #[test]
    fn unknown_lines_keep_text_and_order(
        lines in prop::collection::vec((extra_key(), "[^\r\n]{0,20}"), 0..8),
        body in any::<String>(),
    ) {
        let lines: Vec<String> = lines
            .into_iter()
            .filter(|(key, _)| !notesoup_core::notes::KNOWN_KEYS.contains(&key.as_str()) && key != "scope")
            .map(|(key, rest)| format!("{key}:{rest}"))
            .collect();
        let text = format!("---\n{}---\n\n{body}", lines.iter().map(|line| format!("{line}\n")).collect::<String>());
        let first = parse_note(&text, 0, &TimeZone::UTC);
        let written = serialize_note(&first.meta, first.body, &TimeZone::UTC);
        let second = parse_note(&written, 0, &TimeZone::UTC);
        let raws: Vec<&str> = second.meta.extras.iter().map(FrontmatterExtra::raw).collect();
        // An empty value starts a block sequence that may swallow no lines
        // here, so every line survives as its own extra, verbatim and in order.
        prop_assert_eq!(raws, lines.iter().map(String::as_str).collect::<Vec<_>>());
        prop_assert_eq!(second.body, body.as_str());
    }
}

/// The reference: fold each line and scan it naively.
fn fold(text: &str) -> String {
    text.chars()
        .flat_map(char::to_lowercase)
        .map(|c| if c == 'ς' { 'σ' } else { c })
        .collect()
}

fn naive(queries: &[String], body: &str) -> Vec<(usize, String, usize)> {
    let mut found = Vec::new();
    let mut line_start_chars = 0;
    for (index, raw_line) in body.split('\n').enumerate() {
        let line = raw_line.strip_suffix('\r').unwrap_or(raw_line);
        let folded = fold(line);
        let earliest = queries
            .iter()
            .filter_map(|query| folded.find(&fold(query)))
            .min();
        if let Some(byte) = earliest {
            // The original character whose folded form holds that byte.
            let mut consumed = 0;
            let mut within = 0;
            for c in line.chars() {
                consumed += fold(&c.to_string()).len();
                if consumed > byte {
                    break;
                }
                within += 1;
            }
            found.push((index + 1, line.to_owned(), line_start_chars + within));
        }
        line_start_chars += raw_line.chars().count() + 1;
    }
    found
}

fn text_from(
    alphabet: &'static [&'static str],
    len: std::ops::Range<usize>,
) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(alphabet), len).prop_map(|parts| parts.concat())
}

const ALPHABET: &[&str] = &[
    "a", "B", "x", "k", "\u{212a}", " ", "\n", "\r\n", "İ", "i", "\u{307}", "ß", "Σ", "ς", "σ",
    "é", "É", "漢", "Ω",
];

proptest! {
    #[test]
    fn search_offsets_point_at_the_match(
        body in text_from(ALPHABET, 0..80),
        queries in prop::collection::vec(text_from(ALPHABET, 1..4), 1..3),
    ) {
        let matcher = LiteralQueries::new(&queries).expect("non-empty queries");
        let found: Vec<(usize, String, usize)> = matcher
            .find_lines(&body, &mut String::new())
            .into_iter()
            .map(|m| (m.line, m.text, m.offset_chars))
            .collect();
        prop_assert_eq!(&found, &naive(&queries, &body));
        let mut raw = Vec::new();
        let prefix = format!("---\nkey: x\n---\n\n{body}");
        prop_assert!(found.is_empty() || matcher.could_match(prefix.as_bytes(), &mut raw));
        for (_, _, offset) in &found {
            let tail: String = body.chars().skip(*offset).collect();
            let first = tail.chars().next().map(|c| fold(&c.to_string()).len()).unwrap_or(0);
            let at = queries.iter().filter_map(|q| fold(&tail).find(&fold(q))).min();
            prop_assert!(at.is_some_and(|at| at < first.max(1)), "offset {} in {:?}", offset, body);
        }
    }
}
