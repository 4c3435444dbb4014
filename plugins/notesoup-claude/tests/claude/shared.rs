//! The commands every notesoup binary shares, as `notesoup` has them (their
//! help, on every binary, is snapshotted in `tests/notesoup-e2e`): `doctor`
//! and `dream doctor` as one command, the man page, `history FILE`, and the
//! dream's notes home and dreamer lines.

use notesoup_test_support::dreamer;
use notesoup_test_support::shared_commands::{Binary, ok};

use crate::support::{CHAIN_1, Sandbox, fixture};

/// `notesoup` in `sb`, for the checks every binary shares.
fn notesoup(sb: &Sandbox) -> Binary<'_> {
    Binary::new("notesoup", |args| sb.run(args, b""))
}

#[test]
fn doctor_and_dream_doctor_are_one_command() {
    let sb = Sandbox::new();
    std::fs::write(sb.notes.join("stray.txt"), "x").unwrap();
    notesoup(&sb).assert_doctor_is_dream_doctor(&[]);
}

#[test]
fn the_man_page_names_no_page_that_does_not_exist() {
    notesoup(&Sandbox::new()).assert_man_page("mcp");
}

#[test]
fn history_takes_the_transcript_as_its_first_argument() {
    let sb = Sandbox::new();
    let path = fixture("chain-1-compact.jsonl");
    let path = path.to_str().unwrap();
    let windows = ok(&sb.run(&["history", path, "windows"], b""));
    assert_eq!(
        windows,
        ok(&sb.run(&["history", "--session", path, "windows"], b""))
    );
    assert!(
        windows.starts_with(&format!("session {CHAIN_1}\n")),
        "{windows}"
    );
    let read = ok(&sb.run(&["history", path, "read", r#"{"seq":5}"#], b""));
    assert_eq!(
        read,
        ok(&sb.run(&["history", path, "read", "--seq", "5"], b""))
    );
}

/// A relative `--notes-home` is the home under the current directory for
/// the dreamer too (it starts in the home), and the dreamer's start and end
/// are said in the lines every host's dream says.
#[test]
fn the_dream_makes_its_home_absolute_and_says_its_dreamer_s_lines() {
    let sb = Sandbox::new();
    let args_file = sb.home.join("dreamer-args");
    let stand_in = sb.home.join("claude-stand-in");
    dreamer::recording_failure(&stand_in, &args_file);
    let stand_in = stand_in.to_str().unwrap();
    let output = sb.run(
        &[
            "dream",
            "--notes-home",
            "notes",
            "--force",
            "--claude",
            stand_in,
        ],
        b"",
    );
    assert_eq!(output.status.code(), Some(1), "the stand-in fails the run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "dream: the dreamer is running ({stand_in} -p, at most 1800 s)\n"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("dream: the dreamer failed after "),
        "{stderr}"
    );
    let args = std::fs::read_to_string(&args_file).unwrap();
    let args: Vec<&str> = args.lines().collect();
    let config = args[args.iter().position(|a| *a == "--mcp-config").unwrap() + 1];
    let config: serde_json::Value = serde_json::from_str(config).unwrap();
    let tools = &config["mcpServers"]["dream"]["args"];
    let home = sb.project.join("notes");
    assert_eq!(
        *tools,
        serde_json::json!(["dream-tools", "--notes-home", home]),
        "{config}"
    );
    assert!(
        home.join("dreams").is_dir(),
        "the run's report is in the home"
    );
}
