//! The notes tools over a real store in a temp directory.

use std::path::PathBuf;

use insta::assert_snapshot;
use jiff::tz::TimeZone;
use notesoup_core::history::History;
use notesoup_core::notes::{Change, NoteStore, NotesIdentity};
use notesoup_core::tools::notes::{
    NotesListParams, NotesReadParams, NotesSearchParams, NotesUpdateParams, NotesWriteParams,
    note_kind_diff, notes_list, notes_read, notes_search, notes_update, notes_write,
};
use notesoup_core::tools::{
    Refusal, RefusalCode, TOOL_OUTPUT_MAX_BYTES, ToolContext, ToolFamily, ToolOutput, call_tool,
    parse_arguments, tools_for,
};
use notesoup_test_support::files::put;
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::history::tests::fixture::{assert_fits, refusal};

struct Notes {
    _dir: TempDir,
    root: PathBuf,
    store: NoteStore,
}

impl Notes {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("notes");
        let identity = NotesIdentity::new(&root, "s1", "proj-12345678", "alice", "gpt").unwrap();
        Self {
            _dir: dir,
            root,
            store: NoteStore::new(identity).with_time_zone(TimeZone::UTC),
        }
    }

    /// Seeds a note file with fixed times (hour `updated` of the day) and
    /// extra frontmatter lines.
    fn seed(&self, relative: &str, updated: u32, extra: &str, body: &str) {
        let text = format!(
            "---\norigin: self\ncreatedAt: 2026-09-15T08:00:00.000+00:00\nupdatedAt: 2026-09-15T{updated:02}:00:00.000+00:00\nlastAccessed: 2026-09-15T08:00:00.000+00:00\naccessCount: 0\n{extra}---\n\n{body}"
        );
        put(&self.root.join(relative), text);
    }

    fn call<P: serde::de::DeserializeOwned>(&self, arguments: Value) -> P {
        parse_arguments(arguments).unwrap()
    }

    fn write(&self, arguments: Value) -> ToolOutput {
        notes_write(&self.store, &self.call::<NotesWriteParams>(arguments))
    }

    fn update(&self, arguments: Value) -> ToolOutput {
        notes_update(
            &self.store,
            &self.call::<NotesUpdateParams>(arguments),
            &note_kind_diff,
        )
    }

    fn read(&self, arguments: Value) -> ToolOutput {
        notes_read(&self.store, &self.call::<NotesReadParams>(arguments))
    }

    fn list(&self, arguments: Value) -> ToolOutput {
        notes_list(&self.store, &self.call::<NotesListParams>(arguments))
    }

    fn search(&self, arguments: Value) -> ToolOutput {
        notes_search(&self.store, &self.call::<NotesSearchParams>(arguments))
    }
}

fn ok(output: &ToolOutput) -> &str {
    assert!(!output.is_error, "unexpected refusal: {}", output.text);
    assert_fits(output);
    &output.text
}

#[test]
fn write_receipts_name_the_outcome_and_project() {
    let notes = Notes::new();
    let created = notes.write(json!({"address": "plan", "content": "step 1"}));
    assert_eq!(ok(&created), "created plan.md (project proj-12345678)");
    assert_eq!(
        created.json.to_value(),
        json!({"address": "plan.md", "project_key": "proj-12345678", "outcome": "created"})
    );
    assert_eq!(
        ok(&notes.write(json!({"address": "@project/deploy", "content": "x", "origin": "user"}))),
        "created @project/deploy.md (project proj-12345678)"
    );
    assert_eq!(
        ok(&notes.write(json!({"address": "@project/deploy", "content": "y"}))),
        "overwritten @project/deploy.md (project proj-12345678)"
    );
    assert_eq!(
        ok(&notes.write(json!({"address": "@self/diary", "content": "d"}))),
        "created @self/diary.md"
    );
    ok(&notes.update(json!({"address": "@self/diary", "crumpled": true})));
    assert_eq!(
        ok(&notes.write(json!({"address": "@self/diary", "content": "d2"}))),
        "uncrumpled @self/diary.md"
    );
}

#[test]
fn write_refusals_pass_the_store_codes_through() {
    let notes = Notes::new();
    let json = refusal(
        &notes.write(json!({"address": "@agents/bob/x", "content": "x"})),
        "invalid_scope",
    );
    assert!(
        json["error"].as_str().unwrap().contains("is not your home"),
        "{json}"
    );
    let json = refusal(
        &notes.write(json!({"address": "@bogus/x", "content": "x"})),
        "invalid_address",
    );
    assert_eq!(
        json["error"],
        "invalid note address: legal prefixes are @project/, @human/, @self/, and @model/; bare names are this session"
    );
    refusal(
        &notes.write(json!({"address": "big", "content": "x".repeat(1_000_001)})),
        "too_large",
    );
    let unknown: Result<NotesWriteParams, _> =
        parse_arguments(json!({"address": "a", "content": "b", "extra": 1}));
    assert_eq!(unknown.unwrap_err().code().as_str(), "invalid_arguments");
    let json = refusal(
        &notes.write(json!({"address": "a", "content": "b", "origin": "robot"})),
        "invalid_origin",
    );
    assert!(json["error"].as_str().unwrap().contains("robot"), "{json}");
}

#[test]
fn a_filesystem_failure_is_io_error_without_the_path() {
    let notes = Notes::new();
    put(
        &notes.root.join("pi/session/s1"),
        "a file where the home should be",
    );
    let output = notes.write(json!({"address": "plan", "content": "x"}));
    assert_eq!(output.text, "error: io_error: notes operation failed");
    assert_eq!(
        output.json.to_value(),
        json!({"error": "notes operation failed", "code": "io_error"})
    );
}

#[test]
fn update_receipts() {
    let notes = Notes::new();
    ok(&notes.write(json!({"address": "plan", "content": "alpha\nbeta\n"})));
    let edited = notes
        .update(json!({"address": "plan", "edits": [{"oldText": "beta", "newText": "gamma"}]}));
    assert_snapshot!("update_body", ok(&edited));
    assert_eq!(edited.json.to_value()["change_kind"], "body");
    let same = notes
        .update(json!({"address": "plan", "edits": [{"oldText": "alpha", "newText": "alpha"}]}));
    assert_snapshot!("update_unchanged", ok(&same));
    let crumpled = notes.update(json!({"address": "plan", "crumpled": true, "edits": []}));
    assert_snapshot!("update_metadata", ok(&crumpled));
    let with_pi_style = notes_update(
        &notes.store,
        &parse_arguments(
            json!({"address": "plan", "edits": [{"oldText": "gamma", "newText": "delta"}]}),
        )
        .unwrap(),
        &|change: &Change| {
            format!(
                "-{}\n+{}",
                change.before.trim_end(),
                change.after.trim_end()
            )
        },
    );
    assert_snapshot!("update_custom_diff", ok(&with_pi_style));
}

#[test]
fn update_refusals_carry_their_facts() {
    let notes = Notes::new();
    let body: String = (1..=25).map(|line| format!("dup {line}\n")).collect();
    ok(&notes.write(json!({"address": "plan", "content": body})));
    let json = refusal(
        &notes.update(json!({"address": "plan", "edits": [{"oldText": "dup", "newText": "x"}]})),
        "ambiguous_edit",
    );
    assert_eq!(
        json["details"]["line_numbers"],
        json!((1..=20).collect::<Vec<_>>())
    );
    assert_eq!(json["details"]["line_numbers_total"], 25);
    let json = refusal(
        &notes.update(json!({"address": "plan", "edits": [{"oldText": "dup 1\n", "newText": "a"}, {"oldText": "absent", "newText": "b"}]})),
        "no_match",
    );
    assert_eq!(json["details"], json!({"edit_index": 1}));
    let json = refusal(
        &notes.update(json!({"address": "plan", "edits": [{"oldText": "dup 2\n", "newText": 7}]})),
        "no_match",
    );
    assert_eq!(json["details"], json!({"edit_index": 0}));
    refusal(&notes.update(json!({"address": "plan"})), "nothing_to_do");
    refusal(
        &notes.update(json!({"address": "missing", "crumpled": true})),
        "not_found",
    );
    refusal(
        &notes.update(json!({"address": "plan", "origin": "nobody"})),
        "invalid_origin",
    );
}

#[test]
fn rename_is_used_alone() {
    let notes = Notes::new();
    ok(&notes.write(json!({"address": "plan", "content": "p"})));
    let output = notes.update(json!({"address": "plan", "rename_to": "@project/plan"}));
    assert_snapshot!("rename", ok(&output));
    assert_eq!(
        output.json.to_value(),
        json!({
            "address": "@project/plan.md", "project_key": "proj-12345678", "applied": 0, "change_kind": "file",
            "diff": "rename plan.md -> @project/plan.md", "rename_from": "plan.md", "replaced_crumpled_target": false
        })
    );
    ok(&notes.write(json!({"address": "old", "content": "o"})));
    ok(&notes.update(json!({"address": "old", "crumpled": true})));
    ok(&notes.write(json!({"address": "fresh", "content": "f"})));
    let replaced = notes.update(json!({"address": "fresh", "rename_to": "old"}));
    assert_eq!(
        ok(&replaced).lines().next().unwrap(),
        "moved fresh.md -> old.md (replaced a crumpled note)"
    );
    refusal(
        &notes.update(json!({"address": "old", "rename_to": "@project/plan"})),
        "already_exists",
    );
    refusal(
        &notes.update(json!({"address": "old", "rename_to": "old.md"})),
        "nothing_to_do",
    );
    for extra in [
        json!({"crumpled": false}),
        json!({"origin": "user"}),
        json!({"replace_all": true}),
        json!({"edits": [{"oldText": "o", "newText": "n"}]}),
    ] {
        let mut arguments = json!({"address": "old", "rename_to": "other"});
        arguments
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let json = refusal(&notes.update(arguments), "invalid_scope");
        assert_eq!(
            json["error"],
            "rename_to is used alone: do not combine it with edits, origin, crumpled, or replace_all"
        );
    }
    let ignored = notes.update(json!({"address": "old", "rename_to": "", "crumpled": false}));
    assert!(
        ok(&ignored).starts_with("unchanged old.md (project proj-12345678): 0 edits"),
        "{}",
        ignored.text
    );
}

#[test]
fn a_huge_diff_is_shortened_to_fit() {
    let notes = Notes::new();
    ok(&notes.write(json!({"address": "plan", "content": "a"})));
    let huge = |_: &Change| "😀".repeat(100_000);
    let output = notes_update(
        &notes.store,
        &parse_arguments(json!({"address": "plan", "edits": [{"oldText": "a", "newText": "b"}]}))
            .unwrap(),
        &huge,
    );
    let text = ok(&output);
    assert!(text.starts_with(
        "updated plan.md (project proj-12345678): 1 edit\ndiff (this receipt's diff was shortened to fit the output budget; the update itself was applied):\n😀"
    ));
    assert_eq!(output.json.to_value()["diff_truncated"], true);
    // As much of the diff as fits: one more code point would not.
    let longest = output.json.len().max(output.text.len());
    assert!(longest > TOOL_OUTPUT_MAX_BYTES - 4, "{longest}");
}

#[test]
fn read_shows_metadata_and_a_window() {
    let notes = Notes::new();
    let extras = format!(
        "status: active\ntags:\n- a\n- b\nhuge: {}\ncrumpledAt: 2026-09-15T12:00:00.000+00:00\n",
        "z".repeat(1100)
    );
    notes.seed(
        "project/proj-12345678/deploy.md",
        9,
        &extras,
        "line one\nline two é😀\n",
    );
    let output = notes.read(json!({"address": "@project/deploy"}));
    assert_snapshot!("read_full", ok(&output));
    let json = output.json.to_value();
    assert_eq!(
        json["metadata"]["extra"],
        json!({"status": "active", "tags": ["a", "b"]})
    );
    assert_eq!(json["metadata"]["omitted_extra"]["keys"], 1);
    let window =
        notes.read(json!({"address": "@project/deploy", "offset_chars": -5, "limit_chars": 2}));
    assert_snapshot!("read_window", ok(&window));
    let json = refusal(
        &notes.read(json!({"address": "@project/deploy", "offset_chars": 22})),
        "invalid_offset",
    );
    assert_eq!(
        json["details"],
        json!({"offset_chars": 22, "total_chars": 21})
    );
    assert_eq!(
        refusal(&notes.read(json!({"address": "nothing"})), "not_found")["error"],
        "note not found"
    );
    refusal(&notes.read(json!({"address": "a/../b"})), "invalid_address");
}

fn seed_library(notes: &Notes) {
    notes.seed(
        "pi/session/s1/checkpoint.md",
        11,
        "project: proj-12345678\n",
        "goal: ship the parser fix\nnext: run the suite\n",
    );
    notes.seed(
        "project/proj-12345678/decisions/db.md",
        10,
        "",
        "We chose Postgres.\nParser lives in src/parser.rs.\n",
    );
    notes.seed("human/style.md", 9, "", "Prefers small commits.\n");
    notes.seed(
        "agents/alice/diary.md",
        12,
        "",
        "parser parser PARSER\nmore parser\nand Parser again\n",
    );
    notes.seed(
        "models/gpt/quirks.md",
        8,
        "crumpledAt: 2026-09-15T13:00:00.000+00:00\n",
        "old parser quirk\n",
    );
    notes.seed("agents/bob/foreign.md", 7, "", "bob's parser notes\n");
}

#[test]
fn list_is_a_recent_first_snapshot() {
    let notes = Notes::new();
    seed_library(&notes);
    assert_snapshot!("list_all", ok(&notes.list(json!({}))));
    assert_snapshot!("list_limited", ok(&notes.list(json!({"limit": 2}))));
    assert_snapshot!(
        "list_wastebasket",
        ok(&notes.list(json!({"wastebasket": true, "pattern": null})))
    );
    assert_eq!(
        ok(&notes.list(json!({"pattern": "@agents/*/**"})))
            .lines()
            .count(),
        3
    );
    assert_eq!(
        ok(&notes.list(json!({"pattern": ""}))).lines().next(),
        Some("4 notes")
    );
    refusal(&notes.list(json!({"pattern": "a\\b"})), "invalid_pattern");
    refusal(&notes.list(json!({"limit": 0})), "invalid_arguments");
}

#[test]
fn an_unreadable_home_is_reported_not_fatal() {
    let notes = Notes::new();
    seed_library(&notes);
    std::fs::remove_dir_all(notes.root.join("human")).unwrap();
    std::fs::write(notes.root.join("human"), "not a directory").unwrap();
    let output = notes.list(json!({}));
    assert!(
        ok(&output).ends_with("\n@human could not be read"),
        "{}",
        output.text
    );
    assert_eq!(
        output.json.to_value()["homes_unavailable"],
        json!(["@human"])
    );
}

#[test]
fn search_shows_matching_lines_recent_first() {
    let notes = Notes::new();
    seed_library(&notes);
    let output = notes.search(json!({"query": ["PARSER", "postgres"], "max_matches_per_file": 2}));
    assert_snapshot!("search", ok(&output));
    let json = output.json.to_value();
    assert_eq!(json["files"][0]["matches_total"], 3);
    assert_eq!(json["files"][0]["matches"].as_array().unwrap().len(), 2);
    let crumpled = notes.search(json!({"query": "quirk", "wastebasket": true}));
    assert_snapshot!("search_wastebasket", ok(&crumpled));
    assert_eq!(
        ok(&notes.search(json!({"query": "quirk"}))),
        "0 files\n1 crumpled note hidden; pass wastebasket to list them"
    );
    for query in [json!([]), json!(""), json!(["x", 1])] {
        refusal(&notes.search(json!({"query": query})), "invalid_query");
    }
    refusal(
        &notes.search(json!({"query": "x", "max_matches_per_file": 0})),
        "invalid_arguments",
    );
}

#[test]
fn a_huge_matching_line_is_shortened() {
    let notes = Notes::new();
    let line = format!("needle {}", "日".repeat(300_000));
    ok(&notes.write(json!({"address": "big", "content": line})));
    ok(&notes.write(json!({"address": "small", "content": "needle"})));
    let output = notes.search(json!({"query": "NEEDLE"}));
    let json = output.json.to_value();
    let files = json["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "only the first row may shrink");
    assert_eq!(files[0]["address"], "small.md");
    assert_eq!(json["more"], 1);
    let big_only = notes.search(json!({"query": "NEEDLE", "pattern": "big.md"}));
    let json = big_only.json.to_value();
    assert_eq!(json["files"][0]["matches"][0]["truncated"], true);
    assert!(ok(&big_only).ends_with(" [line shortened]"));
}

/// A host that offers the store and no history.
struct StoreOnly(NoteStore);

impl ToolContext for StoreOnly {
    fn notes(&mut self) -> Result<NoteStore, Refusal> {
        Ok(self.0.clone())
    }

    fn history(&mut self) -> Result<History, Refusal> {
        Err(Refusal::new(RefusalCode::NoSession, "no history here"))
    }
}

#[test]
fn notes_tools_are_callable_by_name() {
    let notes = Notes::new();
    let mut host = StoreOnly(notes.store.clone());
    let mut call = |name: &str, arguments: Value| call_tool(&mut host, name, arguments);
    assert_eq!(
        call("notes_write", json!({"address": "a", "content": "hello"})).text,
        "created a.md (project proj-12345678)"
    );
    assert!(
        call("notes_read", json!({"address": "a"}))
            .text
            .ends_with("\n\nhello")
    );
    let crumpled = call("notes_update", json!({"address": "a", "crumpled": true})).text;
    assert!(
        crumpled.starts_with("updated a.md (project proj-12345678): metadata only\ndiff:\n"),
        "{crumpled}"
    );
    assert!(
        crumpled.contains("\n+ 7 crumpledAt: "),
        "the line diff: {crumpled}"
    );
    assert!(
        call("notes_list", json!({"wastebasket": true}))
            .text
            .starts_with("1 note\n- a.md")
    );
    assert!(
        call(
            "notes_search",
            json!({"query": "HELLO", "wastebasket": true})
        )
        .text
        .starts_with("1 file\n")
    );
    let notes_tools: Vec<&str> = tools_for(false)
        .filter(|tool| tool.family == ToolFamily::Notes)
        .map(|tool| tool.name)
        .collect();
    assert_eq!(
        notes_tools,
        [
            "notes_write",
            "notes_update",
            "notes_read",
            "notes_list",
            "notes_search"
        ]
    );
    for name in notes_tools {
        assert_eq!(
            call(name, json!({"unknown": true})).json.to_value()["code"],
            "invalid_arguments"
        );
    }
    assert_eq!(
        call("notes_delete", json!({})).json.to_value()["code"],
        "unknown_tool"
    );
}

#[test]
fn every_notes_result_fits_whatever_the_note() {
    let notes = Notes::new();
    for (index, unit) in ["a", "é", "😀", "\u{1}", "\""].iter().enumerate() {
        let body = format!("{}\n{}", unit.repeat(999_900 / unit.len() / 6), "tail");
        let address = format!("big{index}");
        assert_fits(&notes.write(json!({"address": address, "content": body})));
        assert_fits(&notes.read(json!({"address": address, "limit_chars": 50_000})));
        assert_fits(&notes.read(json!({"address": address, "offset_chars": -3})));
        assert_fits(
            &notes.update(
                json!({"address": address, "edits": [{"oldText": "tail", "newText": "end"}]}),
            ),
        );
    }
    assert_fits(&notes.list(json!({})));
    assert_fits(&notes.search(json!({"query": ["a", "é", "😀", "\u{1}", "\""]})));
    assert_fits(&notes.search(json!({"query": "end", "max_matches_per_file": 1})));
}
