//! The `notesoup-pi` command line: `context`, `history`, `dream doctor`,
//! `--version`, `--help`, and how it fails.

use std::process::Command;

use notesoup_test_support::child;
use notesoup_test_support::shared_a::plain_binary;

fn golden(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

fn run(args: &[&str]) -> (bool, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_notesoup-pi"))
        .args(args)
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8(output.stdout).unwrap(),
    )
}

#[test]
fn context_prints_what_pi_sends_after_a_boundary() {
    for name in ["notesoup-boundary", "notesoup-settle", "agent-loop"] {
        let file = golden(&format!("{name}.jsonl"));
        let (ok, stdout) = run(&["context", file.to_str().unwrap()]);
        assert!(ok, "{name}");
        let ours: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        let expected: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(golden(&format!("{name}.expected.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(
            ours, expected["leaves"][0]["llm"],
            "{name}: Pi's own convertToLlm"
        );
    }
    // A legacy window is sliced at its boot, as notesoup sends it.
    let (ok, stdout) = run(&["context", golden("legacy-marker.jsonl").to_str().unwrap()]);
    assert!(ok);
    assert!(!stdout.contains("Old window work."));
    assert!(stdout.contains("Legacy boot."));
}

#[test]
fn history_prints_the_tool_text() {
    let file = golden("retain-none.jsonl");
    let (ok, stdout) = run(&["history", file.to_str().unwrap(), "windows"]);
    assert!(ok);
    assert_eq!(
        stdout,
        "session 0195f000-0000-7000-8000-000000000005\n\
         window pcw:0195f000:root | seqs 1-5 | 5 events | ended: budget at 920 tokens\n\
         window pcw:0195f000:aaaa1111 | seqs 6-12 | 7 events | ended: hard_reserve at 920 tokens\n\
         window pcw:0195f000:bbbb2222 | seqs 13-14 | 2 events | open\n"
    );
    let (ok, stdout) = run(&["history", file.to_str().unwrap(), "read", r#"{"seq":2}"#]);
    assert!(ok);
    assert!(stdout.contains("Work before the reset."));
    let refused = Command::new(env!("CARGO_BIN_EXE_notesoup-pi"))
        .args(["history", file.to_str().unwrap(), "read", r#"{"seq":999}"#])
        .output()
        .unwrap();
    assert_eq!(
        refused.status.code(),
        Some(1),
        "a refusal fails the command"
    );
    assert!(refused.stdout.is_empty(), "a refusal is not output");
    let stderr = String::from_utf8(refused.stderr).unwrap();
    assert!(stderr.starts_with("error: unknown_seq"), "{stderr}");
}

#[test]
fn a_file_that_is_not_a_pi_session_is_refused_by_every_reader() {
    let dir = tempfile::tempdir().unwrap();
    // A Claude Code transcript line: JSON, but no Pi session header.
    let file = dir.path().join("other.jsonl");
    std::fs::write(&file, "{\"type\":\"user\",\"uuid\":\"u1\"}\n").unwrap();
    let path = file.to_str().unwrap();
    for args in [
        vec!["history", path, "windows"],
        vec!["report", path],
        vec!["context", path],
        vec!["boot", "--session", path],
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_notesoup-pi"))
            .args(&args)
            .env("PI_NOTES_HOME", dir.path().join("notes"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
        assert!(
            stderr.contains("other.jsonl: not a Pi session file (no header)"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn version_names_the_pi_release_and_the_protocol() {
    let (ok, stdout) = run(&["--version"]);
    assert!(ok);
    assert_eq!(
        stdout,
        format!(
            "notesoup-pi {} (Pi 1.6.0, bridge protocol {})\n",
            env!("CARGO_PKG_VERSION"),
            notesoup_pi::bridge::protocol::PROTOCOL_VERSION
        )
    );
}

/// A reader that has gone away ends the command quietly: status 0, no
/// panic on stderr. The pipe's read end is closed before the command starts
/// writing, so its first write fails.
#[test]
fn a_closed_pipe_ends_every_printing_command_quietly() {
    let golden_file = golden("agent-loop.jsonl");
    let file = golden_file.to_str().unwrap();
    for args in [vec!["context", file], vec!["history", file, "list"]] {
        child::assert_quiet_without_a_reader(
            Command::new(env!("CARGO_BIN_EXE_notesoup-pi")).args(&args),
            &format!("{args:?}"),
        );
    }
}

/// Every subcommand answers `--help`; a mistake is refused on stderr with
/// status 2.
#[test]
fn every_subcommand_answers_help() {
    let binary = plain_binary("notesoup-pi", env!("CARGO_BIN_EXE_notesoup-pi"));
    binary.assert_answers_help(&[
        &[],
        &["serve"],
        &["install"],
        &["history"],
        &["context"],
        &["dream"],
    ]);
    binary.assert_refused(&["history", "--limit", "many"], "--limit");
}

/// `history … search` takes plain flags as well as a JSON object.
#[test]
fn history_takes_plain_flags() {
    let file = golden("retain-none.jsonl");
    let file = file.to_str().unwrap();
    let (ok, by_flags) = run(&["history", file, "search", "--query", "boot", "--limit", "2"]);
    assert!(ok, "{by_flags}");
    let (ok, by_json) = run(&["history", file, "search", r#"{"query":"boot","limit":2}"#]);
    assert!(ok);
    assert_eq!(by_flags, by_json);
    let (ok, json) = run(&["history", file, "windows", "--json"]);
    assert!(ok);
    let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(parsed["windows"].as_array().unwrap().len(), 3, "{json}");
    let (ok, read) = run(&["history", file, "read", "--seq", "1"]);
    assert!(ok, "{read}");
    let (_, by_json) = run(&["history", file, "read", r#"{"seq":1}"#]);
    assert_eq!(read, by_json);
}

/// A missing file is one line on stderr, the OS error said once.
#[test]
fn a_missing_file_says_the_os_error_once() {
    for command in ["context", "history"] {
        let mut args = vec![command, "/nonexistent/session.jsonl"];
        if command == "history" {
            args.push("windows");
        }
        let output = Command::new(env!("CARGO_BIN_EXE_notesoup-pi"))
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{command}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(stderr.matches("os error 2").count(), 1, "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
}

/// `dream` runs with the notes home given.
fn dream(args: &[&str], home: &std::path::Path) -> (i32, String, String) {
    child::outcome(
        Command::new(env!("CARGO_BIN_EXE_notesoup-pi"))
            .args(args)
            .arg("--notes-home")
            .arg(home),
    )
}

/// An unknown subcommand is refused with status 2 (the demo is
/// `notesoup-pi-reference demo`).
#[test]
fn an_unknown_subcommand_is_refused() {
    for command in ["nonsense", "demo"] {
        let output = Command::new(env!("CARGO_BIN_EXE_notesoup-pi"))
            .arg(command)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{command}");
        assert!(output.stdout.is_empty(), "{command}");
    }
}

/// `dream --script` is refused: the scripted dreamer is the reference
/// host's.
#[test]
fn dream_script_points_to_the_reference_host() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("notes");
    let (code, out, err) = dream(&["dream", "--script", "steps.json"], &home);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.contains("notesoup-pi-reference dream --script"),
        "{err}"
    );
}

#[test]
fn doctor_clean_lists_then_removes_stale_temporary_files() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("notes");
    // A temporary file of a write whose process is long gone (no kernel
    // hands out such a pid), an hour old.
    let stale = home.join("human/.notesoup-999999999-0123456789abcdef0123456789abcdef.tmp");
    notesoup_test_support::files::put(&stale, "partial");
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&stale)
        .unwrap()
        .set_modified(hour_ago)
        .unwrap();

    let (code, stdout, _) = dream(&["dream", "doctor", "clean"], &home);
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        "would remove human/.notesoup-999999999-0123456789abcdef0123456789abcdef.tmp\ndoctor clean: 1 stale temporary file; run again with --apply to remove it\n"
    );
    assert!(stale.exists(), "a dry run removes nothing");

    let (code, stdout, _) = dream(&["dream", "doctor", "clean", "--apply"], &home);
    assert_eq!(code, 0);
    assert!(
        stdout.starts_with("removed human/.notesoup-999999999-"),
        "{stdout}"
    );
    assert!(!stale.exists());
}

/// `notesoup-pi install` with `pi` off PATH, in a home of its own.
fn install(home: &std::path::Path, args: &[&str]) -> std::process::Output {
    let no_pi = home.join("empty-path");
    std::fs::create_dir_all(&no_pi).unwrap();
    Command::new(env!("CARGO_BIN_EXE_notesoup-pi"))
        .arg("install")
        .args(args)
        .env("HOME", home)
        .env_remove("XDG_DATA_HOME")
        .env("PATH", &no_pi)
        .output()
        .unwrap()
}

/// Every file of the package, as the installer writes it.
const PACKAGE_FILES: [&str; 9] = [
    "package.json",
    "extensions/notesoup.ts",
    "extensions/payload.ts",
    "extensions/ready.json",
    "skills/memory/SKILL.md",
    "skills/dream/SKILL.md",
    "playbook.md",
    "dreamer/dream.ts",
    "sidecar.json",
];

/// `--print` writes nothing; an install never writes through a link planted
/// at any of its files, never over a folder of someone else's files, and
/// installs again over its own.
#[test]
fn install_writes_only_its_own_files_and_never_through_links() {
    use notesoup_test_support::planted::{self, Victim};
    let temp = tempfile::tempdir().unwrap();
    let home = temp.path();
    let dir = home.join("pkg");
    let dir_arg = dir.to_str().unwrap();
    let stderr =
        |output: &std::process::Output| String::from_utf8_lossy(&output.stderr).into_owned();

    // --print: the command, and nothing written (the default place too).
    let printed = install(home, &["--dir", dir_arg, "--print"]);
    assert!(printed.status.success(), "{}", stderr(&printed));
    assert_eq!(
        String::from_utf8(printed.stdout).unwrap(),
        format!("pi install {dir_arg}\n")
    );
    assert!(!dir.exists(), "--print wrote {}", dir.display());
    let printed = install(home, &["--print"]);
    assert!(printed.status.success(), "{}", stderr(&printed));
    assert!(
        !home.join(".local").exists(),
        "--print wrote the default place"
    );

    // Installed, then installed again over its own install.
    for round in 0..2 {
        let output = install(home, &["--dir", dir_arg]);
        assert!(
            output.status.success(),
            "round {round}: {}",
            stderr(&output)
        );
        for file in PACKAGE_FILES {
            assert!(dir.join(file).is_file(), "round {round}: {file}");
        }
    }

    // A link planted at each file: replaced, the file it pointed at keeps
    // its bytes and its mode.
    let victim = Victim::at(home.join(".bashrc"));
    for file in PACKAGE_FILES {
        victim.plant_at(&dir.join(file));
        for print in [true, false] {
            let args: &[&str] = if print {
                &["--dir", dir_arg, "--print"]
            } else {
                &["--dir", dir_arg]
            };
            let output = install(home, args);
            assert!(output.status.success(), "{file}: {}", stderr(&output));
            victim.assert_untouched(file);
        }
        planted::assert_replaced(&dir.join(file), file);
    }
    // A link where one of its folders belongs: refused.
    planted::assert_linked_folder_refused(
        &dir.join("dreamer"),
        &home.join("elsewhere"),
        &[vec!["--dir", dir_arg], vec!["--dir", dir_arg, "--force"]],
        |args| install(home, args),
    );

    // A folder of someone else's (an unrelated package.json): refused,
    // with --print too; --force installs.
    let foreign = home.join("project");
    let foreign_arg = foreign.to_str().unwrap();
    planted::assert_foreign_folder_refused(
        &foreign,
        "package.json",
        "{\"name\":\"theirs\"}\n",
        &[
            vec!["--dir", foreign_arg],
            vec!["--dir", foreign_arg, "--print"],
        ],
        &["fresh directory"],
        |args| install(home, args),
    );
    let forced = install(home, &["--dir", foreign_arg, "--force"]);
    assert!(forced.status.success(), "{}", stderr(&forced));
    assert!(foreign.join("sidecar.json").is_file());
}
