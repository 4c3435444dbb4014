//! The human command line: `notes`, `boot`, `history`, `doctor`.

use std::process::Output;

use notesoup_test_support::files::put;
use notesoup_test_support::shared_commands::{self, Binary};

use crate::support::{CHAIN_1, Sandbox, fake_token, fixture};

const S1: &str = "77777777-7777-4777-8777-777777777777";

fn ok(output: Output) -> String {
    shared_commands::ok(&output)
}

fn refused(output: Output) -> String {
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    String::from_utf8(output.stderr).unwrap()
}

#[test]
fn notes_work_on_the_durable_homes_without_a_session() {
    let sb = Sandbox::new();
    let key = notesoup_core::notes::project_key(&sb.project);
    assert_eq!(
        ok(sb.run(
            &[
                "notes",
                "write",
                "@project/style.md",
                "# Style\nTabs, not spaces."
            ],
            b""
        )),
        format!("created @project/style.md (project {key})\n")
    );
    assert_eq!(
        ok(sb.run(
            &["notes", "write", "@human/prefs.md"],
            b"# Prefs\nShort answers.\n"
        )),
        "created @human/prefs.md\n"
    );
    let read = ok(sb.run(&["notes", "read", "@project/style"], b""));
    assert!(
        read.starts_with(&format!(
            "@project/style.md (project {key})\norigin user | created "
        )),
        "{read}"
    );
    assert!(read.ends_with("\n\n# Style\nTabs, not spaces.\n"), "{read}");
    let list = ok(sb.run(&["notes", "list"], b""));
    assert!(list.starts_with("2 notes\n"), "{list}");
    let search = ok(sb.run(&["notes", "search", "TABS"], b""));
    assert!(
        search.starts_with("1 file\n- @project/style.md"),
        "{search}"
    );
    let error = refused(sb.run(&["notes", "write", "checkpoint.md", "x"], b""));
    assert!(
        error.starts_with("error: no_session: no session yet"),
        "{error}"
    );
    let missing = refused(sb.run(&["notes", "read", "@project/nope.md"], b""));
    assert_eq!(missing, "error: not_found: note not found\n");
}

#[test]
fn notes_use_the_latest_session_for_bare_addresses() {
    let sb = Sandbox::new();
    sb.hook("session-start", &sb.payload("SessionStart-startup", S1))
        .unwrap();
    ok(sb.run(&["notes", "write", "checkpoint.md", "# Goal\nship"], b""));
    assert!(
        sb.notes
            .join("pi/session")
            .join(S1)
            .join("checkpoint.md")
            .is_file()
    );
    let boot = ok(sb.run(&["boot"], b""));
    assert!(
        boot.contains(&format!("Current context window id: claude:{S1}:1\n")),
        "{boot}"
    );
    assert!(boot.contains("Goal — checkpoint.md · "), "{boot}");
    let explicit = ok(sb.run(&["boot", "--session", S1], b""));
    assert_eq!(explicit, boot);
    let unknown = refused(sb.run(&["boot", "--session", "nope"], b""));
    assert_eq!(unknown, "notesoup boot: no session nope is recorded\n");
}

#[test]
fn boot_without_any_session_previews_a_root_window() {
    let sb = Sandbox::new();
    let boot = ok(sb.run(&["boot"], b""));
    assert!(boot.starts_with("<context_window>\nAgent name: claude (brain: claude)\nFirst context window id: claude:preview:1\n"), "{boot}");
    assert!(
        boot.trim_end().ends_with(
            "None yet. A blank slate is a fine place to start — just don't finish there."
        )
    );
    // No session is recorded, so none is read: the notes of a session that
    // happens to be called `preview` are not the preview's.
    let stray = sb.notes.join("pi/session/preview");
    put(&stray.join("stray.md"), "not the preview's");
    let again = ok(sb.run(&["boot"], b""));
    assert!(!again.contains("stray"), "{again}");
}

#[test]
fn history_reads_a_transcript_file_or_the_recorded_session() {
    let sb = Sandbox::new();
    let path = fixture("chain-1-compact.jsonl");
    // `notesoup history --transcript <fixture> <args>`.
    let history = |args: &[&str]| {
        let mut all = vec!["history", "--transcript", path.to_str().unwrap()];
        all.extend_from_slice(args);
        sb.run(&all, b"")
    };
    // How each window ended and its fill, as `report` has them: the
    // boundary's `preTokens`, the open window's newest reply.
    let windows = ok(history(&["windows"]));
    assert_eq!(
        windows,
        format!(
            "session {CHAIN_1}\nwindow claude:{CHAIN_1}:1 | seqs 1-18 | 13 events | ended: host_compaction at 19 tokens\nwindow claude:{CHAIN_1}:2 | seqs 19-26 | 8 events | open at 15100 tokens\n"
        )
    );
    let read = ok(history(&["read", "5"]));
    assert!(read.contains("Bash {\"command\":\"echo hello\""), "{read}");
    let slot = refused(history(&["read", "6"]));
    assert!(
        slot.starts_with(
            "error: not_an_event: seq 6 is a tool result already shown inside the call at seq 5"
        ),
        "{slot}"
    );
    let search = ok(history(&["search", "after compact", "--role", "assistant"]));
    assert!(
        search.starts_with(&format!("seq 26 | window claude:{CHAIN_1}:2 | assistant")),
        "{search}"
    );

    // Roles as a comma list or as repeated flags: the same page.
    let roles = |args: &[&str]| ok(history(&[&["list"], args].concat()));
    let comma = roles(&["--role", "user,assistant"]);
    assert_eq!(comma, roles(&["--role", "user", "--role", "assistant"]));
    assert!(
        comma.contains("| user\n") && comma.contains("| assistant\n"),
        "{comma}"
    );
    assert!(!comma.contains("| context\n"), "{comma}");

    let none = refused(sb.run(&["history", "windows"], b""));
    assert!(
        none.contains("no Claude Code session is recorded for this project"),
        "{none}"
    );
}

#[test]
fn doctor_checks_the_notes_home() {
    let sb = Sandbox::new();
    assert_eq!(
        ok(sb.run(&["doctor"], b"")),
        format!("doctor: OK ({})\n", sb.notes.display())
    );
    std::fs::write(sb.notes.join("stray.txt"), "x").unwrap();
    let output = sb.run(&["doctor"], b"");
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stdout).contains("stray.txt: unexpected root entry"));

    let output = sb.run(&["doctor", "--json"], b"");
    assert_eq!(output.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["ok"], false);
    assert_eq!(
        report["findings"],
        serde_json::json!([{"path": "stray.txt", "message": "unexpected root entry"}])
    );
}

/// The guard is the user's to turn off: a project's `.claude/notesoup.json`
/// comes with its repository, so its `false` is ignored with a warning,
/// and only `~/.claude/notesoup.json` turns the guard off.
#[test]
fn the_credential_guard_follows_the_user_settings_never_a_project_s_false() {
    let sb = Sandbox::new();
    // The shape alone is not GitHub's (no valid checksum); named a token,
    // the random value is refused.
    let content = format!("deploy token: {}\n", fake_token());
    let refusal = refused(sb.run(&["notes", "write", "@project/deploy.md", &content], b""));
    assert!(refusal.starts_with("error: secret_detected: "), "{refusal}");
    let key = notesoup_core::notes::project_key(&sb.project);
    let note = sb.notes.join("project").join(key).join("deploy.md");
    assert!(!note.exists(), "nothing is written");
    sb.project_settings(r#"{"notesoup":{"secretGuard":false}}"#);
    let refusal = refused(sb.run(&["notes", "write", "@project/deploy.md", &content], b""));
    let lines: Vec<&str> = refusal.lines().collect();
    assert_eq!(
        lines[0],
        "notesoup: a project's own settings cannot turn notesoup.secretGuard off; keeping the credential guard on (turn it off in your own settings)."
    );
    assert!(
        lines[1].starts_with("error: secret_detected: "),
        "{refusal}"
    );
    assert!(!note.exists(), "nothing is written");
    std::fs::write(
        sb.home.join(".claude/notesoup.json"),
        r#"{"notesoup":{"secretGuard":false}}"#,
    )
    .unwrap();
    ok(sb.run(&["notes", "write", "@project/deploy.md", &content], b""));
    let read = ok(sb.run(&["notes", "read", "@project/deploy.md"], b""));
    assert!(read.contains(&fake_token()), "{read}");
}

#[test]
fn the_boot_keeps_within_the_configured_bound() {
    let sb = Sandbox::new();
    // A project MAP far larger than any bound.
    let map: String = (0..3000)
        .map(|i| format!("- line {i} of the map\n"))
        .collect();
    ok(sb.run(&["notes", "write", "@project/MAP.md"], map.as_bytes()));
    let chars = |text: &str| text.trim_end().chars().count();
    let default = ok(sb.run(&["boot"], b""));
    assert!(chars(&default) <= 10_000, "{}", chars(&default));
    assert!(chars(&default) > 6_000, "{}", chars(&default));
    sb.project_settings(r#"{"notesoup":{"bootMaxChars":6000}}"#);
    let bounded = ok(sb.run(&["boot"], b""));
    assert!(chars(&bounded) <= 6_000, "{}", chars(&bounded));
    assert!(bounded.contains("line 0 of the map"), "{bounded}");
    let stats = ok(sb.run(&["boot", "--stats"], b""));
    let lines: Vec<&str> = stats.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["section", "chars", "~tokens"]
    );
    assert!(lines[1].starts_with("identity "), "{stats}");
    assert!(lines[2].starts_with("protocol "), "{stats}");
    assert!(
        lines.iter().any(|l| l.starts_with("shelf project ")),
        "{stats}"
    );
    let whole: Vec<&str> = lines.last().unwrap().split_whitespace().collect();
    assert_eq!(whole[..2], ["whole", "boot"], "{stats}");
    assert_eq!(whole[2].parse::<usize>().unwrap(), chars(&bounded));
    assert_eq!(
        whole[3].parse::<usize>().unwrap(),
        chars(&bounded).div_ceil(4)
    );
}

#[test]
fn doctor_clean_lists_then_removes_stale_temporary_files() {
    let sb = Sandbox::new();
    let human = sb.notes.join("human");
    put(&human.join("prefs.md"), "# Prefs\n");
    // A writer long gone (no such pid) two minutes ago.
    let stale = human.join(".notesoup-999999999-0123456789abcdef0123456789abcdef.tmp");
    std::fs::write(&stale, "half a note").unwrap();
    let file = std::fs::File::options().write(true).open(&stale).unwrap();
    file.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(120))
        .unwrap();
    drop(file);
    let dry = ok(sb.run(&["doctor", "clean"], b""));
    assert!(
        dry.contains("would remove human/.notesoup-999999999-"),
        "{dry}"
    );
    assert!(stale.exists());
    let applied = ok(sb.run(&["doctor", "clean", "--apply"], b""));
    assert!(
        applied.contains("removed human/.notesoup-999999999-"),
        "{applied}"
    );
    assert!(!stale.exists());
    assert!(human.join("prefs.md").exists());
    let again = ok(sb.run(&["doctor", "clean"], b""));
    assert!(again.contains("no stale temporary files"), "{again}");
}

/// Blank content (empty once a byte order mark, a frontmatter block and
/// whitespace are stripped), from stdin or as the argument, never wipes a
/// note; `--allow-empty` writes it.
#[test]
fn blank_content_never_wipes_a_note() {
    let sb = Sandbox::new();
    let original = "# Decisions\nTabs.\n";
    ok(sb.run(
        &["notes", "write", "@project/decisions.md"],
        original.as_bytes(),
    ));
    let blanks = [
        "",
        " ",
        "\n",
        "\r\n",
        "\t \n\n  ",
        "\u{feff}",
        "\u{feff}\n \n",
        "---\norigin: user\n---\n",
        "---\norigin: user\n---\n\n   \n",
        "\u{feff}---\r\ntitle: x\r\n---\r\n\r\n",
        "---\n---\n",
        "\u{3000}\u{a0}\n",
        "\u{feff}\u{feff}",
    ];
    let unchanged = |what: &str| {
        let read = ok(sb.run(&["notes", "read", "@project/decisions.md"], b""));
        assert!(read.ends_with(original), "{what:?}: {read}");
    };
    for blank in blanks {
        for as_argument in [false, true] {
            let output = if as_argument {
                sb.run(
                    &["notes", "write", "@project/decisions.md", "--", blank],
                    b"",
                )
            } else {
                sb.run(
                    &["notes", "write", "@project/decisions.md"],
                    blank.as_bytes(),
                )
            };
            let refusal = refused(output);
            assert!(
                refusal.contains("would leave @project/decisions.md blank")
                    && refusal.contains("nothing was written")
                    && refusal.contains("--allow-empty"),
                "{blank:?}: {refusal}"
            );
            unchanged(blank);
        }
    }
    // Text after the frontmatter is not blank.
    ok(sb.run(&["notes", "write", "@human/x.md"], b"---\na: 1\n---\n\nx"));
    // Edits that would leave the body blank are refused the same way.
    let refusal = refused(sb.run(
        &[
            "notes",
            "update",
            "@project/decisions.md",
            "--old",
            "# Decisions\nTabs.",
            "--new",
            " ",
        ],
        b"",
    ));
    assert!(refusal.contains("--allow-empty"), "{refusal}");
    unchanged("update");
    // A partial edit is not.
    ok(sb.run(
        &[
            "notes",
            "update",
            "@project/decisions.md",
            "--old",
            "Tabs.",
            "--new",
            "Spaces.",
        ],
        b"",
    ));
    ok(sb.run(
        &[
            "notes",
            "update",
            "@project/decisions.md",
            "--old",
            "# Decisions\nSpaces.",
            "--new",
            "\n",
            "--allow-empty",
        ],
        b"",
    ));
    for blank in blanks {
        ok(sb.run(
            &["notes", "write", "@project/decisions.md", "--allow-empty"],
            blank.as_bytes(),
        ));
    }
    let read = ok(sb.run(&["notes", "read", "@project/decisions.md"], b""));
    assert!(!read.contains("Decisions"), "{read}");
}

#[test]
fn a_closed_stdout_ends_quietly() {
    let sb = Sandbox::new();
    for i in 0..30 {
        ok(sb.run(&["notes", "write", &format!("@human/n{i}.md"), "x"], b""));
    }
    // A reader that reads nothing and goes away, as `| head -0` does.
    let mut child = crate::support::spawn(
        sb.command(&crate::support::notesoup_bin(), &["notes", "list"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped()),
    );
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.code(), Some(0), "{stderr}");
}

#[test]
fn flags_go_before_or_after_the_subcommand_and_json_reads_back() {
    let sb = Sandbox::new();
    let project = sb.project.to_str().unwrap();
    ok(sb.run(&["notes", "write", "@project/a.md", "# A"], b""));
    let before = ok(sb.run(&["notes", "--cwd", project, "list"], b""));
    let after = ok(sb.run(&["notes", "list", "--cwd", project], b""));
    assert_eq!(before, after);
    let missing = refused(sb.run(&["notes", "list", "--cwd", "/no/such/dir"], b""));
    assert!(
        missing.contains("--cwd /no/such/dir: not a directory"),
        "{missing}"
    );
    let listed: serde_json::Value =
        serde_json::from_str(&ok(sb.run(&["notes", "list", "--json"], b""))).unwrap();
    assert_eq!(listed["files"][0]["address"], "@project/a.md", "{listed}");
    let refusal = refused(sb.run(&["notes", "read", "@project/none.md", "--json"], b""));
    let refusal: serde_json::Value = serde_json::from_str(&refusal).unwrap();
    assert_eq!(refusal["code"], "not_found");
    let boot: serde_json::Value =
        serde_json::from_str(&ok(sb.run(&["boot", "--json"], b""))).unwrap();
    assert_eq!(boot["window"], "claude:preview:1");
    assert!(
        boot["boot"]
            .as_str()
            .unwrap()
            .starts_with("<context_window>")
    );
}

#[test]
fn notes_update_crumple_and_rename_from_the_command_line() {
    let sb = Sandbox::new();
    ok(sb.run(
        &["notes", "write", "@project/plan.md", "# Plan\nship it\n"],
        b"",
    ));
    let updated = ok(sb.run(
        &[
            "notes",
            "update",
            "@project/plan.md",
            "--old",
            "ship it",
            "--new",
            "shipped",
        ],
        b"",
    ));
    assert!(updated.contains("-2 ship it\n+2 shipped"), "{updated}");
    let unpaired = refused(sb.run(
        &[
            "notes",
            "update",
            "@project/plan.md",
            "--old",
            "a",
            "--old",
            "b",
            "--new",
            "c",
        ],
        b"",
    ));
    assert!(
        unpaired.contains("every --old needs its --new"),
        "{unpaired}"
    );
    ok(sb.run(&["notes", "crumple", "@project/plan.md"], b""));
    assert!(ok(sb.run(&["notes", "list"], b"")).starts_with("0 notes"));
    ok(sb.run(&["notes", "uncrumple", "@project/plan.md"], b""));
    ok(sb.run(
        &["notes", "rename", "@project/plan.md", "@project/roadmap.md"],
        b"",
    ));
    let read = ok(sb.run(&["notes", "read", "@project/roadmap.md"], b""));
    assert!(read.ends_with("# Plan\nshipped\n"), "{read}");
}

/// `--notes-home` names the notes root a command reads and writes, over
/// `PI_NOTES_HOME`.
#[test]
fn notes_home_names_the_notes_root() {
    let sb = Sandbox::new();
    let other = sb.project.join("other-notes");
    let home = other.to_str().unwrap();
    ok(sb.run(
        &[
            "notes",
            "write",
            "@human/x.md",
            "hi\n",
            "--notes-home",
            home,
        ],
        b"",
    ));
    assert!(
        std::fs::read_to_string(other.join("human/x.md"))
            .unwrap_or_default()
            .ends_with("---\n\nhi\n")
    );
    assert!(!sb.notes.join("human/x.md").exists());
}

#[test]
fn sessions_lists_the_recorded_sessions_of_the_project() {
    let sb = Sandbox::new();
    assert!(
        ok(sb.run(&["sessions"], b""))
            .starts_with("0 sessions\nno Claude Code session is recorded for "),
        "with none, how one gets recorded"
    );
    sb.hook("session-start", &sb.payload("SessionStart-startup", S1))
        .unwrap();
    let listed = ok(sb.run(&["sessions"], b""));
    assert!(listed.starts_with("1 session\n- "), "{listed}");
    assert!(
        listed.contains(&format!("{S1} | ")) && listed.contains(&format!("window claude:{S1}:1")),
        "{listed}"
    );
    let rows: serde_json::Value =
        serde_json::from_str(&ok(sb.run(&["sessions", "--json"], b""))).unwrap();
    assert_eq!(rows[0]["sessionId"], S1);
    // Each session with when its record was last touched, to the second.
    let record = sb.data.join("sessions").join(format!("{S1}.json"));
    std::fs::File::options()
        .write(true)
        .open(&record)
        .unwrap()
        .set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_767_323_045_600))
        .unwrap();
    let listed = ok(sb.run(&["sessions"], b""));
    assert!(
        listed.contains(&format!("{S1} | 2026-01-02T03:04:06Z | ")),
        "{listed}"
    );
    // `--cwd` names the project; it must be a folder.
    let project = sb.project.to_str().unwrap();
    assert!(ok(sb.run(&["sessions", "--cwd", project], b"")).starts_with("1 session\n- "));
    let file = sb.project.join("file");
    std::fs::write(&file, "").unwrap();
    let refused = sb.run(&["sessions", "--cwd", file.to_str().unwrap()], b"");
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains(&format!("--cwd {}: not a directory", file.display())),
        "{refused:?}"
    );
    // Records that cannot be listed are an error, not "none yet".
    std::fs::remove_dir_all(sb.data.join("sessions")).unwrap();
    std::fs::write(sb.data.join("sessions"), "").unwrap();
    let failed = sb.run(&["sessions"], b"");
    assert_eq!(failed.status.code(), Some(1), "{failed:?}");
    let said = String::from_utf8_lossy(&failed.stderr);
    assert!(said.contains(&format!("{}: ", sb.data.display())), "{said}");
}

#[test]
fn every_subcommand_has_help() {
    let sb = Sandbox::new();
    let binary = Binary::new("notesoup", |args| sb.run(args, b""));
    binary.assert_answers_help(&[
        &[],
        &["sessions"],
        &["mcp"],
        &["hook"],
        &["mod"],
        &["install-plugin"],
    ]);
    binary.assert_answers_help(shared_commands::SHARED);
}

#[test]
fn completions_and_the_man_page_come_from_the_command_line_definitions() {
    let sb = Sandbox::new();
    Binary::new("notesoup", |args| sb.run(args, b"")).assert_completions_name("install-plugin");
    let man = ok(sb.run(&["man"], b""));
    assert!(
        man.starts_with(".ie") || man.contains(".TH notesoup"),
        "{man:.300}"
    );
    assert!(man.contains("install\\-plugin") || man.contains("install-plugin"));
}
