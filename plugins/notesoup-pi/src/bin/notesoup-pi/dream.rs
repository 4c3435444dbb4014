//! `notesoup-pi dream` and `notesoup-pi dream doctor` (spec section 10.1).
//!
//! A standalone binary has no real model: the dreamer is the reference
//! host's scripted model, whose steps come from `--script FILE`. A real Pi
//! host supplies the dreamer through `DreamSessionHost` instead.

use std::path::PathBuf;

use notesoup_core::dream::{
    DreamOptions, DreamOutput, Stream, clean_temp_files, doctor, run_dream,
};
use notesoup_pi::dream::PiDreamRunner;
use notesoup_pi::testkit::{ReferenceDreamHost, ScriptedModel, parse_dream_script};

pub const DREAM_USAGE: &str = "usage: notesoup-pi dream [--notes-home DIR] [--min-hours N] [--min-sessions N] [--force]
                         [--dreamer PATTERN] [--playbook PATH] --script FILE
       notesoup-pi dream doctor [--notes-home DIR]
       notesoup-pi dream doctor clean [--notes-home DIR] [--apply]

  dream         gates, lock, baseline audit, the dreamer, report, final audit
                --notes-home DIR   the notes home (default: $PI_NOTES_HOME, else ~/.agents/notes)
                --min-hours N      time gate (default 24)
                --min-sessions N   material gate (default 3)
                --force            bypass the gates (never the lock)
                --dreamer PATTERN  model pattern (the scripted model is scripted/scripted-1)
                --playbook PATH    the prompt (default: the packaged playbook)
                --script FILE      the dreamer's turns as JSON: [{\"tools\":[{\"name\":\"read\",
                                   \"arguments\":{\"path\":\"x.md\"}}]}, {\"text\":\"report\"}, {\"error\":\"...\"}]
  dream doctor  read-only checks of the notes home; exit 1 when issues are found
  dream doctor clean
                lists the temporary files interrupted writes left (older than a
                minute, writer gone); --apply removes them

  This binary has no real model: its dreamer is the reference host's scripted
  model and replays --script. A real Pi host supplies the dreamer through
  notesoup_pi::dream::DreamSessionHost.";

const NO_SCRIPT: &str = "notesoup-pi dream: no dreamer: this standalone binary has no model; give --script FILE to replay a scripted dreamer, or run dream inside a Pi host, which supplies the dreamer via notesoup_pi::dream::DreamSessionHost";

/// Runs `dream …` and returns the exit code.
pub fn main(args: &[String]) -> u8 {
    match run(args) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("notesoup-pi dream: {error}\n{DREAM_USAGE}");
            2
        }
    }
}

fn run(args: &[String]) -> Result<u8, String> {
    if args.first().map(String::as_str) == Some("doctor") {
        let clean = args.get(1).map(String::as_str) == Some("clean");
        let mut home = None;
        let mut apply = false;
        let mut rest = args[if clean { 2 } else { 1 }..].iter();
        while let Some(arg) = rest.next() {
            match arg.as_str() {
                "--notes-home" => home = Some(value(&mut rest, arg)?),
                "--apply" if clean => apply = true,
                "--help" => return help(),
                other => return Err(format!("unknown argument {other}")),
            }
        }
        let home = resolve_home(home)?;
        if clean {
            let report = clean_temp_files(&home, apply, std::time::SystemTime::now());
            return Ok(print(&report.output()));
        }
        return Ok(print(&doctor(&home).output()));
    }

    let mut home = None;
    let mut script = None;
    let mut options = DreamOptions::new(PathBuf::new(), jiff::Timestamp::now());
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--help" => return help(),
            "--force" => options.force = true,
            "--notes-home" => home = Some(value(&mut rest, arg)?),
            "--min-hours" => {
                options.min_hours = number(&value(&mut rest, arg)?, arg)?;
            }
            "--min-sessions" => {
                options.min_sessions = number(&value(&mut rest, arg)?, arg)?;
            }
            "--dreamer" => options.model_pattern = Some(value(&mut rest, arg)?),
            "--playbook" => options.playbook = Some(PathBuf::from(value(&mut rest, arg)?)),
            "--script" => script = Some(PathBuf::from(value(&mut rest, arg)?)),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    let Some(script) = script else {
        eprintln!("{NO_SCRIPT}");
        return Ok(1);
    };
    let text = std::fs::read_to_string(&script)
        .map_err(|err| format!("cannot read script {}: {err}", script.display()))?;
    let steps = parse_dream_script(&text)?;
    options.home = resolve_home(home)?;
    let mut model = ScriptedModel::new(200_000);
    for step in steps {
        model.push(step);
    }
    let mut runner = PiDreamRunner::new(ReferenceDreamHost::new(model));
    Ok(print(&run_dream(&options, &mut runner)))
}

fn help() -> Result<u8, String> {
    outln!("{DREAM_USAGE}");
    Ok(0)
}

fn value(rest: &mut std::slice::Iter<'_, String>, flag: &str) -> Result<String, String> {
    rest.next()
        .cloned()
        .ok_or_else(|| format!("{flag} needs a value"))
}

fn number<T: std::str::FromStr>(text: &str, flag: &str) -> Result<T, String> {
    text.parse()
        .map_err(|_| format!("{flag} needs a number, got {text:?}"))
}

/// `--notes-home`, else the notes root (`PI_NOTES_HOME`, else
/// `~/.agents/notes`), absolute.
fn resolve_home(home: Option<String>) -> Result<PathBuf, String> {
    let env = |name: &str| std::env::var(name).ok();
    let home = match home {
        Some(dir) => {
            std::path::absolute(&dir).map_err(|err| format!("--notes-home {dir}: {err}"))?
        }
        None => notesoup_core::notes::default_root(env)
            .ok_or_else(|| "no notes home: give --notes-home or set PI_NOTES_HOME".to_owned())?,
    };
    Ok(home)
}

fn print(output: &DreamOutput) -> u8 {
    for line in &output.lines {
        match line.stream {
            Stream::Stdout => outln!("{}", line.text),
            Stream::Stderr => eprintln!("{}", line.text),
        }
    }
    u8::try_from(output.exit_code).unwrap_or(1)
}
