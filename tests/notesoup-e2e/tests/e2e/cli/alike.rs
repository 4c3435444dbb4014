//! The three binaries behave alike: the shared commands are on each, `boot
//! --stats --json` is refused by each, help is wrapped to the terminal, the
//! man pages name no page that does not exist, and each installer prints
//! the exact command when its host's binary is missing.

use serde_json::Value;

use notesoup_test_support::files::put;

use super::{Bin, Machine, command_paths};

#[test]
fn every_binary_has_the_shared_commands() {
    let machine = Machine::new();
    let home = machine.root.join("checked");
    put(&home.join("stray.txt"), "x");
    let home = home.to_str().unwrap();
    let mut refusals = Vec::new();
    for bin in Bin::ALL {
        let doctor = machine.run(bin, &["doctor", "--notes-home", home]);
        let dream_doctor = machine.run(bin, &["dream", "doctor", "--notes-home", home]);
        assert_eq!(doctor.code, Some(1), "{bin:?}: a finding exits 1");
        assert_eq!(
            (doctor.code, &doctor.stdout),
            (dream_doctor.code, &dream_doctor.stdout),
            "{bin:?}"
        );
        assert!(doctor.stdout.contains("stray.txt"), "{doctor:?}");
        machine
            .run(bin, &["dream", "doctor", "clean", "--notes-home", home])
            .ok();

        let dream_help = machine.run(bin, &["dream", "--help"]);
        assert!(dream_help.ok().contains("--timeout <SECS>"), "{bin:?}");

        for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
            let script = machine.run(bin, &["completions", shell]);
            assert!(script.ok().contains(bin.name()), "{bin:?} {shell}");
        }

        let stats = machine.run(bin, &["boot", "--stats"]);
        assert!(stats.ok().starts_with("section "), "{bin:?}: {stats:?}");
        assert!(stats.stderr.contains("(bootMaxChars)"), "{stats:?}");
        // Without a session, the preview is said once, in the same words.
        let host = match bin {
            Bin::Claude => "Claude Code",
            Bin::Pi => "Pi",
            Bin::Dsh => "dsh",
        };
        let place = match bin {
            Bin::Claude => "this project".to_owned(),
            Bin::Pi | Bin::Dsh => machine.project.display().to_string(),
        };
        assert!(
            stats.stderr.starts_with(&format!(
                "{} boot: no {host} session is recorded for {place}; this is a preview boot of a new session's first window (",
            bin.name()
            )),
            "{stats:?}"
        );
        assert_eq!(
            stats.stderr.matches("session is recorded").count(),
            1,
            "{stats:?}"
        );
        let json: Value = serde_json::from_str(machine.run(bin, &["boot", "--json"]).ok()).unwrap();
        for key in ["window", "boot", "sectionChars", "bootMaxChars"] {
            assert!(json.get(key).is_some(), "{bin:?}: {key} in {json}");
        }
        // One rule on every binary: the JSON carries the sizes, so the pair
        // is a mistake in how the command was called.
        let both = machine.run(bin, &["boot", "--stats", "--json"]);
        assert_eq!(both.code, Some(2), "{bin:?}: {both:?}");
        assert_eq!(both.stdout, "");
        refusals.push(both.stderr.replace(bin.name(), "<bin>"));
    }
    assert!(
        refusals[0].contains("'--stats' cannot be used with '--json'"),
        "{}",
        refusals[0]
    );
    assert!(
        refusals.iter().all(|refusal| *refusal == refusals[0]),
        "{refusals:#?}"
    );
}

/// The longest line of `text`, in characters.
fn widest(text: &str) -> usize {
    text.lines()
        .map(|line| line.chars().count())
        .max()
        .unwrap_or(0)
}

/// The help lines past `width`, but for one word clap could not break (a
/// long path) alone on its line after the indent, and the usage line (a
/// command line to type, never wrapped).
fn over_width(text: &str, width: usize) -> Vec<&str> {
    text.lines()
        .filter(|line| line.chars().count() > width)
        .filter(|line| !line.starts_with("Usage: "))
        .filter(|line| line.split_whitespace().count() > 1)
        .collect()
}

#[test]
fn help_is_wrapped_to_the_terminal() {
    let mut machine = Machine::new();
    for bin in Bin::ALL {
        let paths = command_paths(&machine, bin);
        assert!(paths.len() > 20, "{bin:?}: {paths:?}");
        let mut widest_default = 0;
        for path in &paths {
            let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
            args.push("--help");
            machine.set_env("COLUMNS", "60");
            let narrow = machine.run(bin, &args);
            let over = over_width(narrow.ok(), 60);
            assert!(over.is_empty(), "{bin:?} {path:?} at 60 columns: {over:#?}");
            // A terminal wider than 100 columns still gets at most 100.
            machine.set_env("COLUMNS", "300");
            let wide = machine.run(bin, &args);
            let over = over_width(wide.ok(), 100);
            assert!(
                over.is_empty(),
                "{bin:?} {path:?} at 300 columns: {over:#?}"
            );
            widest_default = widest_default.max(widest(&wide.stdout));
        }
        assert!(
            widest_default > 60,
            "{bin:?}: the wide help uses the width ({widest_default})"
        );
    }
}

/// Every command's help (at 100 columns) and the man page, per binary.
#[test]
fn every_binary_s_help_and_man_page() {
    let machine = Machine::new();
    for bin in Bin::ALL {
        let mut all = String::new();
        for path in command_paths(&machine, bin) {
            let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
            args.push("--help");
            all.push_str(&format!("$ {} {}\n", bin.name(), args.join(" ")));
            all.push_str(machine.run(bin, &args).ok());
            all.push('\n');
        }
        insta::assert_snapshot!(format!("help_{}", bin.name()), all);

        let man = machine.run(bin, &["man"]).ok().to_owned();
        assert!(man.starts_with(".ie"), "{man:.200}");
        assert!(man.contains(&format!(".TH {} 1", bin.name())), "{man:.300}");
        // clap_mangen's own list names a page per command
        // (`notesoup-notes(1)`), which no install provides.
        assert!(!man.contains("(1)"), "{bin:?}");
        assert!(
            !man.contains("dream-tools"),
            "a hidden command stays hidden"
        );
        for command in ["notes list", "history read", "doctor clean", "dream doctor"] {
            assert!(
                man.contains(&format!(".SS \"{} {command}\"", bin.name())),
                "{bin:?}: {command}"
            );
        }
        insta::assert_snapshot!(format!("man_{}", bin.name()), man);
    }
}

/// Without the host's binary the installer writes what it installs and
/// prints the one command left to run; with a stand-in for the host, that
/// command is what it runs.
#[test]
fn an_install_without_its_host_prints_the_command_to_run() {
    let machine = Machine::new();
    // Pi runs on the `node` on PATH: a new enough one.
    machine.stand_in("node", "echo v22.19.0");
    for (bin, args) in [
        (Bin::Pi, &["install"][..]),
        (Bin::Dsh, &["install", "--profile", "my profile"]),
    ] {
        let first = machine.run(bin, args);
        assert_eq!(first.code, Some(0), "{bin:?}: {first:?}");
        let command = first.stdout.trim_end().to_owned();
        assert!(
            command.starts_with(&format!("{} ", bin.host_exe())),
            "{bin:?}: {first:?}"
        );
        assert!(
            first
                .stderr
                .contains(&format!("`{}` is not on PATH", bin.host_exe())),
            "{first:?}"
        );
        // The stand-in prints its arguments as one shell-quoted command
        // line, to compare with the one printed.
        let said = machine.root.join(format!("{}-args", bin.host_exe()));
        machine.stand_in(
            bin.host_exe(),
            &format!(
                "line='{}'; for a in \"$@\"; do case \"$a\" in *' '*) line=\"$line '$a'\";; *) line=\"$line $a\";; esac; done; printf '%s\\n' \"$line\" > '{}'",
                bin.host_exe(),
                said.display()
            ),
        );
        let second = machine.run(bin, args);
        assert_eq!(second.code, Some(0), "{bin:?}: {second:?}");
        assert_eq!(
            std::fs::read_to_string(&said).unwrap().trim_end(),
            command,
            "{bin:?}: the host ran the printed command"
        );
        std::fs::remove_file(machine.stand_ins.join(bin.host_exe())).unwrap();
    }
    // Claude Code's installer never runs `claude`: it prints the commands.
    let claude = machine.run(Bin::Claude, &["install-plugin"]);
    assert!(
        claude.ok().contains("claude plugin marketplace add "),
        "{claude:?}"
    );
}

/// `notesoup-pi install --print` prints and writes nothing; so does `bundle`
/// into a folder of someone else's files without `--force`.
#[test]
fn printing_an_install_writes_nothing() {
    let machine = Machine::new();
    let printed = machine.run(Bin::Pi, &["install", "--print"]);
    assert!(printed.ok().starts_with("pi install "), "{printed:?}");
    assert!(printed.stderr.contains("would write "), "{printed:?}");
    assert_eq!(
        std::fs::read_dir(&machine.home).unwrap().count(),
        0,
        "nothing under the home"
    );
}

/// Pi needs Node 22.19 or later: with an older `node` on PATH, `pi install`
/// is not run and the install says what to install.
#[test]
fn a_pi_install_on_an_old_node_says_what_to_install() {
    let machine = Machine::new();
    let ran = machine.root.join("pi-ran");
    machine.stand_in("pi", &format!("touch '{}'", ran.display()));
    machine.stand_in("node", "echo v20.20.2");
    let run = machine.run(Bin::Pi, &["install"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(run.stdout.starts_with("pi install "), "{run:?}");
    assert!(
        run.stderr.contains(
            "Pi needs Node 22.19 or later, and the `node` on PATH is v20.20.2: install Node 22.19 or later (https://nodejs.org), then run the command above"
        ),
        "{run:?}"
    );
    assert!(!ran.exists(), "pi install is not run");

    // A failing `pi install` prints the command again and says so.
    machine.stand_in("node", "echo v22.20.0");
    machine.stand_in("pi", "exit 1");
    let failed = machine.run(Bin::Pi, &["install"]);
    assert_eq!(failed.code, Some(1), "{failed:?}");
    assert!(failed.stdout.starts_with("pi install "), "{failed:?}");
    assert!(
        failed.stderr.contains("failed (exit status: 1)"),
        "{failed:?}"
    );
}
