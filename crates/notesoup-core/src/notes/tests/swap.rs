//! A local process racing every write path: while the store, the dream's
//! tools and `doctor clean` work, a swapper exchanges a directory below the root with a
//! symbolic link to a directory outside (`renameat2` with
//! `RENAME_EXCHANGE`), as fast as it can. Whatever moment a swap lands,
//! nothing outside the root may be created or changed: each attempt either
//! acts on the real directory (wherever the swap has moved it, still below
//! the root) or is refused.
//!
//! The number of attempts is fixed; the outcome of each attempt depends on
//! where the swapper is, so the test asserts only what must hold for every
//! interleaving (nothing outside changed), and prints the tally per attack
//! class and write path.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, SystemTime};

use notesoup_core::dream::{DreamTools, TextEdit, clean_temp_files};
use notesoup_core::notes::UpdateRequest;
use rustix::fs::{CWD, RenameFlags, renameat_with};

use super::support::{Fixture, edits};

/// Attempts per write path and attack class.
const ATTEMPTS: usize = 120;

const CRUMPLED: &str =
    "---\norigin: self\ncrumpledAt: 2026-01-01T00:00:00.000+00:00\n---\n\nalpha\n";
const LIVE: &str = "---\norigin: self\n---\n\nalpha\n";

/// Exchanges `dir` and `link` until stopped; returns how many swaps landed.
struct Swapper {
    stop: Arc<AtomicBool>,
    thread: thread::JoinHandle<u64>,
}

impl Swapper {
    fn start(dir: PathBuf, link: PathBuf) -> Swapper {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = thread::spawn(move || {
            let mut swaps = 0;
            while !flag.load(Ordering::Relaxed) {
                if renameat_with(CWD, &dir, CWD, &link, RenameFlags::EXCHANGE).is_ok() {
                    swaps += 1;
                }
            }
            swaps
        });
        Swapper { stop, thread }
    }

    fn finish(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("the swapper")
    }
}

/// Every regular file and directory under `dir`, with the file's bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    walkdir::WalkDir::new(dir)
        .follow_links(false)
        .into_iter()
        .map(|entry| entry.expect("walk outside"))
        .map(|entry| {
            let bytes = entry
                .file_type()
                .is_file()
                .then(|| fs::read(entry.path()).expect("read outside"));
            (entry.path().to_path_buf(), bytes)
        })
        .collect()
}

/// The decoys outside: one file of each name a write path touches, each a
/// note the path would act on if it reached it.
fn plant_decoys(outside: &Path) {
    let _ = fs::remove_dir_all(outside);
    fs::create_dir_all(outside).expect("outside");
    for name in [
        "u.md", "c.md", "a.md", "de.md", "r.md", "o.md", "m1.md", "m2.md",
    ] {
        fs::write(outside.join(name), LIVE).expect("decoy");
    }
    for name in ["k.md", "dd.md"] {
        fs::write(outside.join(name), CRUMPLED).expect("decoy");
    }
    stale_temp_file(&outside.join(STALE_TEMP));
}

/// The name of a temporary file its writer (a process that cannot exist)
/// left behind: `doctor clean` removes it once it is an hour old.
const STALE_TEMP: &str = ".notesoup-999999999-0123456789abcdef0123456789abcdef.tmp";

fn stale_temp_file(path: &Path) {
    fs::write(path, "partial").expect("temp file");
    let hour_ago = SystemTime::now() - Duration::from_secs(3600);
    fs::File::options()
        .write(true)
        .open(path)
        .and_then(|file| file.set_modified(hour_ago))
        .expect("mtime");
}

/// One attack class: which directory is swapped, and how notes in it are
/// named by the store and by the dream's tools.
struct Class {
    label: &'static str,
    /// The swapped directory, relative to the root.
    dir: &'static str,
    /// The address prefix of a note in it.
    address: &'static str,
}

const CLASSES: [Class; 2] = [
    Class {
        label: "a folder inside a home",
        dir: "human/box",
        address: "@human/box/",
    },
    Class {
        label: "a home",
        dir: "agents/alice",
        address: "@self/",
    },
];

const PATHS: [&str; 12] = [
    "write",
    "update",
    "crumple",
    "uncrumple",
    "read",
    "rename into",
    "rename out of",
    "rename within",
    "dream write",
    "dream edit",
    "dream delete",
    "doctor clean",
];

/// Runs write path `path` once (attempt `i`); `Ok` when it acted, `Err`
/// with the refusal code when it was refused.
fn attempt(
    f: &Fixture,
    tools: &DreamTools,
    class: &Class,
    path: &str,
    i: usize,
) -> Result<(), String> {
    let note = |name: &str| format!("{}{name}", class.address);
    let file = |name: &str| format!("{}/{name}", class.dir);
    let store = &f.store;
    let edit = |from: &str, to: &str| UpdateRequest {
        replace_all: true,
        ..edits(&[(from, to)])
    };
    let crumple = |on: bool| UpdateRequest {
        crumpled: Some(on),
        ..UpdateRequest::default()
    };
    let note_code = |e: notesoup_core::notes::NoteError| e.code().as_str().to_owned();
    let dream_code = |e: notesoup_core::dream::DreamError| e.code().to_owned();
    match path {
        "write" => store
            .write(&note("w.md"), &format!("attempt {i}"), None)
            .map(drop)
            .map_err(note_code),
        // Each write path starts from a note it can act on, whatever the
        // attempt before it did.
        "update" => store
            .write(&note("u.md"), "alpha", None)
            .and_then(|_| store.update(&note("u.md"), &edit("alpha", "omega")))
            .map(drop)
            .map_err(note_code),
        "crumple" => store
            .update(&note("c.md"), &crumple(true))
            .and_then(|_| store.update(&note("c.md"), &crumple(false)))
            .map(drop)
            .map_err(note_code),
        "uncrumple" => store
            .write(&note("k.md"), "smoothed", None)
            .and_then(|_| store.update(&note("k.md"), &crumple(true)))
            .map(drop)
            .map_err(note_code),
        "read" => store.read(&note("a.md")).map(drop).map_err(note_code),
        "rename into" => store
            .write("@human/r.md", "moving in", None)
            .and_then(|_| store.rename("@human/r.md", &note(&format!("r{i}.md"))))
            .map(drop)
            .map_err(note_code),
        "rename out of" => store
            .write(&note("o.md"), "moving out", None)
            .and_then(|_| store.rename(&note("o.md"), &format!("@human/o{i}.md")))
            .map(drop)
            .map_err(note_code),
        "rename within" => {
            let (a, b) = if i.is_multiple_of(2) {
                ("m1.md", "m2.md")
            } else {
                ("m2.md", "m1.md")
            };
            store
                .rename(&note(a), &note(b))
                .map(drop)
                .map_err(note_code)
        }
        "dream write" => tools
            .write(&file("dw.md"), &format!("attempt {i}\n"))
            .map(drop)
            .map_err(dream_code),
        "dream edit" => tools
            .write(&file("de.md"), "alpha\n")
            .and_then(|_| {
                tools.edit(
                    &file("de.md"),
                    &[TextEdit {
                        old_text: "alpha".into(),
                        new_text: "omega".into(),
                    }],
                )
            })
            .map(drop)
            .map_err(dream_code),
        "dream delete" => tools
            .write(&file("dd.md"), CRUMPLED)
            .and_then(|_| tools.delete(&file("dd.md")))
            .map(drop)
            .map_err(dream_code),
        "doctor clean" => {
            let cleaned = clean_temp_files(f.root().as_path(), true, SystemTime::now());
            match cleaned
                .files
                .iter()
                .find_map(|(_, result)| result.as_ref().err())
            {
                Some(error) => Err(error.clone()),
                None => Ok(()),
            }
        }
        other => panic!("unknown write path {other}"),
    }
}

/// The notes each write path starts from, in the real directory.
fn seed(f: &Fixture, class: &Class) {
    let dir = f.root().join(class.dir);
    fs::create_dir_all(&dir).expect("swapped dir");
    for name in ["u.md", "c.md", "a.md", "de.md", "o.md", "m1.md"] {
        let text = LIVE.replace("alpha", "alpha omega");
        fs::write(dir.join(name), text).expect("seed");
    }
    fs::write(dir.join("k.md"), CRUMPLED).expect("seed");
    stale_temp_file(&dir.join(STALE_TEMP));
    f.put("human/r.md", LIVE);
}

#[derive(Default)]
struct Tally {
    acted: usize,
    refused: BTreeMap<String, usize>,
    escaped: usize,
}

#[test]
fn a_swapped_directory_never_lets_a_write_out_of_the_root() {
    let mut report = String::new();
    let mut escaped = 0;
    for class in &CLASSES {
        let f = Fixture::new();
        let outside = f.dir.path().join("outside");
        plant_decoys(&outside);
        seed(&f, class);
        let dir = f.root().join(class.dir);
        let link = f.root().join(format!("{}-link", class.dir));
        std::os::unix::fs::symlink(&outside, &link).expect("the link");
        let before = snapshot(&outside);
        let tools = DreamTools::new(f.root());
        for path in PATHS {
            let swapper = Swapper::start(dir.clone(), link.clone());
            let mut tally = Tally::default();
            for i in 0..ATTEMPTS {
                match attempt(&f, &tools, class, path, i) {
                    Ok(()) => tally.acted += 1,
                    Err(code) => *tally.refused.entry(code).or_default() += 1,
                }
                if snapshot(&outside) != before {
                    tally.escaped += 1;
                    plant_decoys(&outside);
                }
            }
            let swaps = swapper.finish();
            escaped += tally.escaped;
            report.push_str(&format!(
                "{} / {path}: {ATTEMPTS} tried, {} acted, refused {:?}, {} escaped ({swaps} swaps)\n",
                class.label, tally.acted, tally.refused, tally.escaped
            ));
        }
    }
    eprint!("{report}");
    assert_eq!(escaped, 0, "writes escaped the root:\n{report}");
}
