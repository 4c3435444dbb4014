//! The commands every notesoup binary shares (`notesoup-cli`), checked the
//! same way on each binary: the caller passes how to run its binary in its
//! own sandbox and the words its host uses.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::child::assert_succeeded;

/// Every shared command, as a person types it before `--help`.
pub const SHARED: &[&[&str]] = &[
    &["notes"],
    &["notes", "list"],
    &["notes", "read"],
    &["notes", "search"],
    &["notes", "write"],
    &["notes", "update"],
    &["notes", "crumple"],
    &["notes", "uncrumple"],
    &["notes", "rename"],
    &["boot"],
    &["history"],
    &["history", "windows"],
    &["history", "list"],
    &["history", "search"],
    &["history", "read"],
    &["doctor"],
    &["doctor", "clean"],
    &["dream"],
    &["dream", "doctor"],
    &["dream", "doctor", "clean"],
    &["completions"],
    &["man"],
];

/// The stdout of a run that must succeed; a failure shows both streams.
pub fn ok(output: &Output) -> String {
    assert_succeeded(output, "the command");
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// Runs a binary with these arguments in the test's sandbox.
type Run<'a> = Box<dyn Fn(&[&str]) -> Output + 'a>;

/// One binary, as its shared commands' tests run it.
pub struct Binary<'a> {
    /// Its name, as its help, completions and man page say it.
    name: &'static str,
    run: Run<'a>,
}

impl std::fmt::Debug for Binary<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Binary").field("name", &self.name).finish()
    }
}

impl<'a> Binary<'a> {
    /// The binary called `name`, run by `run` (its path, environment and
    /// sandbox are the caller's).
    pub fn new(name: &'static str, run: impl Fn(&[&str]) -> Output + 'a) -> Self {
        Self {
            name,
            run: Box::new(run),
        }
    }

    /// Runs it with `args`.
    pub fn run(&self, args: &[&str]) -> Output {
        (self.run)(args)
    }

    /// Every command of `commands` (as a person types it before `--help`;
    /// none for the binary itself) answers `--help`: success, and its
    /// usage on stdout.
    pub fn assert_answers_help(&self, commands: &[&[&str]]) {
        for command in commands {
            let mut args = command.to_vec();
            args.push("--help");
            let help = ok(&self.run(&args));
            assert!(
                help.contains(&format!("Usage: {}", self.name)),
                "{command:?}: {help}"
            );
        }
    }

    /// `args` are a mistake the binary refuses: status 2, nothing on
    /// stdout, `named` on stderr.
    pub fn assert_refused(&self, args: &[&str], named: &str) {
        let wrong = self.run(args);
        let stderr = String::from_utf8_lossy(&wrong.stderr);
        assert_eq!(wrong.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(wrong.stdout.is_empty(), "a refusal is not output");
        assert!(stderr.contains(named), "{args:?}: {stderr}");
    }

    /// The help of every shared command, each after the line a person
    /// types, with the binary's name as `<bin>`: the same text on every
    /// binary, for a snapshot.
    pub fn shared_help(&self) -> String {
        let mut all = String::new();
        for command in SHARED {
            let mut args = command.to_vec();
            args.push("--help");
            let help = ok(&self.run(&args));
            all.push_str(&format!("$ <bin> {} --help\n", command.join(" ")));
            all.push_str(&help.replace(self.name, "<bin>"));
            all.push('\n');
        }
        all
    }

    /// `doctor` and `dream doctor` (each with `notes_home`, the flags that
    /// name the notes home the caller put a stray file in) are one command:
    /// both find it, exit 1 and print the same report, naming `stray.txt`.
    pub fn assert_doctor_is_dream_doctor(&self, notes_home: &[&str]) {
        let doctor = self.run(&[&["doctor", "--json"][..], notes_home].concat());
        let dream_doctor = self.run(&[&["dream", "doctor", "--json"][..], notes_home].concat());
        assert_eq!(doctor.status.code(), Some(1), "findings exit 1");
        assert_eq!(dream_doctor.status.code(), Some(1));
        assert_eq!(doctor.stdout, dream_doctor.stdout);
        let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
        assert_eq!(report["findings"][0]["path"], "stray.txt", "{report}");
    }

    /// `notes --session SESSION write checkpoint.md` writes the session's
    /// note (the file `stored`), and `unsessioned` (a note write that names
    /// no session) is refused: exit 1, `no_session` on stderr.
    pub fn assert_notes_on_a_session(&self, session: &str, stored: &Path, unsessioned: &[&str]) {
        let written = ok(&self.run(&[
            "notes",
            "--session",
            session,
            "write",
            "checkpoint.md",
            "# Goal\nship",
        ]));
        assert!(written.starts_with("created checkpoint.md"), "{written}");
        assert!(stored.is_file(), "{}", stored.display());
        let refused = self.run(unsessioned);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(1), "{unsessioned:?}: {stderr}");
        assert!(stderr.starts_with("error: no_session: "), "{stderr}");
    }

    /// Every shell's completions name the binary and `word`.
    pub fn assert_completions_name(&self, word: &str) {
        for shell in ["bash", "zsh", "fish"] {
            let script = ok(&self.run(&["completions", shell]));
            assert!(script.contains(self.name), "{shell}");
            assert!(script.contains(word), "{shell}: {script:.300}");
        }
    }

    /// The man page is the binary's, with a section for `own_command` (a
    /// command only this binary has) and for the shared ones, names no page
    /// the install does not provide and keeps hidden commands hidden.
    pub fn assert_man_page(&self, own_command: &str) {
        let man = ok(&self.run(&["man"]));
        let name = self.name;
        assert!(man.contains(&format!(".TH {name} 1")), "{man:.300}");
        for command in [own_command, "notes list", "dream doctor"] {
            let section = format!(".SS \"{name} {command}\"");
            assert!(man.contains(&section), "{section}");
        }
        assert!(
            !man.contains("(1)"),
            "no page the install does not provide (clap_mangen's {name}-notes(1) and the like)"
        );
        assert!(
            !man.contains("dream-tools"),
            "a hidden command stays hidden"
        );
    }
}
