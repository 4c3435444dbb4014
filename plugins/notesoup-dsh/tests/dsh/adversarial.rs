//! The adversarial corpora in `tests/adversarial/` against the real
//! `notesoup-dsh serve` process, all cases of a corpus in one process: every
//! bad line gets one bounded, coded answer, the sidecar answers the next valid
//! request, and nothing outside the notes root changes.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use notesoup_dsh::protocol::MAX_MESSAGE_BYTES;
use notesoup_test_support::adversarial::corpus;
use notesoup_test_support::files::put;
use serde_json::{Value, json};

/// Probes are numbered from here, far from every id the corpus uses.
const PROBE_BASE: u64 = 1_000_000;

/// No answer to these corpora needs more: refusals are a code and a message
/// of at most [`MAX_MESSAGE_BYTES`], results are core's bounded outputs.
const MAX_ERROR_ANSWER_BYTES: usize = MAX_MESSAGE_BYTES + 256;
const MAX_ANSWER_BYTES: usize = 128 * 1024;

/// A case's line: a string, or segments (strings, `{"hex"}`, `{"repeat",
/// "times"}`) joined.
fn line_bytes(line: &Value) -> Vec<u8> {
    let segments = match line {
        Value::String(text) => return text.as_bytes().to_vec(),
        Value::Array(segments) => segments,
        other => panic!("a line is a string or segments: {other}"),
    };
    let mut bytes = Vec::new();
    for segment in segments {
        match segment {
            Value::String(text) => bytes.extend_from_slice(text.as_bytes()),
            Value::Object(map) if map.contains_key("hex") => {
                let hex = map["hex"].as_str().expect("hex string");
                bytes.extend(
                    (0..hex.len())
                        .step_by(2)
                        .map(|at| u8::from_str_radix(&hex[at..at + 2], 16).expect("hex digits")),
                );
            }
            Value::Object(map) if map.contains_key("repeat") => {
                let unit = map["repeat"].as_str().expect("repeat string");
                let times = map["times"].as_u64().expect("times") as usize;
                bytes.extend_from_slice(unit.repeat(times).as_bytes());
            }
            other => panic!("unknown segment {other}"),
        }
    }
    bytes
}

/// A temporary world: the notes root and, around it, a home, a working
/// directory and a bystander directory the sidecar must never touch.
struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        for (file, text) in [
            ("notes/.keep", ""),
            ("home/.profile", "export A=1\n"),
            ("work/src/main.rs", "fn main() {}\n"),
            ("outside/precious.md", "# not a note\n"),
        ] {
            put(&dir.path().join(file), text);
        }
        Self { dir }
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    /// Every entry outside the notes root and the caches' directory, with
    /// its content; in the caches' directory there are only the boots'
    /// caches.
    fn outside_notes(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut entries = BTreeMap::new();
        walk(self.dir.path(), &self.path("notes"), &mut entries);
        let caches = self.path("caches");
        entries.retain(|path, _| {
            let Ok(rel) = path.strip_prefix(&caches) else {
                return true;
            };
            let rel = rel.to_string_lossy();
            assert!(
                ["", "notesoup"].contains(&rel.as_ref())
                    || rel.starts_with("notesoup/boot-shelves")
                    || rel.starts_with("notesoup/note-heads"),
                "unexpected cache {rel}"
            );
            false
        });
        entries
    }

    /// Runs `notesoup-dsh serve` on the lines `feed` writes.
    fn serve(&self, feed: impl FnOnce(&mut dyn Write) + Send + 'static) -> Served {
        let mut child = Command::new(env!("CARGO_BIN_EXE_notesoup-dsh"))
            .arg("serve")
            .current_dir(self.path("work"))
            .env("HOME", self.path("home"))
            .env("PI_NOTES_HOME", self.path("notes"))
            .env("XDG_CACHE_HOME", self.path("caches"))
            .env_remove("PI_NOTES_AGENT")
            .env_remove("XDG_DATA_HOME")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("sidecar starts");
        let mut stdin = child.stdin.take().expect("stdin");
        let writer = std::thread::spawn(move || {
            // A sidecar that dies early makes writes fail; the answers
            // missing then say what went wrong.
            feed(&mut stdin);
        });
        let mut stderr = child.stderr.take().expect("stderr");
        let errors = std::thread::spawn(move || {
            let mut text = String::new();
            stderr.read_to_string(&mut text).map(|_| text)
        });
        let answers = BufReader::new(child.stdout.take().expect("stdout"))
            .split(b'\n')
            .map(|line| String::from_utf8(line.expect("read answer")).expect("UTF-8 answer"))
            .collect();
        writer.join().expect("writer");
        let status = child.wait().expect("sidecar exits");
        Served {
            answers,
            status,
            stderr: errors.join().expect("stderr reader").expect("stderr"),
        }
    }
}

fn walk(dir: &Path, skip: &Path, entries: &mut BTreeMap<PathBuf, Vec<u8>>) {
    for entry in std::fs::read_dir(dir).expect("read_dir") {
        let path = entry.expect("entry").path();
        if path == skip {
            continue;
        }
        let meta = std::fs::symlink_metadata(&path).expect("metadata");
        if meta.is_dir() {
            entries.insert(path.clone(), b"<dir>".to_vec());
            walk(&path, skip, entries);
        } else if meta.is_symlink() {
            let target = std::fs::read_link(&path).expect("link");
            entries.insert(path, target.into_os_string().into_encoded_bytes());
        } else {
            entries.insert(path.clone(), std::fs::read(&path).expect("read"));
        }
    }
}

struct Served {
    answers: Vec<String>,
    status: ExitStatus,
    stderr: String,
}

fn hello_line(id: u64) -> Vec<u8> {
    let mut line = json!({"id": id, "op": "hello",
        "params": {"protocol": 1, "bundle": "0.1.0", "dsh": "0.1.0-rc.8", "settings": {}}})
    .to_string()
    .into_bytes();
    line.push(b'\n');
    line
}

/// What one answer must be.
#[derive(Debug, Clone)]
struct Expected {
    id: u64,
    code: String,
    refusal: Option<String>,
}

impl Expected {
    fn probe(index: usize) -> Self {
        Self {
            id: PROBE_BASE + index as u64,
            code: "ok".into(),
            refusal: None,
        }
    }

    fn of(expect: &Value) -> Option<Self> {
        if expect == "none" {
            return None;
        }
        Some(Self {
            id: expect["id"].as_u64().expect("expected id"),
            code: expect["code"].as_str().expect("expected code").to_owned(),
            refusal: expect["refusal"].as_str().map(str::to_owned),
        })
    }

    /// What is wrong with `answer`, if anything; also the code it carried.
    fn check(&self, answer: Option<&str>) -> (String, Option<String>) {
        let Some(answer) = answer else {
            return (
                "no answer".into(),
                Some("the sidecar gave no answer".into()),
            );
        };
        let Ok(value) = serde_json::from_str::<Value>(answer) else {
            return (
                "unreadable".into(),
                Some(format!("not JSON: {answer:.200}")),
            );
        };
        let got = if let Some(error) = value.get("error") {
            error["code"].as_str().unwrap_or("?").to_owned()
        } else if value["result"]["is_error"] == true {
            format!(
                "ok/{}",
                value["result"]["result"]["code"].as_str().unwrap_or("?")
            )
        } else {
            "ok".to_owned()
        };
        let mut problems = Vec::new();
        if value["id"].as_u64() != Some(self.id) {
            problems.push(format!("id {} instead of {}", value["id"], self.id));
        }
        let wanted = match &self.refusal {
            Some(refusal) => format!("{}/{refusal}", self.code),
            None => self.code.clone(),
        };
        if got != wanted {
            problems.push(format!("answered {got} instead of {wanted}"));
        }
        if let Some(error) = value.get("error") {
            let message = error["message"].as_str().unwrap_or_default();
            if message.is_empty() || message.len() > MAX_MESSAGE_BYTES {
                problems.push(format!("message of {} bytes", message.len()));
            }
            if answer.len() > MAX_ERROR_ANSWER_BYTES {
                problems.push(format!("refusal of {} bytes", answer.len()));
            }
        } else if answer.len() > MAX_ANSWER_BYTES {
            problems.push(format!("answer of {} bytes", answer.len()));
        }
        let problem = (!problems.is_empty())
            .then(|| format!("{} (answer: {answer:.300})", problems.join("; ")));
        (got, problem)
    }
}

#[test]
fn every_bad_sidecar_line_gets_a_coded_answer_and_serving_goes_on() {
    let cases = corpus("sidecar-lines.jsonl");
    let at_eof: Vec<usize> = (0..cases.len())
        .filter(|i| cases[*i]["eof"] == true)
        .collect();
    assert!(
        at_eof.is_empty() || at_eof == [cases.len() - 1],
        "only the last case may end the input"
    );
    let world = World::new();
    let before = world.outside_notes();

    let feed_cases = cases.clone();
    let served = world.serve(move |stdin| {
        for (index, case) in feed_cases.iter().enumerate() {
            let mut line = line_bytes(&case["line"]);
            if case["eof"] == true {
                let _ = stdin.write_all(&line);
                return;
            }
            line.push(b'\n');
            line.extend(hello_line(PROBE_BASE + index as u64));
            if stdin.write_all(&line).is_err() {
                return;
            }
        }
    });

    let mut answers = served.answers.iter().map(String::as_str);
    let mut failures = Vec::new();
    let mut tally: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for (index, case) in cases.iter().enumerate() {
        let class = case["class"].as_str().expect("class");
        let why = case["why"].as_str().expect("why");
        let got = match Expected::of(&case["expect"]) {
            Some(expected) => {
                let (got, problem) = expected.check(answers.next());
                if let Some(problem) = problem {
                    failures.push(format!("case {index} [{class}] {why}: {problem}"));
                }
                got
            }
            None => "no answer (skipped)".to_owned(),
        };
        *tally
            .entry(class.to_owned())
            .or_default()
            .entry(got)
            .or_default() += 1;
        if case["eof"] != true {
            let (_, problem) = Expected::probe(index).check(answers.next());
            if let Some(problem) = problem {
                failures.push(format!(
                    "case {index} [{class}] {why}: the next valid request: {problem}"
                ));
            }
        }
    }
    let extra: Vec<&str> = answers.collect();
    if !extra.is_empty() {
        failures.push(format!(
            "{} answers nobody asked for: {extra:?}",
            extra.len()
        ));
    }

    let mut report = String::new();
    for (class, codes) in &tally {
        let total: usize = codes.values().sum();
        let _ = writeln!(report, "{class}: {total} cases: {codes:?}");
    }
    println!("sidecar-lines: {} cases\n{report}", cases.len());

    assert!(failures.is_empty(), "{}\n{report}", failures.join("\n"));
    assert!(served.status.success(), "exit: {}", served.status);
    assert!(
        !served.stderr.contains("panicked"),
        "the sidecar panicked: {}",
        served.stderr
    );
    assert_eq!(
        world.outside_notes(),
        before,
        "nothing outside the notes root changes"
    );
    let mut notes = BTreeMap::new();
    walk(&world.path("notes"), Path::new(""), &mut notes);
    for refused in ["latin1.md", "cut.md", "huge.md", "eof.md", "big.md"] {
        assert!(
            !notes.keys().any(|path| path.ends_with(refused)),
            "a refused write left {refused}: {:?}",
            notes.keys().collect::<Vec<_>>()
        );
    }
}

#[test]
fn the_address_corpus_through_notes_write() {
    let cases = corpus("addresses.jsonl");
    let world = World::new();
    let before = world.outside_notes();
    let feed_cases = cases.clone();
    let served = world.serve(move |stdin| {
        let mut input = hello_line(1);
        for (index, case) in feed_cases.iter().enumerate() {
            let request = json!({"id": 10 + index, "op": "tool", "params": {
                "session": {"id": "session-addresses", "cwd": "/adversarial/work",
                            "model": "scripted/scripted-model", "from": 0, "events": []},
                "name": "notes_write",
                "arguments": {"address": case["address"], "content": format!("adversarial address case {index}")},
            }});
            input.extend(request.to_string().into_bytes());
            input.push(b'\n');
        }
        let _ = stdin.write_all(&input);
    });

    let mut answers = served.answers.iter().map(String::as_str);
    let greeted = Expected::probe(0);
    let (_, problem) = Expected { id: 1, ..greeted }.check(answers.next());
    assert_eq!(problem, None, "hello");
    let mut failures = Vec::new();
    let mut tally: BTreeMap<String, usize> = BTreeMap::new();
    for (index, case) in cases.iter().enumerate() {
        let code = case["code"].as_str().expect("code");
        let expected = Expected {
            id: 10 + index as u64,
            code: "ok".into(),
            refusal: (code != "ok").then(|| code.to_owned()),
        };
        let (got, problem) = expected.check(answers.next());
        *tally.entry(got).or_default() += 1;
        if let Some(problem) = problem {
            failures.push(format!(
                "{:?} ({}): {problem}",
                case["address"].as_str().unwrap_or_default(),
                case["why"].as_str().unwrap_or_default()
            ));
        }
    }
    println!("addresses: {} cases: {tally:?}", cases.len());
    assert!(
        failures.is_empty(),
        "{} of {} address cases answered otherwise:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    assert!(served.status.success(), "exit: {}", served.status);
    assert_eq!(
        world.outside_notes(),
        before,
        "nothing outside the notes root changes"
    );
}
