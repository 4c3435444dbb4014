//! The commands every notesoup binary shares, as `notesoup` has them (their
//! help, on every binary, is snapshotted in `tests/notesoup-e2e`): `doctor`
//! and `dream doctor` as one command, the man page, `history FILE`, and the
//! dream's notes home and dreamer lines.

use std::process::Output;

use crate::support::{CHAIN_1, Sandbox, fixture};

fn ok(output: Output) -> String {
    assert!(
        output.status.success(),
        "exit {}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn doctor_and_dream_doctor_are_one_command() {
    let sb = Sandbox::new();
    std::fs::write(sb.notes.join("stray.txt"), "x").unwrap();
    let doctor = sb.run(&["doctor", "--json"], b"");
    let dream_doctor = sb.run(&["dream", "doctor", "--json"], b"");
    assert_eq!(doctor.status.code(), Some(1), "findings exit 1");
    assert_eq!(dream_doctor.status.code(), Some(1));
    assert_eq!(doctor.stdout, dream_doctor.stdout);
}

#[test]
fn the_man_page_names_no_page_that_does_not_exist() {
    let sb = Sandbox::new();
    let man = ok(sb.run(&["man"], b""));
    assert!(man.contains(".TH notesoup 1"), "{man:.300}");
    for command in [
        "notesoup mcp",
        "notesoup notes list",
        "notesoup dream doctor",
    ] {
        assert!(man.contains(&format!(".SS \"{command}\"")), "{command}");
    }
    assert!(
        !man.contains("(1)"),
        "clap_mangen's notesoup-notes(1) and the like"
    );
    assert!(
        !man.contains("dream-tools"),
        "a hidden command stays hidden"
    );
}

#[test]
fn history_takes_the_transcript_as_its_first_argument() {
    let sb = Sandbox::new();
    let path = fixture("chain-1-compact.jsonl");
    let path = path.to_str().unwrap();
    let windows = ok(sb.run(&["history", path, "windows"], b""));
    assert_eq!(
        windows,
        ok(sb.run(&["history", "--session", path, "windows"], b""))
    );
    assert!(
        windows.starts_with(&format!("session {CHAIN_1}\n")),
        "{windows}"
    );
    let read = ok(sb.run(&["history", path, "read", r#"{"seq":5}"#], b""));
    assert_eq!(
        read,
        ok(sb.run(&["history", path, "read", "--seq", "5"], b""))
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
    std::fs::write(
        &stand_in,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\nexit 3\n",
            args_file.display()
        ),
    )
    .unwrap();
    let mut permissions = std::fs::metadata(&stand_in).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&stand_in, permissions).unwrap();
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
