//! A large store from the command line: a person gets every note `notes
//! list` and `notes search` match (the agent's tools keep to their 32 KiB),
//! and every hint and refusal names a flag that exists, with edits counted
//! from 1.

use serde_json::Value;

use super::{Bin, Machine};

const NOTES: usize = 1518;

fn large_store(machine: &Machine) {
    let human = machine.notes().join("human");
    std::fs::create_dir_all(&human).unwrap();
    for index in 0..NOTES {
        std::fs::write(
            human.join(format!("n{index:04}.md")),
            format!("a note about tokenizers, number {index}\n"),
        )
        .unwrap();
    }
}

#[test]
fn every_note_of_a_large_store_is_listed() {
    let machine = Machine::new();
    large_store(&machine);
    for bin in Bin::ALL {
        let all = machine.run(bin, &["notes", "list"]);
        let text = all.ok();
        assert!(text.starts_with(&format!("{NOTES} notes\n")), "{bin:?}");
        assert_eq!(
            text.lines()
                .filter(|line| line.starts_with("- @human/"))
                .count(),
            NOTES,
            "{bin:?}"
        );
        assert!(!text.contains("omitted"), "{bin:?}");
        assert!(text.len() > 32 * 1024, "past the tools' bound");

        let json: Value =
            serde_json::from_str(machine.run(bin, &["notes", "list", "--json"]).ok()).unwrap();
        assert_eq!(json["files"].as_array().unwrap().len(), NOTES, "{bin:?}");
        assert_eq!(json["more"], 0);

        let limited = machine.run(bin, &["notes", "list", "--limit", "5"]);
        assert!(
            limited.ok().ends_with(&format!(
                "\n{} more matching notes omitted; narrow with --pattern\n",
                NOTES - 5
            )),
            "{bin:?}: {limited:?}"
        );

        // The hint's flag exists, and the bare pattern is the same.
        let narrowed = machine.run(bin, &["notes", "list", "--pattern", "@human/n00[0-1]*"]);
        let bare = machine.run(bin, &["notes", "list", "@human/n00[0-1]*"]);
        assert_eq!(narrowed.ok(), bare.ok(), "{bin:?}");
        let single = machine.run(bin, &["notes", "list", "--pattern", "@human/n150?.md"]);
        assert!(single.ok().starts_with("10 notes\n"), "{bin:?}: {single:?}");

        let found = machine.run(bin, &["notes", "search", "tokenizers"]);
        assert!(
            found.ok().starts_with(&format!("{NOTES} files\n")),
            "{bin:?}: {:.200}",
            found.stdout
        );
        assert!(!found.stdout.contains("omitted"), "{bin:?}");
        assert!(
            found
                .stdout
                .contains("\n  line 1 (--offset 13): a note about tokenizers, number 0\n"),
            "{bin:?}"
        );
        in_cli_words(bin, &found.stdout);
    }
}

/// The words of a tool that a person cannot type: its parameters' names.
const TOOL_WORDS: &[&str] = &[
    "replace_all",
    "pass wastebasket",
    "offset_chars",
    "max_matches_per_file",
    "rename_to",
    "oldText",
    "newText",
    "edit_index",
    "history_list(",
];

#[track_caller]
fn in_cli_words(bin: Bin, text: &str) {
    for word in TOOL_WORDS {
        assert!(!text.contains(word), "{bin:?} says {word:?}: {text}");
    }
}

#[test]
fn hints_and_refusals_name_the_flags_that_exist() {
    let machine = Machine::new();
    for bin in Bin::ALL {
        let home = format!("@human/{}", bin.name());
        let note = |name: &str| format!("{home}/{name}");
        let write = |name: &str, body: &str| {
            machine
                .run(bin, &["notes", "write", &note(name), body])
                .ok()
                .to_owned()
        };
        write("twice.md", "first line\nan x and an x\n");
        write("long.md", &"0123456789".repeat(40));
        write("gone.md", "soon crumpled\n");
        write("other.md", "another live note\n");

        // The second edit is ambiguous: counted from 1, as the flags are.
        let ambiguous = machine.run(
            bin,
            &[
                "notes",
                "update",
                &note("twice.md"),
                "--old",
                "first",
                "--new",
                "1st",
                "--old",
                "an x",
                "--new",
                "a y",
            ],
        );
        assert_eq!(ambiguous.code, Some(1), "{bin:?}: {ambiguous:?}");
        assert_eq!(
            ambiguous.stderr,
            "error: ambiguous_edit: edit 2: --old occurs 2 times (lines 2, 2); add surrounding text to make it unique or pass --all\n",
            "{bin:?}"
        );

        let missing = machine.run(
            bin,
            &[
                "notes",
                "update",
                &note("twice.md"),
                "--old",
                "absent",
                "--new",
                "x",
            ],
        );
        assert!(
            missing
                .stderr
                .contains("edit 1: --old was not found in the note"),
            "{bin:?}: {missing:?}"
        );
        in_cli_words(bin, &missing.stderr);

        let onto_live = machine.run(
            bin,
            &["notes", "rename", &note("twice.md"), &note("other.md")],
        );
        assert_eq!(onto_live.code, Some(1), "{bin:?}: {onto_live:?}");
        assert!(
            onto_live.stderr.contains("the new address is a live note"),
            "{bin:?}: {onto_live:?}"
        );
        in_cli_words(bin, &onto_live.stderr);

        let zero = machine.run(
            bin,
            &["notes", "search", "x", "--max-matches-per-file", "0"],
        );
        assert!(
            zero.stderr.contains("--max-matches-per-file"),
            "{bin:?}: {zero:?}"
        );
        in_cli_words(bin, &zero.stderr);

        let part = machine.run(bin, &["notes", "read", &note("long.md"), "--limit", "100"]);
        assert!(
            part.ok()
                .trim_end()
                .ends_with("Use --offset 100 to continue.]"),
            "{bin:?}: {part:?}"
        );
        in_cli_words(bin, &part.stdout);

        // A crumple edits no text: the receipt says what it changed.
        let crumpled = machine.run(bin, &["notes", "crumple", &note("gone.md")]);
        assert!(
            crumpled.ok().starts_with(&format!(
                "updated {}: metadata only\ndiff:\n",
                note("gone.md")
            )),
            "{bin:?}: {crumpled:?}"
        );
        assert!(
            crumpled.stdout.contains("\n+"),
            "the diff shows crumpledAt: {crumpled:?}"
        );
        let listed = machine.run(bin, &["notes", "list", "--pattern", &format!("{home}/**")]);
        assert!(
            listed
                .ok()
                .ends_with("\n1 crumpled note hidden; pass --wastebasket to list them\n"),
            "{bin:?}: {listed:?}"
        );
        in_cli_words(bin, &listed.stdout);
        let wastebasket = machine.run(
            bin,
            &[
                "notes",
                "list",
                "--wastebasket",
                "--pattern",
                &format!("{home}/**"),
            ],
        );
        assert!(
            wastebasket
                .ok()
                .starts_with(&format!("1 note\n- {}", note("gone.md"))),
            "{bin:?}: {wastebasket:?}"
        );
    }
}
