//! Dreams that explain themselves, on every binary: one that cannot start
//! says why and leaves nothing behind, one that fails says why in the
//! terminal, every host says the same start and end lines, and the run's
//! progress is shown as the dreamer calls its tools.

use super::{Bin, Machine};

/// The stand-in's stdout for a dreamer that calls `read` then `write` on
/// `human/a.md` and answers, in its host's own stream.
fn answering_stream(bin: Bin) -> &'static str {
    match bin {
        Bin::Claude => {
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"mcp__dream__read","input":{"path":"human/a.md"}},{"type":"tool_use","id":"t2","name":"mcp__dream__write","input":{"path":"human/a.md","content":"x"}}]}}
{"type":"result","subtype":"success","is_error":false,"result":"Report: tidied."}"#
        }
        Bin::Pi => {
            r#"{"type":"tool_execution_start","toolName":"read","args":{"path":"human/a.md"}}
{"type":"tool_execution_start","toolName":"write","args":{"path":"human/a.md","content":"x"}}
{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"Report: tidied."}],"stopReason":"stop"}}
{"type":"agent_settled"}"#
        }
        Bin::Dsh => "Report: tidied.",
    }
}

/// A dsh stand-in's session log for the same calls and answer, written
/// where the dreamer's overlay (its 4th argument, after `--profile
/// headless --patch`) puts dsh's session logs, as dsh writes it.
const DSH_SESSION_LOG: &str = r#"root=$(sed -n 's/^    root: "\(.*\)"$/\1/p' "$4")
mkdir -p "$root/--notes--/session-1"
cat > "$root/--notes--/session-1/session.jsonl" <<'EOF'
{"type":"session","version":0,"id":"session-1","delegationDepth":0}
{"type":"tool/call","seq":0,"data":{"callId":"c1","name":"read","arguments":"{\"path\":\"human/a.md\"}"}}
{"type":"tool/call","seq":1,"data":{"callId":"c2","name":"write","arguments":"{\"path\":\"human/a.md\",\"content\":\"x\"}"}}
{"type":"assistant/message","seq":2,"data":{"message":{"content":[{"type":"text","text":"Report: tidied."}]}}}
EOF"#;

/// Puts a stand-in for `bin`'s host whose dreamer calls `read` then
/// `write` on `human/a.md` and answers.
pub(super) fn answering_stand_in(machine: &Machine, bin: Bin) {
    match bin {
        Bin::Dsh => {
            let stdout = answering_stream(bin);
            machine.stand_in(
                bin.host_exe(),
                &format!("{DSH_SESSION_LOG}\nprintf '%s\\n' '{stdout}'"),
            );
        }
        Bin::Claude | Bin::Pi => stand_in(machine, bin, answering_stream(bin), "", 0),
    }
}

/// Puts a stand-in for `bin`'s host that prints `stdout`, says `stderr` and
/// exits with `code`.
fn stand_in(machine: &Machine, bin: Bin, stdout: &str, stderr: &str, code: i32) {
    let out = machine.root.join(format!("{}-stdout", bin.host_exe()));
    std::fs::write(&out, stdout).unwrap();
    machine.stand_in(
        bin.host_exe(),
        &format!(
            "cat '{}'\nprintf '%s\\n' '{stderr}' >&2\nexit {code}",
            out.display()
        ),
    );
}

/// Every entry under `dir`, relative, sorted.
fn tree(dir: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).into_iter().flatten().flatten() {
            let path = entry.path();
            found.push(path.strip_prefix(dir).unwrap().display().to_string());
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            }
        }
    }
    found.sort();
    found
}

#[test]
fn a_dream_that_cannot_start_says_why_and_leaves_nothing_behind() {
    for bin in Bin::ALL {
        let machine = Machine::new();
        // No host on PATH: nothing at all is created, not even the root.
        let run = machine.run(bin, &["dream", "--force"]);
        assert_eq!(run.code, Some(1), "{bin:?}: {run:?}");
        assert!(
            run.stderr.contains(&format!(
                "dream: cannot start: the dreamer {} is not on PATH (install ",
                bin.host_exe()
            )) && run.stderr.ends_with("); nothing was changed\n"),
            "{bin:?}: {run:?}"
        );
        assert_eq!(tree(&machine.home), Vec::<String>::new(), "{bin:?}");

        // With notes and a dreamer, a playbook that is not there: no Git
        // repository, commit, lock or report.
        machine
            .run(Bin::Claude, &["notes", "write", "@human/a.md", "x"])
            .ok();
        let before = tree(&machine.notes());
        stand_in(&machine, bin, answering_stream(bin), "", 0);
        let run = machine.run(bin, &["dream", "--force", "--playbook", "no-such.md"]);
        assert_eq!(run.code, Some(1), "{bin:?}: {run:?}");
        assert!(
            run.stderr
                .contains("dream: cannot start: cannot read playbook ")
                && run.stderr.ends_with("; nothing was changed\n"),
            "{bin:?}: {run:?}"
        );
        assert!(!run.stderr.contains("the dreamer is running"), "{run:?}");
        assert_eq!(tree(&machine.notes()), before, "{bin:?}");
    }
}

#[test]
fn a_failed_dream_says_why_in_the_terminal() {
    for bin in Bin::ALL {
        let machine = Machine::new();
        stand_in(&machine, bin, "", "boom: no credentials", 3);
        let run = machine.run(bin, &["dream", "--force"]);
        assert_eq!(run.code, Some(1), "{bin:?}: {run:?}");
        let failed = run
            .stderr
            .lines()
            .find(|line| line.starts_with("dream: run failed: "))
            .unwrap_or_else(|| panic!("{bin:?}: {run:?}"));
        assert!(failed.contains("boom: no credentials"), "{bin:?}: {failed}");
        assert!(failed.contains("; see "), "{bin:?}: {failed}");
        assert!(
            run.stderr.contains("\ndream: the dreamer failed after "),
            "{bin:?}: {run:?}"
        );
    }
}

#[test]
fn a_dsh_dreamer_that_ends_without_answering_fails() {
    let machine = Machine::new();
    stand_in(&machine, Bin::Dsh, "", "", 0);
    let run = machine.run(Bin::Dsh, &["dream", "--force"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stderr
            .contains("dream: run failed: dreamer failed: dsh ended without an answer; see "),
        "{run:?}"
    );
}

#[test]
fn every_host_says_the_same_lines_and_shows_the_dream_s_progress() {
    for bin in Bin::ALL {
        let machine = Machine::new();
        answering_stand_in(&machine, bin);
        let run = machine.run(bin, &["dream", "--force", "--timeout", "60"]);
        assert_eq!(run.code, Some(0), "{bin:?}: {run:?}");
        let lines: Vec<&str> = run.stderr.lines().collect();
        let running = lines
            .iter()
            .position(|line| {
                line.starts_with(&format!(
                    "dream: the dreamer is running ({} ",
                    bin.host_exe()
                )) && line.ends_with(", at most 60 s)")
            })
            .unwrap_or_else(|| panic!("{bin:?}: {run:?}"));
        let finished = lines
            .iter()
            .position(|line| line.starts_with("dream: the dreamer finished after "))
            .unwrap_or_else(|| panic!("{bin:?}: {run:?}"));
        assert!(running < finished, "{bin:?}: {run:?}");
        // Off a terminal, a plain line for each note changed, as it comes
        // (dsh's from its session log).
        let progress: Vec<&&str> = lines[running..finished]
            .iter()
            .filter(|line| line.contains(" s: "))
            .collect();
        assert_eq!(progress.len(), 1, "{bin:?}: {run:?}");
        assert!(
            progress[0].ends_with(": write human/a.md (2 tool calls, 1 note changed)"),
            "{bin:?}: {run:?}"
        );
        assert!(
            run.stdout.trim_end().ends_with(".md"),
            "the report's path: {run:?}"
        );
    }
}

/// On a terminal the progress is one status line, redrawn in place at each
/// tool call and cleared before the next line (run in a pseudo-terminal by
/// util-linux's `script`).
#[test]
fn on_a_terminal_the_progress_is_one_status_line() {
    for bin in Bin::ALL {
        let machine = Machine::new();
        answering_stand_in(&machine, bin);
        let base = machine.command(bin, &[]);
        let mut script = std::process::Command::new("script");
        script
            .args(["-q", "-e", "-c"])
            .arg(format!("'{}' dream --force", bin.exe()))
            .arg("/dev/null")
            .current_dir(&machine.project)
            .env_clear()
            .stdin(std::process::Stdio::null());
        for (name, value) in base.get_envs() {
            if let Some(value) = value {
                script.env(name, value);
            }
        }
        let output = script.output().expect("script runs");
        let screen = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(0), "{bin:?}: {screen}");
        let drawn = "\r\x1b[2Kdream: ";
        // Each draw starts by going back over the line and clearing it.
        let draws: Vec<&str> = screen.split(drawn).skip(1).collect();
        assert!(
            draws
                .iter()
                .any(|draw| draw.contains(" s, 1 tool call, 0 notes changed")),
            "{bin:?}: {screen:?}"
        );
        assert!(
            screen.contains(" s, 2 tool calls, 1 note changed"),
            "{bin:?}: {screen:?}"
        );
        assert!(
            screen.contains("\r\x1b[2Kdream: the dreamer finished after "),
            "cleared before the next line: {screen:?}"
        );
        assert!(
            !screen.contains(": write human/a.md ("),
            "no plain lines on a terminal: {screen:?}"
        );
    }
}

/// A dsh session log that cannot be read whole (a line past the 16 MiB
/// bound, a torn last line) fails the dream naming the line, since a write
/// it held would be missing from the report; the lines around it are still
/// read, and nothing panics.
#[test]
fn a_dsh_session_log_that_cannot_be_read_whole_fails_the_dream() {
    let header = r#"{"type":"session","version":0,"id":"session-1","delegationDepth":0}"#;
    let write = r#"{"type":"tool/call","seq":1,"data":{"callId":"c2","name":"write","arguments":"{\"path\":\"human/a.md\",\"content\":\"x\"}"}}"#;
    let answer = r#"{"type":"assistant/message","seq":2,"data":{"message":{"content":[{"type":"text","text":"Report: tidied."}]}}}"#;
    let long = 17_000_000;
    let cases = [
        (
            format!(
                "printf '%s\\n' '{header}'\nhead -c {long} /dev/zero | tr '\\000' x\nprintf '\\n%s\\n%s\\n' '{write}' '{answer}'"
            ),
            format!(
                "line 2 of dsh's session log is {long} bytes, over the limit of 16777216; it was skipped"
            ),
        ),
        (
            format!("printf '%s\\n%s\\n%s' '{header}' '{write}' '{{\"type\":\"assistant/mes'"),
            "line 3 of dsh's session log is torn (22 bytes without an end); the dreamer's last event is missing".to_owned(),
        ),
    ];
    for (lines, reason) in cases {
        let machine = Machine::new();
        machine.stand_in(
            "dsh",
            &format!(
                "root=$(sed -n 's/^    root: \"\\(.*\\)\"$/\\1/p' \"$4\")\nmkdir -p \"$root/--notes--/session-1\"\n{{\n{lines}\n}} > \"$root/--notes--/session-1/session.jsonl\"\nprintf '%s\\n' 'Report: tidied.'"
            ),
        );
        let run = machine.run(Bin::Dsh, &["dream", "--force"]);
        assert_eq!(run.code, Some(1), "{run:?}");
        assert!(
            run.stderr.contains(&format!(
                "dream: run failed: dreamer failed: {reason}; see "
            )),
            "{run:?}"
        );
        assert!(
            run.stderr
                .contains(": write human/a.md (1 tool call, 1 note changed)\n"),
            "the call after it is still told: {run:?}"
        );
    }
}
