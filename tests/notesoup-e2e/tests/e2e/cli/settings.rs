//! Settings people can reason about, on every binary: an invalid value that
//! takes precedence falls back to the valid one under it (never to the
//! built-in default), settings warnings show on every command that reads
//! them (`notes` included), and the legacy `pi-context` key is honoured and
//! warned about alike.

use super::{Bin, Machine};
use notesoup_test_support::files::put;

/// Writes `record` as notesoup's settings under `key`: the user's own
/// (`global`) or the project's, where `bin`'s host keeps them.
fn put_settings(machine: &Machine, bin: Bin, global: bool, key: &str, record: &str) {
    let (path, extra) = match (bin, global) {
        (Bin::Claude, true) => (machine.home.join(".claude/notesoup.json"), ""),
        (Bin::Claude, false) => (machine.project.join(".claude/notesoup.json"), ""),
        // Pi reads a project's settings only when it trusts the project.
        (Bin::Pi, true) => (
            machine.home.join(".pi/agent/settings.json"),
            r#", "defaultProjectTrust": "always""#,
        ),
        (Bin::Pi, false) => (machine.project.join(".pi/settings.json"), ""),
        (Bin::Dsh, true) => (machine.home.join(".dsh/notesoup.json"), ""),
        (Bin::Dsh, false) => (machine.project.join(".dsh/notesoup.json"), ""),
    };
    put(&path, format!(r#"{{"{key}": {record}{extra}}}"#));
}

/// A machine with the user's own settings `record` under `key`.
fn with_user_settings(bin: Bin, key: &str, record: &str) -> Machine {
    let machine = Machine::new();
    put_settings(&machine, bin, true, key, record);
    machine
}

/// The stderr of `notes list`, which must succeed.
fn notes_stderr(machine: &Machine, bin: Bin) -> String {
    let notes = machine.run(bin, &["notes", "list"]);
    notes.ok();
    notes.stderr
}

/// The bound `boot --stats` says, and its stderr.
fn bound(machine: &Machine, bin: Bin) -> (String, String) {
    let run = machine.run(bin, &["boot", "--stats"]);
    run.ok();
    let line = run
        .stderr
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{} boot: the bound is ", bin.name())))
        .unwrap_or_else(|| panic!("{bin:?}: {run:?}"))
        .to_owned();
    (line, run.stderr)
}

#[test]
fn an_invalid_project_value_falls_back_to_the_user_s_valid_one() {
    let warning = "notesoup: notesoup.bootMaxChars must be an integer of at least 4000; the overriding value is ignored and the valid one under it is used.";
    // dsh reads bootMaxChars from one file on the command line (its row,
    // the layer above, is the sidecar's: the dsh crate's tests).
    for bin in [Bin::Claude, Bin::Pi] {
        let machine = with_user_settings(bin, "notesoup", r#"{"bootMaxChars": 5000}"#);
        put_settings(
            &machine,
            bin,
            false,
            "notesoup",
            r#"{"bootMaxChars": 3000}"#,
        );
        let (said, stderr) = bound(&machine, bin);
        assert_eq!(said, "5000 characters (bootMaxChars)", "{bin:?}: {stderr}");
        assert_eq!(stderr.matches(warning).count(), 1, "{bin:?}: {stderr}");
        assert_eq!(
            notes_stderr(&machine, bin),
            format!("{warning}\n"),
            "{bin:?}: notes warns too"
        );
    }
}

#[test]
fn a_settings_warning_shows_on_every_command_that_reads_them() {
    for bin in Bin::ALL {
        let machine = with_user_settings(bin, "notesoup", r#"{"bootMaxChars": "big"}"#);
        let (said, stderr) = bound(&machine, bin);
        assert_eq!(said, "10000 characters (bootMaxChars)", "{bin:?}");
        for text in [stderr, notes_stderr(&machine, bin)] {
            assert!(
                text.contains(
                    "bootMaxChars must be an integer of at least 4000; using the default of 10000."
                ),
                "{bin:?}: {text}"
            );
        }
    }
}

#[test]
fn the_legacy_key_is_honoured_and_warned_about_on_every_host() {
    let warning = "notesoup: the settings key \"pi-context\" is now \"notesoup\"; rename it (the old key is still read for now).\n";
    for bin in Bin::ALL {
        let machine = with_user_settings(bin, "pi-context", r#"{"bootMaxChars": 6000}"#);
        let (said, stderr) = bound(&machine, bin);
        assert_eq!(said, "6000 characters (bootMaxChars)", "{bin:?}: {stderr}");
        assert!(stderr.starts_with(warning), "{bin:?}: {stderr}");
        assert_eq!(notes_stderr(&machine, bin), warning, "{bin:?}");
    }
}
