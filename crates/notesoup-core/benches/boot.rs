//! The boot over a 10,000-note store: the snapshot (five scoped listings of
//! note heads, then the few bodies the boot shows) and the pure render,
//! together and apart; the snapshot a host that keeps a shelf index
//! between boots takes while no home has changed; and a hook process's
//! boot, right after a note was written into one home (its caches loaded
//! from the cache directory, the home listed again from the saved heads,
//! the caches saved) and with nothing kept yet (every note read).
//!
//! Run with `cargo bench -p notesoup-core --bench boot`.

use std::fs;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use divan::Bencher;
use jiff::Timestamp;
use jiff::tz::TimeZone;
use notesoup_core::boot::ToolBindings;
use notesoup_core::boot::{BootIdentity, BootSections, BootSnapshot, ShelfIndex};
use notesoup_core::notes::{HeadCache, NoteStore, NotesIdentity};
use notesoup_core::plumbing::BootCaches;
use notesoup_core::settings::Settings;
use tempfile::TempDir;

/// Notes in the generated store, spread evenly over the five homes.
const NOTES: usize = 10_000;

/// The store every benchmark reads, generated once in `main`, so the
/// variants compare on the same files in the same cache state.
static STORE: OnceLock<NoteStore> = OnceLock::new();

fn main() {
    let dir = TempDir::new().expect("temp dir");
    generate(dir.path());
    // Flush the generated files now, or the kernel's writeback of them
    // lands in whichever benchmark runs first; `sync` is best effort.
    let _ = std::process::Command::new("sync").status();
    STORE.get_or_init(|| store(dir.path()));
    divan::main();
    drop(dir);
}

const HOMES: [&str; 5] = [
    "pi/session/s1",
    "project/shop-1a2b3c4d",
    "human",
    "agents/alice",
    "models/gpt-5",
];

/// Writes `NOTES` notes of about 600 bytes each, in nested folders, plus a
/// MAP per home, with distinct update times.
fn generate(root: &Path) {
    for (home_index, home) in HOMES.iter().enumerate() {
        let dir = root.join(home);
        let mut map = String::new();
        for i in (home_index..NOTES).step_by(HOMES.len()) {
            let rel = format!("topic-{}/note-{i}.md", i % 40);
            let minute = i % 60;
            let hour = (i / 60) % 24;
            let day = 1 + (i / 1440) % 28;
            let body = format!(
                "# Note {i} about topic {}\n\n{}\n",
                i % 40,
                "Decisions, not diaries: a line of durable detail that explains why. ".repeat(8)
            );
            let text = format!(
                "---\norigin: self\ncreatedAt: 2026-01-01T00:00:00.000+00:00\nupdatedAt: 2026-08-{day:02}T{hour:02}:{minute:02}:00.000+00:00\nlastAccessed: 2026-08-01T00:00:00.000+00:00\naccessCount: 3\n---\n\n{body}"
            );
            let path = dir.join(&rel);
            fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
            fs::write(path, text).expect("note");
            if map.len() < 6_000 {
                map.push_str(&format!("- `{rel}`: note {i}\n"));
            }
        }
        fs::write(
            dir.join("MAP.md"),
            format!("---\nupdatedAt: 2026-08-01T00:00:00.000+00:00\n---\n\n{map}"),
        )
        .expect("map");
    }
}

fn store(root: &Path) -> NoteStore {
    let identity =
        NotesIdentity::new(root, "s1", "shop-1a2b3c4d", "alice", "gpt-5").expect("identity");
    NoteStore::new(identity).with_time_zone(TimeZone::UTC)
}

fn identity() -> BootIdentity {
    BootIdentity {
        agent: "alice".into(),
        model: "gpt-5".into(),
        root_window_id: "pcw:0197a1b2:root".into(),
        window_id: "pcw:0197a1b2:5f3c9d1e".into(),
        previous_window_id: Some("pcw:0197a1b2:root".into()),
    }
}

/// The boot text of `snapshot` at the default size, as a host renders it.
fn render(snapshot: &BootSnapshot, bindings: &ToolBindings) -> String {
    BootSections::new(
        snapshot,
        &identity(),
        bindings,
        Settings::default().boot_max_chars,
    )
    .join()
}

fn with_store(run: impl FnOnce(&NoteStore)) {
    run(STORE.get().expect("generated in main"));
}

#[divan::bench(sample_count = 20)]
fn snapshot_and_render_10k(bencher: Bencher<'_, '_>) {
    with_store(|store| {
        let bindings = ToolBindings::plain();
        bencher.bench_local(|| {
            let snapshot = BootSnapshot::load(store).expect("snapshot");
            render(&snapshot, &bindings)
        });
    });
}

#[divan::bench(sample_count = 20)]
fn snapshot_10k(bencher: Bencher<'_, '_>) {
    with_store(|store| {
        bencher.bench_local(|| BootSnapshot::load(store).expect("snapshot"));
    });
}

/// The snapshot through a warm [`ShelfIndex`] (its homes settled first:
/// a shelf is kept only once its directories are 2 s old): every home is
/// served from the index, and only the notes the boot shows are read.
#[divan::bench(sample_count = 20)]
fn snapshot_indexed_10k(bencher: Bencher<'_, '_>) {
    with_store(|store| {
        std::thread::sleep(ShelfIndex::SETTLE + Duration::from_millis(100));
        let mut index = ShelfIndex::new();
        BootSnapshot::load_indexed(store, &mut index).expect("snapshot");
        assert!(
            BootSnapshot::served(store, &mut index).is_some(),
            "every home is served from the index"
        );
        bencher.bench_local(|| BootSnapshot::load_indexed(store, &mut index).expect("snapshot"));
    });
}

/// A hook's boot after a note was written into the project home: a new
/// process's [`BootCaches`] over a cache directory a first boot filled
/// (the notes settled first: a head is kept only once its file is 2 s
/// old), each run with another new note (the one before removed).
#[divan::bench(sample_count = 20)]
fn snapshot_after_a_write_10k(bencher: Bencher<'_, '_>) {
    with_store(|store| {
        std::thread::sleep(HeadCache::DEFAULT_SETTLE + Duration::from_millis(100));
        let caches = TempDir::new().expect("cache dir");
        BootCaches::new(Some(caches.path().to_owned()))
            .snapshot(store)
            .expect("first boot");
        let home = store.identity().home().join(HOMES[1]);
        let written = std::cell::Cell::new(0);
        bencher
            .with_inputs(|| {
                let n = written.get();
                let _ = fs::remove_file(home.join(format!("written-{n}.md")));
                written.set(n + 1);
                fs::write(
                    home.join(format!("written-{}.md", n + 1)),
                    "---\norigin: self\n---\n\n# Written\n",
                )
                .expect("note");
                BootCaches::new(Some(caches.path().to_owned()))
            })
            .bench_local_values(|caches| caches.snapshot(store).expect("snapshot"));
        let _ = fs::remove_file(home.join(format!("written-{}.md", written.get())));
    });
}

/// A hook's first boot with nothing kept: a new process's [`BootCaches`]
/// over an empty cache directory lists every home, reading each note, and
/// saves the caches.
#[divan::bench(sample_count = 20)]
fn snapshot_nothing_kept_10k(bencher: Bencher<'_, '_>) {
    with_store(|store| {
        std::thread::sleep(HeadCache::DEFAULT_SETTLE + Duration::from_millis(100));
        bencher
            .with_inputs(|| TempDir::new().expect("cache dir"))
            .bench_local_refs(|caches| {
                BootCaches::new(Some(caches.path().to_owned()))
                    .snapshot(store)
                    .expect("snapshot")
            });
    });
}

#[divan::bench]
fn render_only(bencher: Bencher<'_, '_>) {
    with_store(|store| {
        let opened_at: Timestamp = "2026-09-01T00:00:00Z".parse().expect("time");
        let snapshot = BootSnapshot::load_at(store, opened_at).expect("snapshot");
        let bindings = ToolBindings::plain();
        bencher.bench_local(|| render(&snapshot, &bindings));
    });
}
