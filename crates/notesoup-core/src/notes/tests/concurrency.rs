//! No lost updates across threads and processes; no torn notes after SIGKILL.
//!
//! The multi-process tests re-execute this test binary: `child_worker_entry`
//! becomes a worker when `NOTESOUP_NOTES_CHILD` is set (and does nothing in a
//! normal run).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use jiff::tz::TimeZone;
use notesoup_core::notes::{ListQuery, parse_note};

use super::support::{AllRows, Fixture, edits, store_at};

const CHILD_ENV: &str = "NOTESOUP_NOTES_CHILD";
const END: &str = "<!-- end -->";

fn append(store: &notesoup_core::notes::NoteStore, line: &str) {
    let request = edits(&[(END, &format!("{line}\n{END}"))]);
    store.update("@project/shared", &request).expect("append");
}

/// The body a crash-test writer gives note version `n`: self-describing, so
/// any mix of two versions is detectable.
fn versioned_body(n: u64) -> String {
    let mut body = format!("version {n}\n");
    for line in 0..(n % 40 + 1) {
        body.push_str(&format!(
            "payload {n} line {line} {}\n",
            "x".repeat((n % 7) as usize * 50)
        ));
    }
    body
}

/// Runs as a worker process when `NOTESOUP_NOTES_CHILD` says so.
#[test]
fn child_worker_entry() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let parts: Vec<&str> = spec.split('|').collect();
    match parts.as_slice() {
        ["append", home, worker, count] => {
            let store = store_at(Path::new(home), "alice", "gpt");
            let count: usize = count.parse().expect("count");
            for i in 0..count {
                append(&store, &format!("w{worker}-{i}"));
            }
        }
        ["crash", home] => {
            let store = store_at(Path::new(home), "alice", "gpt");
            let mut n: u64 = 0;
            loop {
                n += 1;
                let note = format!("@project/crash-{}", n % 3);
                store.write(&note, &versioned_body(n), None).expect("write");
                if n == 3 {
                    println!("ready");
                }
            }
        }
        _ => panic!("unknown child spec {spec}"),
    }
}

fn spawn(spec: &str) -> Child {
    Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "notes::tests::concurrency::child_worker_entry",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, spec)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn worker")
}

fn body_lines(fixture: &Fixture) -> Vec<String> {
    let read = fixture
        .store
        .read("@project/shared")
        .expect("read")
        .expect("exists");
    read.body.lines().map(str::to_owned).collect()
}

fn expected_lines(workers: usize, count: usize) -> Vec<String> {
    let mut lines: Vec<String> = (0..workers)
        .flat_map(|w| (0..count).map(move |i| format!("w{w}-{i}")))
        .collect();
    lines.push(END.to_owned());
    lines.sort();
    lines
}

#[test]
fn threads_never_lose_an_update() {
    let f = Fixture::new();
    f.store.write("@project/shared", END, None).expect("seed");
    let (workers, count) = (6, 20);
    std::thread::scope(|scope| {
        for worker in 0..workers {
            let home = f.dir.path().join("notes");
            scope.spawn(move || {
                // A store per thread: the queue is process-wide, not per store.
                let store = store_at(&home, "alice", "gpt");
                for i in 0..count {
                    append(&store, &format!("w{worker}-{i}"));
                }
            });
        }
    });
    let mut lines = body_lines(&f);
    lines.sort();
    assert_eq!(lines, expected_lines(workers, count));
}

#[test]
fn processes_never_lose_an_update() {
    let f = Fixture::new();
    f.store.write("@project/shared", END, None).expect("seed");
    let home = f.dir.path().join("notes");
    let (workers, count) = (4, 25);
    let children: Vec<Child> = (0..workers)
        .map(|worker| spawn(&format!("append|{}|{worker}|{count}", home.display())))
        .collect();
    for mut child in children {
        assert!(child.wait().expect("wait").success(), "a worker failed");
    }
    let mut lines = body_lines(&f);
    lines.sort();
    assert_eq!(lines, expected_lines(workers, count));
}

/// A small deterministic generator for kill delays.
fn next_random(state: &mut u64) -> u64 {
    *state = state
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    *state >> 33
}

#[test]
fn sigkill_never_leaves_a_torn_note() {
    let f = Fixture::new();
    let home = f.dir.path().join("notes");
    let mut seed = u64::from(std::process::id());
    let rounds = 20;
    for _ in 0..rounds {
        let mut child = spawn(&format!("crash|{}", home.display()));
        let stdout = child.stdout.take().expect("stdout");
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        while !line.contains("ready") {
            line.clear();
            if reader.read_line(&mut line).expect("read child") == 0 {
                panic!("worker exited before it was ready");
            }
        }
        std::thread::sleep(Duration::from_micros(next_random(&mut seed) % 15_000));
        child.kill().expect("SIGKILL");
        child.wait().expect("reap");
        check_every_note_is_whole(&f);
    }
}

fn check_every_note_is_whole(f: &Fixture) {
    let dir = f.root().join("project/proj-12345678");
    let mut notes = 0;
    for entry in std::fs::read_dir(&dir).expect("home") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("name")
            .to_owned();
        if !name.ends_with(".md") {
            assert!(
                name.ends_with(".tmp"),
                "only temp files may be left behind: {name}"
            );
            continue;
        }
        notes += 1;
        let text = std::fs::read_to_string(&path).expect("utf-8 note");
        let parsed = parse_note(&text, 0, &TimeZone::UTC);
        assert!(parsed.has_frontmatter, "{name} lost its frontmatter");
        let n: u64 = parsed
            .body
            .lines()
            .next()
            .and_then(|first| first.strip_prefix("version "))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{name} has no version line: {:?}", parsed.body));
        assert_eq!(parsed.body, versioned_body(n), "{name} is torn");
    }
    assert_eq!(notes, 3);
    let listed = f.store.list(&ListQuery::default()).all_rows();
    assert_eq!(listed.len(), 3, "temp files are never listed");
}
