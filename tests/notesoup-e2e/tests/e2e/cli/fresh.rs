//! A fresh install: nothing written yet is not a finding, no session yet is
//! said with how one gets recorded, and a missing HOME names what to set.

use serde_json::Value;

use super::{Bin, Machine, Run};

#[test]
fn doctor_on_a_fresh_machine_says_there_are_no_notes_yet() {
    let machine = Machine::new();
    let root = machine.notes();
    for bin in Bin::ALL {
        for args in [&["doctor"][..], &["dream", "doctor"]] {
            let run = machine.run(bin, args);
            assert_eq!(
                run.ok(),
                format!(
                    "doctor: no notes yet at {} (the first note written creates it)\n",
                    root.display()
                ),
                "{bin:?} {args:?}"
            );
            assert_eq!(run.stderr, "", "{bin:?}");
        }
        let json: Value =
            serde_json::from_str(machine.run(bin, &["doctor", "--json"]).ok()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"home": root, "ok": true, "notes": false, "findings": []}),
            "{bin:?}"
        );
    }
    assert!(
        std::fs::read_dir(&machine.home).unwrap().next().is_none(),
        "doctor wrote nothing"
    );

    // Once a note is written the root is checked; a finding about the root
    // itself names it.
    machine
        .run(Bin::Claude, &["notes", "write", "@human/a.md", "x"])
        .ok();
    for bin in Bin::ALL {
        let run = machine.run(bin, &["doctor"]);
        assert_eq!(
            run.ok(),
            format!("doctor: OK ({})\n", root.display()),
            "{bin:?}"
        );
    }
    let file_root = machine.root.join("a-file");
    std::fs::write(&file_root, "").unwrap();
    for bin in Bin::ALL {
        let run = machine.run(
            bin,
            &["doctor", "--notes-home", file_root.to_str().unwrap()],
        );
        assert_eq!(run.code, Some(1), "{bin:?}: {run:?}");
        assert!(
            run.stdout.starts_with(&format!(
                "{}: cannot read notes home: ",
                file_root.display()
            )),
            "{bin:?}: {run:?}"
        );
    }
}

#[test]
fn without_home_every_command_names_what_to_set() {
    let machine = Machine::new();
    for bin in Bin::ALL {
        for args in [
            &["notes", "list"][..],
            &["boot"],
            &["doctor"],
            &["dream", "--force"],
        ] {
            let run = Run::of(
                machine
                    .command(bin, args)
                    .env_remove("HOME")
                    .output()
                    .unwrap(),
            );
            assert_eq!(run.code, Some(1), "{bin:?} {args:?}: {run:?}");
            assert_eq!(
                run.stderr,
                format!(
                    "{} {}: the notes root is unknown: neither PI_NOTES_HOME nor HOME is set; set HOME (the root is then ~/.agents/notes) or PI_NOTES_HOME, or pass --notes-home\n",
                    bin.name(),
                    args[0]
                ),
                "{bin:?} {args:?}"
            );
        }
    }
}

#[test]
fn sessions_on_a_fresh_machine_says_how_one_gets_recorded() {
    let machine = Machine::new();
    let run = machine.run(Bin::Claude, &["sessions"]);
    assert_eq!(
        run.ok(),
        format!(
            "0 sessions\nno Claude Code session is recorded for {} yet: notesoup records a session when Claude Code starts one in this project with the notesoup plugin enabled (notesoup install-plugin, then `claude plugin install notesoup@notesoup`)\n",
            machine.project.display()
        )
    );
    assert_eq!(
        machine.run(Bin::Claude, &["sessions", "--json"]).ok(),
        "[]\n"
    );
}
