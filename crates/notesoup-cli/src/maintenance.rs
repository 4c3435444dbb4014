//! `doctor` (and `dream doctor`) and `dream`: core's checks and core's dream
//! command flow over the host's dreamer.

use notesoup_core::dream::{clean_temp_files, doctor as check_home};
use std::io::{IsTerminal, Write};

use notesoup_core::plumbing::{DreamFlags, DreamProgress, Dreamer, notes_home, run_dream_command};
use serde_json::{Value, json};

use crate::args::{DoctorArgs, DoctorCommand, DreamArgs, DreamSubcommand};
use crate::host::CliHost;
use crate::out::Out;

/// Runs `doctor`; 0 when the home is clean, 1 on findings.
pub(crate) fn doctor<H: CliHost>(
    host: &mut H,
    args: DoctorArgs,
    out: &mut Out,
) -> anyhow::Result<u8> {
    let home = notes_home(args.notes_home.as_deref(), host.notes_root())?;
    if let Some(DoctorCommand::Clean { apply }) = args.command {
        let output = clean_temp_files(&home, apply, std::time::SystemTime::now()).output();
        output.lines.iter().for_each(|line| out.line(line));
        return Ok(exit_code(output.exit_code));
    }
    // Nothing written yet is a fresh install, not a finding: the first note
    // creates the root.
    let fresh = matches!(
        std::fs::symlink_metadata(&home),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound
    );
    if fresh {
        if args.json {
            out.print(
                &json!({"home": home, "ok": true, "notes": false, "findings": []}).to_string(),
            );
        } else {
            out.print(&format!(
                "doctor: no notes yet at {} (the first note written creates it)",
                home.display()
            ));
        }
        return Ok(0);
    }
    let report = check_home(&home);
    // A finding about the root itself names it, not ".".
    let path = |path: &str| {
        if path == "." {
            report.home.display().to_string()
        } else {
            path.to_owned()
        }
    };
    if args.json {
        let findings: Vec<Value> = report
            .findings
            .iter()
            .map(|finding| json!({"path": path(&finding.path), "message": finding.message}))
            .collect();
        out.print(
            &json!({"home": report.home, "ok": findings.is_empty(), "notes": true, "findings": findings})
                .to_string(),
        );
    } else if report.findings.is_empty() {
        out.print(&format!("doctor: OK ({})", report.home.display()));
    } else {
        for finding in &report.findings {
            out.print(&format!("{}: {}", path(&finding.path), finding.message));
        }
    }
    Ok(exit_code(report.exit_code()))
}

/// Runs `dream` (or `dream doctor`); 0 for a run or a skip, 1 for a
/// failure.
pub(crate) fn dream<H: CliHost>(
    host: &mut H,
    args: DreamArgs<H::DreamerArgs>,
    out: &mut Out,
) -> anyhow::Result<u8> {
    if let Some(DreamSubcommand::Doctor(doctor_args)) = args.command {
        return doctor(host, doctor_args, out);
    }
    let timeout = notesoup_core::plumbing::dream_timeout(args.timeout);
    let dreamer = host.dreamer(args.host, timeout, out)?;
    let flags = DreamFlags {
        notes_home: args.notes_home,
        min_hours: Some(args.min_hours),
        min_sessions: Some(args.min_sessions),
        force: args.force,
        dreamer: args.dreamer,
        playbook: args.playbook,
    };
    let options = flags.options(host.notes_root(), dreamer.setting, jiff::Timestamp::now())?;
    let mut runner = dreamer.runner;
    let status = StatusLine::new(std::io::stderr().is_terminal());
    let code = {
        let mut progress = |progress: &DreamProgress| status.tell(progress);
        run_dream_command(
            &options,
            Dreamer {
                runner: runner.as_mut(),
                process: Some(dreamer.process),
                progress: Some(&mut progress),
            },
            &mut |line| {
                status.clear();
                out.line(line);
            },
        )
    };
    status.clear();
    Ok(exit_code(code))
}

/// A running dream's progress. On a terminal: one status line on stderr,
/// redrawn in place at each dream-tool call (`dream: 42 s, 7 tool calls, 2
/// notes changed`) and cleared before any other line. Elsewhere: a plain
/// line for each call that changes a note.
struct StatusLine {
    terminal: bool,
    drawn: std::cell::Cell<bool>,
}

impl StatusLine {
    fn new(terminal: bool) -> Self {
        Self {
            terminal,
            drawn: std::cell::Cell::new(false),
        }
    }

    fn tell(&self, progress: &DreamProgress) {
        let seconds = progress.elapsed.as_secs();
        let counts = format!(
            "{} tool call{}, {} note{} changed",
            progress.tool_calls,
            if progress.tool_calls == 1 { "" } else { "s" },
            progress.notes_changed,
            if progress.notes_changed == 1 { "" } else { "s" },
        );
        let mut stderr = std::io::stderr().lock();
        // A closed stderr leaves nowhere to say anything.
        if self.terminal {
            let _ = write!(stderr, "\r\x1b[2Kdream: {seconds} s, {counts}");
            let _ = stderr.flush();
            self.drawn.set(true);
        } else if let Some(change) = &progress.change {
            let _ = writeln!(
                stderr,
                "dream: {seconds} s: {} {} ({counts})",
                change.tool, change.path
            );
        }
    }

    /// Clears the status line, when one is drawn, so the next line starts
    /// on a clean line.
    fn clear(&self) {
        if self.drawn.replace(false) {
            let mut stderr = std::io::stderr().lock();
            let _ = write!(stderr, "\r\x1b[2K");
            let _ = stderr.flush();
        }
    }
}

fn exit_code(code: i32) -> u8 {
    u8::try_from(code).unwrap_or(1)
}
