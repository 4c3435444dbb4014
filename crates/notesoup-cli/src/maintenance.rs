//! `doctor` (and `dream doctor`) and `dream`: core's checks and core's dream
//! command flow over the host's dreamer.

use notesoup_core::dream::{clean_temp_files, doctor as check_home, purge_secrets};
use std::io::{IsTerminal, Write};

use notesoup_core::plumbing::{DreamFlags, DreamProgress, Dreamer, notes_home};
use notesoup_core::sync::NotesSync;
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
    match args.command {
        Some(DoctorCommand::Clean { apply }) => {
            let output = clean_temp_files(&home, apply, std::time::SystemTime::now()).output();
            output.lines.iter().for_each(|line| out.line(line));
            return Ok(exit_code(output.exit_code));
        }
        Some(DoctorCommand::Purge { apply }) => return purge(&home, apply, out),
        None => {}
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

/// `doctor purge [--apply]`: what the dream's history holds that the
/// credential guard would refuse, and with `--apply` the history rewritten
/// without it.
fn purge(home: &std::path::Path, apply: bool, out: &mut Out) -> anyhow::Result<u8> {
    let report = purge_secrets(home, apply)?;
    if report.found.is_empty() {
        out.print(&format!(
            "doctor purge: the dream's history holds no credential ({})",
            home.display()
        ));
        return Ok(0);
    }
    let mut paths: Vec<&str> = report.found.iter().map(|s| s.path.as_str()).collect();
    paths.sort_unstable();
    paths.dedup();
    let commits = report
        .found
        .iter()
        .map(|secret| &secret.commit)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    if !report.applied {
        for secret in &report.found {
            let short = secret.commit.get(..12).unwrap_or(&secret.commit);
            out.print(&format!(
                "would remove {} ({}) from commit {short}",
                secret.path, secret.kind
            ));
        }
        out.print(&format!(
            "{} file{} in {commits} commit{}; run again with --apply to rewrite the history without them",
            paths.len(),
            if paths.len() == 1 { "" } else { "s" },
            if commits == 1 { "" } else { "s" },
        ));
        return Ok(0);
    }
    out.print(&format!(
        "rewrote {} commit{} without {}",
        report.rewritten,
        if report.rewritten == 1 { "" } else { "s" },
        paths.join(", ")
    ));
    if !report.still_packed.is_empty() {
        out.warn(&format!(
            "doctor purge: Git's packs still hold {} of them: run `git -C {} gc --prune=now` to remove them",
            report.still_packed.len(),
            home.display()
        ));
    }
    out.warn("doctor purge: the notes themselves are unchanged: edit them, or delete them with `notes delete --force`; the next dream's audit leaves a note holding a credential out");
    Ok(0)
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
    let timeout = notesoup_core::plumbing::DreamFlags::timeout(args.timeout);
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
        Dreamer {
            runner: runner.as_mut(),
            process: Some(dreamer.process),
            progress: Some(&mut progress),
        }
        .run(&options, &mut |line| {
            status.clear();
            out.line(line);
        })
    };
    status.clear();
    // What the dream tidied goes out in the background (`auto` sync).
    NotesSync::open(&options.home).auto_background();
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
