//! The docs' command lines run: every command line in README.md and docs/
//! that starts with one of the three binaries (in a `sh` block, or in an
//! inline code span) is run, in a fresh home with stand-ins for the hosts,
//! and must not meet clap's "unexpected argument" or "unrecognized
//! subcommand". A synopsis is run in every form it allows: `a|b` each
//! alternative, `[…]` with its contents, placeholders (`<address>`, `N`,
//! `DIR`, …) as sample values.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use super::{Bin, Machine, Run};

/// The docs the check reads.
fn docs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// A candidate command line, and whether it is from a code block (a
/// command to type) or an inline span (which may quote output instead).
struct Candidate {
    line: String,
    block: bool,
}

/// Every candidate command line of a markdown text: the lines of its `sh`
/// blocks and its inline code spans (a table's `\|` read as `|`).
fn candidates(text: &str) -> Vec<Candidate> {
    let mut found = Vec::new();
    let mut in_sh = false;
    let mut in_other = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            if in_sh || in_other {
                in_sh = false;
                in_other = false;
            } else if matches!(info.trim(), "sh" | "bash" | "shell" | "console") {
                in_sh = true;
            } else {
                in_other = true;
            }
            continue;
        }
        if in_sh {
            found.push(Candidate {
                line: trimmed.to_owned(),
                block: true,
            });
        } else if !in_other {
            let mut rest = line;
            while let Some(start) = rest.find('`') {
                let after = &rest[start + 1..];
                let Some(end) = after.find('`') else { break };
                found.push(Candidate {
                    line: after[..end].replace("\\|", "|"),
                    block: false,
                });
                rest = &after[end + 1..];
            }
        }
    }
    found
}

/// The shell words of `line` (quotes removed), cut at a comment.
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        c => word.push(c),
                    }
                }
            }
            '#' if !in_word => break,
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// The commands of a shell line that start with one of the binaries: the
/// line split at `&&`, `;` and pipes, redirections left off.
fn commands(line: &str) -> Vec<(Bin, Vec<String>)> {
    let mut out = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut flush = |current: &mut Vec<String>| {
        if let Some(first) = current.first()
            && let Some(bin) = Bin::named(first)
        {
            out.push((bin, current[1..].to_vec()));
        }
        current.clear();
    };
    let mut redirected = false;
    for word in words(line) {
        match word.as_str() {
            "&&" | "||" | ";" | "|" => {
                flush(&mut current);
                redirected = false;
            }
            w if w.starts_with('>')
                || w.starts_with("2>")
                || (w.starts_with('<') && !w.ends_with('>')) =>
            {
                redirected = true;
            }
            _ if redirected => {}
            _ => current.push(word),
        }
    }
    flush(&mut current);
    out
}

/// A sample value for the placeholder `word`, given the flag before it.
fn sample(word: &str, flag: Option<&str>, machine: &Machine) -> Option<String> {
    let placeholder = (word.starts_with('<') && word.ends_with('>'))
        || (word.len() > 1
            && word
                .chars()
                .all(|c| c.is_ascii_uppercase() || c == '_' || c == '=' || c.is_ascii_digit())
            && word.chars().any(|c| c.is_ascii_uppercase()))
        || word == "N"
        || word == "H";
    if !placeholder {
        return None;
    }
    let numeric = [
        "--limit",
        "--offset",
        "--min-hours",
        "--min-sessions",
        "--timeout",
        "--seq",
        "--before",
        "--after",
        "--max-matches-per-file",
        "--max-chars",
    ];
    let paths = [
        "--dir",
        "--notes-home",
        "--cwd",
        "--playbook",
        "--out",
        "--pi",
        "--dsh",
        "--claude",
    ];
    Some(match flag {
        Some(flag) if numeric.contains(&flag) => "5".to_owned(),
        Some(flag) if paths.contains(&flag) => {
            machine.root.join("sample-dir").display().to_string()
        }
        _ if word.contains("ADDRESS") || word.contains("address") => "@human/sample.md".to_owned(),
        _ => "x".to_owned(),
    })
}

/// Every form a synopsis `args` allows: each `a|b` alternative (in turn,
/// the others left at their first), `[…]` taken in, `…` left out,
/// placeholders as samples.
fn forms(args: &[String], machine: &Machine) -> Vec<Vec<String>> {
    let cleaned: Vec<Vec<String>> = args
        .iter()
        .filter(|arg| !matches!(arg.as_str(), "[flags]" | "[options]" | "[args]"))
        .map(|arg| arg.replace(['[', ']'], ""))
        .filter(|arg| !arg.is_empty() && arg != "…" && arg != "...")
        .map(|arg| {
            if arg.contains('|') && !arg.starts_with('{') && !arg.contains('=') {
                arg.split('|')
                    .filter(|choice| !matches!(*choice, "…" | "..." | ""))
                    .map(str::to_owned)
                    .collect()
            } else {
                vec![arg]
            }
        })
        .collect();
    let widest = cleaned.iter().map(Vec::len).max().unwrap_or(1);
    (0..widest)
        .map(|pick| {
            let mut form: Vec<String> = Vec::new();
            for choices in &cleaned {
                let word = choices.get(pick).unwrap_or(&choices[0]);
                let flag = form.last().filter(|last| last.starts_with("--")).cloned();
                form.push(sample(word, flag.as_deref(), machine).unwrap_or_else(|| word.clone()));
            }
            form
        })
        .collect()
}

/// What clap says when a command line is not one of this binary's.
const MISTAKES: [&str; 2] = ["unexpected argument", "unrecognized subcommand"];

#[test]
fn every_documented_command_line_is_one_the_binaries_take() {
    let machine = Machine::new();
    for host in ["claude", "pi", "dsh", "pnpm"] {
        machine.stand_in(host, "exit 0");
    }
    machine.stand_in("node", "echo v22.19.0");
    // An inline span counts when it names a command the binary has (prose
    // also quotes output lines, `notesoup-pi 0.1.0 (Pi 1.6.0, …)`); a
    // block's every line counts.
    let subcommands: Vec<(Bin, Vec<String>)> = Bin::ALL
        .into_iter()
        .map(|bin| {
            let help = machine.run(bin, &["--help"]);
            (bin, super::listed_commands(help.ok()))
        })
        .collect();
    let known = |bin: Bin, first: Option<&String>| {
        first.is_none_or(|first| {
            first.starts_with('-')
                || subcommands.iter().any(|(of, names)| {
                    *of == bin
                        && names
                            .iter()
                            .any(|name| first.split('|').next() == Some(name.as_str()))
                })
        })
    };
    let mut checked = 0;
    let mut wrong = Vec::new();
    for doc in docs() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for Candidate { line, block } in candidates(&text) {
            for (bin, args) in commands(&line) {
                if !block && !known(bin, args.first()) {
                    continue;
                }
                for form in forms(&args, &machine) {
                    let args: Vec<&str> = form.iter().map(String::as_str).collect();
                    let child = machine
                        .command(bin, &args)
                        .stdout(Stdio::piped())
                        .stderr(Stdio::piped())
                        .spawn()
                        .unwrap();
                    let run = Run::of(child.wait_with_output().unwrap());
                    checked += 1;
                    if MISTAKES.iter().any(|mistake| run.stderr.contains(mistake)) {
                        wrong.push(format!(
                            "{}: `{line}` as `{} {}`:\n{}",
                            doc.file_name().unwrap().to_string_lossy(),
                            bin.name(),
                            form.join(" "),
                            run.stderr
                        ));
                    }
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} command lines found");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_check_finds_the_forms_a_synopsis_allows() {
    let machine = Machine::new();
    let line = "notesoup-dsh notes list|read [--limit N] <address> …  # a comment";
    let found = commands(line);
    assert_eq!(found.len(), 1);
    let (bin, args) = &found[0];
    assert_eq!(*bin, Bin::Dsh);
    assert_eq!(
        forms(args, &machine),
        [
            ["notes", "list", "--limit", "5", "@human/sample.md"],
            ["notes", "read", "--limit", "5", "@human/sample.md"],
        ]
    );
    assert_eq!(
        commands("cargo install --locked --path x && notesoup install-plugin | head > out"),
        [(Bin::Claude, vec!["install-plugin".to_owned()])]
    );
    // A wrong line is caught.
    let run = machine.run(Bin::Pi, &["notes", "lst"]);
    assert!(MISTAKES.iter().any(|m| run.stderr.contains(m)), "{run:?}");
}
