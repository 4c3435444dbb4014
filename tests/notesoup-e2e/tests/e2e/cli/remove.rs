//! Removing what must go: a person deletes a note for good (asked first,
//! crumpled first unless forced), the dream's Git history never takes in a
//! file holding a credential, and one that got there is named by doctor and
//! purged by `doctor purge --apply`.

use std::path::{Path, PathBuf};
use std::process::Command;

use notesoup_test_support::files::put;

use super::{Bin, Machine};

/// An AWS access key id the credential guard refuses.
const KEY: &str = "AKIAIOSFODNN7EXAMPLX";

/// Writes `@human/<binary>-<name>.md` through `bin` on `machine`: its
/// address and its file.
fn human_note(machine: &Machine, bin: Bin, name: &str, body: &str) -> (String, PathBuf) {
    let address = format!("@human/{}-{name}.md", bin.name());
    machine.run(bin, &["notes", "write", &address, body]).ok();
    let path = machine
        .notes()
        .join(format!("human/{}-{name}.md", bin.name()));
    (address, path)
}

#[test]
fn a_person_deletes_a_note_for_good() {
    let machine = Machine::new();
    for bin in Bin::ALL {
        let (address, path) = human_note(&machine, bin, "gone", "soon gone");

        // No terminal to ask on: a mistake in how it was called.
        let unasked = machine.run(bin, &["notes", "delete", &address]);
        assert_eq!(unasked.code, Some(2), "{bin:?}: {unasked:?}");
        assert!(unasked.stderr.contains("pass --yes"), "{unasked:?}");
        assert!(path.exists());

        // A live note: crumple first, unless forced.
        let live = machine.run(bin, &["notes", "delete", &address, "--yes"]);
        assert_eq!(live.code, Some(1), "{bin:?}: {live:?}");
        assert_eq!(
            live.stderr,
            format!(
                "{} notes: {address} is a live note: crumple it first (notes crumple {address}), or pass --force to delete it anyway\n",
                bin.name()
            )
        );
        assert!(path.exists());

        machine.run(bin, &["notes", "crumple", &address]).ok();
        let deleted = machine.run(bin, &["notes", "delete", &address, "--yes"]);
        assert_eq!(deleted.ok(), format!("deleted {address}\n"), "{bin:?}");
        assert!(!path.exists());

        machine.run(bin, &["notes", "write", &address, "live"]).ok();
        let forced = machine.run(bin, &["notes", "delete", &address, "-y", "--force"]);
        assert_eq!(forced.ok(), format!("deleted {address}\n"), "{bin:?}");
        assert!(!path.exists());

        let missing = machine.run(bin, &["notes", "delete", &address, "--yes"]);
        assert_eq!(missing.code, Some(1));
        assert!(
            missing.stderr.starts_with("error: not_found: "),
            "{missing:?}"
        );
    }
    // Never in another agent's home.
    put(&machine.notes().join("agents/someone-else/n.md"), "theirs");
    let foreign = machine.run(
        Bin::Claude,
        &[
            "notes",
            "delete",
            "@agents/someone-else/n.md",
            "--yes",
            "--force",
        ],
    );
    assert!(
        foreign.stderr.starts_with("error: invalid_scope: "),
        "{foreign:?}"
    );
    assert!(machine.notes().join("agents/someone-else/n.md").exists());
}

fn git(dir: &Path, args: &[&str]) -> String {
    use notesoup_test_support::child::{git_in, stdout_of};
    stdout_of(git_in(dir).args(args).env("HOME", dir))
}

/// Everything the repository's objects hold, as Git reads them.
fn every_object(dir: &Path) -> String {
    let ids = git(
        dir,
        &[
            "cat-file",
            "--batch-all-objects",
            "--batch-check=%(objectname)",
        ],
    );
    ids.lines()
        .map(|id| git(dir, &["cat-file", "-p", id]))
        .collect()
}

#[test]
fn the_dream_s_history_never_takes_in_a_credential() {
    let machine = Machine::new();
    machine
        .run(
            Bin::Claude,
            &["notes", "write", "@human/plain.md", "nothing secret"],
        )
        .ok();
    let key_note = machine.notes().join("human/key.md");
    std::fs::write(&key_note, format!("aws: {KEY}\n")).unwrap();
    machine.stand_in(
        "claude",
        r#"printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"result":"Report: nothing."}'"#,
    );
    let run = machine.run(Bin::Claude, &["dream", "--force"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stderr.contains(
            "dream: the baseline audit left human/key.md out of the Git history: it holds a credential ("
        ),
        "{run:?}"
    );
    let objects = every_object(&machine.notes());
    assert!(objects.contains("nothing secret"), "the rest is committed");
    assert!(!objects.contains(KEY), "{objects}");
    assert!(key_note.exists(), "the note itself stays");
}

#[test]
fn doctor_names_a_credential_in_the_history_and_purge_removes_it() {
    let machine = Machine::new();
    let notes = machine.notes();
    put(&notes.join("human/plain.md"), "nothing secret\n");
    std::fs::write(notes.join("human/key.md"), format!("aws: {KEY}\n")).unwrap();
    // A history made before the audit left such files out.
    git(&notes, &["init", "-q"]);
    for (name, value) in [("user.name", "old"), ("user.email", "old@localhost")] {
        git(&notes, &["config", name, value]);
    }
    git(&notes, &["add", "-A"]);
    git(&notes, &["commit", "-q", "-m", "baseline old"]);
    std::fs::write(notes.join("human/plain.md"), "still nothing secret\n").unwrap();
    git(&notes, &["commit", "-q", "-am", "dream old"]);
    let first = git(&notes, &["rev-list", "--max-parents=0", "HEAD"]);
    let first = &first.trim()[..12];

    for bin in Bin::ALL {
        let doctor = machine.run(bin, &["doctor"]);
        assert_eq!(doctor.code, Some(1), "{bin:?}: {doctor:?}");
        assert!(
            doctor.stdout.contains(&format!(
                ".git: commit {first} (\"baseline old\") holds a credential ("
            )) && doctor.stdout.contains(
                ") in human/key.md; remove it from the history with `doctor purge --apply`"
            ),
            "{bin:?}: {doctor:?}"
        );
        let dry = machine.run(bin, &["doctor", "purge"]);
        assert!(
            dry.ok().ends_with(
                "1 file in 2 commits; run again with --apply to rewrite the history without them\n"
            ),
            "{bin:?}: {dry:?}"
        );
    }
    assert!(
        every_object(&notes).contains(KEY),
        "a dry run changes nothing"
    );

    let purged = machine.run(Bin::Dsh, &["doctor", "purge", "--apply"]);
    assert_eq!(
        purged.ok(),
        "rewrote 2 commits without human/key.md\n",
        "{purged:?}"
    );
    assert!(!every_object(&notes).contains(KEY));
    assert_eq!(
        git(&notes, &["log", "--format=%s"]),
        "dream old\nbaseline old\n",
        "the messages stay"
    );
    assert!(git(&notes, &["show", "HEAD:human/plain.md"]).contains("still nothing secret"));
    git(&notes, &["fsck", "--no-dangling"]);
    assert!(notes.join("human/key.md").exists(), "the note itself stays");
    for bin in Bin::ALL {
        let doctor = machine.run(bin, &["doctor"]);
        assert!(
            !doctor.stdout.contains(".git: commit"),
            "{bin:?}: {doctor:?}"
        );
    }
}

/// How long a command on a terminal may take to ask before the test gives
/// up on it (a safety net against a hang, far above any real wait).
const ASK_WITHIN: std::time::Duration = std::time::Duration::from_secs(120);

/// `bin ARGS` on a terminal (util-linux's `script` gives it one, as the
/// dream's status-line test does), with `keys` typed once it has asked (a
/// line ending `[y/N] `), as a person types: its exit code and everything
/// the terminal showed, the echoed keys included.
fn on_a_terminal(machine: &Machine, bin: Bin, args: &[&str], keys: &[u8]) -> (Option<i32>, String) {
    let quoted: Vec<String> = std::iter::once(bin.exe())
        .chain(args.iter().copied())
        .map(|word| format!("'{word}'"))
        .collect();
    let base = machine.command(bin, &[]);
    let mut script = Command::new("script");
    script
        .args(["-q", "-e", "-c"])
        .arg(quoted.join(" "))
        .arg("/dev/null")
        .current_dir(&machine.project)
        .env_clear()
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    for (name, value) in base.get_envs() {
        if let Some(value) = value {
            script.env(name, value);
        }
    }
    let mut child = script.spawn().expect("script runs");
    let mut terminal = child.stdout.take().expect("stdout");
    let (shown, screen_parts) = std::sync::mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut chunk = [0; 4096];
        while let Ok(read @ 1..) = std::io::Read::read(&mut terminal, &mut chunk) {
            if shown.send(chunk[..read].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut screen = Vec::new();
    while !String::from_utf8_lossy(&screen).ends_with("[y/N] ") {
        match screen_parts.recv_timeout(ASK_WITHIN) {
            Ok(part) => screen.extend(part),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                panic!(
                    "{bin:?} {args:?}: no question within {ASK_WITHIN:?}: {:?}",
                    String::from_utf8_lossy(&screen)
                );
            }
        }
    }
    let mut typing = child.stdin.take().expect("stdin");
    // A command that ended without asking reads nothing: a closed pipe is
    // its answer.
    let _ = std::io::Write::write_all(&mut typing, keys);
    drop(typing);
    screen.extend(screen_parts.iter().flatten());
    let status = child.wait().expect("script ends");
    (status.code(), String::from_utf8_lossy(&screen).into_owned())
}

#[test]
fn notes_delete_asks_on_a_terminal() {
    let machine = Machine::new();
    for bin in Bin::ALL {
        let (address, path) = human_note(&machine, bin, "asked", "ask me");
        machine.run(bin, &["notes", "crumple", &address]).ok();
        let asked = format!("{}: delete {address} for good? [y/N] ", bin.name());
        let kept = format!("{} notes: {address} was not deleted\r\n", bin.name());

        // No, an empty answer and Ctrl-D (end of input) keep the note, and
        // say so on a line of its own.
        for keys in [&b"n\n"[..], b"no\n", b"\n", b"\x04"] {
            let (code, screen) = on_a_terminal(&machine, bin, &["notes", "delete", &address], keys);
            assert_eq!(code, Some(1), "{bin:?} {keys:?}: {screen:?}");
            assert!(
                screen.contains(&asked) && screen.contains(&format!("\n{kept}")),
                "{bin:?} {keys:?}: {screen:?}"
            );
            assert!(!screen.contains("deleted @"), "{screen:?}");
            assert!(path.exists(), "{bin:?} {keys:?}: kept");
        }

        // Without a terminal, typed input is never taken for an answer: the
        // flag to pass is named.
        let mut piped = machine.command(bin, &["notes", "delete", &address]);
        piped
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = piped.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        // The command may refuse before reading: a closed pipe is fine.
        let _ = std::io::Write::write_all(&mut stdin, b"y\n");
        drop(stdin);
        let refused = super::Run::of(child.wait_with_output().unwrap());
        assert_eq!(refused.code, Some(2), "{bin:?}: {refused:?}");
        assert_eq!(
            refused.stderr,
            format!(
                "{} notes: notes delete asks before it deletes {address}, and there is no terminal to ask on: pass --yes\n",
                bin.name()
            ),
            "{bin:?}"
        );
        assert!(path.exists());

        // Yes deletes the crumpled note.
        let (code, screen) = on_a_terminal(&machine, bin, &["notes", "delete", &address], b"y\n");
        assert_eq!(code, Some(0), "{bin:?}: {screen:?}");
        assert!(
            screen.contains(&asked) && screen.ends_with(&format!("deleted {address}\r\n")),
            "{bin:?}: {screen:?}"
        );
        assert!(!path.exists(), "{bin:?}: deleted");

        // A live note: yes is not enough without --force (crumple first),
        // and with it the note goes.
        machine.run(bin, &["notes", "write", &address, "live"]).ok();
        let (code, screen) = on_a_terminal(&machine, bin, &["notes", "delete", &address], b"yes\n");
        assert_eq!(code, Some(1), "{bin:?}: {screen:?}");
        assert!(screen.contains(&asked), "{screen:?}");
        assert!(
            screen.contains(&format!("{address} is a live note: crumple it first")),
            "{bin:?}: {screen:?}"
        );
        assert!(path.exists());
        let (code, screen) = on_a_terminal(
            &machine,
            bin,
            &["notes", "delete", &address, "--force"],
            b"Y\n",
        );
        assert_eq!(code, Some(0), "{bin:?}: {screen:?}");
        assert!(!path.exists(), "{bin:?}: forced");
    }
}
