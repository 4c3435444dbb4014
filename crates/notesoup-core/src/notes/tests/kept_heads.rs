//! Kept note heads against notes edited behind their back: every edit a
//! person or another program can make shows at the next listing through a
//! running cache (stamp-checked or watching) and through heads saved by one
//! process and loaded by the next; and a saved-heads file, however it was
//! made, never puts text in a listing that is not in the note.

use std::fs::{self, File, FileTimes, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::notes::{HeadCache, ListQuery, NoteHeader, NoteStore};

use super::support::{AllRows, Fixture};

/// A note whose head holds `title` (four characters) and `day`: every
/// version has the same length.
fn note(title: &str, day: u8) -> String {
    format!(
        "---\ncreatedAt: 2026-01-01T00:00:00.000+00:00\nupdatedAt: 2026-01-{day:02}T00:00:00.000+00:00\nlastAccessed: 2026-01-01T00:00:00.000+00:00\ntitle: {title}\n---\n\nbody\n"
    )
}

fn both_listings(store: &NoteStore) -> Vec<NoteHeader> {
    let mut rows = store.list_headers(&ListQuery::default()).all_rows();
    rows.extend(
        store
            .list_headers(&ListQuery {
                wastebasket: true,
                ..ListQuery::default()
            })
            .all_rows(),
    );
    rows
}

fn times_of(path: &Path) -> (SystemTime, SystemTime) {
    let meta = fs::metadata(path).expect("test setup");
    (
        meta.accessed().expect("test setup"),
        meta.modified().expect("test setup"),
    )
}

fn put_back(path: &Path, (accessed, modified): (SystemTime, SystemTime)) {
    File::options()
        .write(true)
        .open(path)
        .expect("test setup")
        .set_times(
            FileTimes::new()
                .set_accessed(accessed)
                .set_modified(modified),
        )
        .expect("test setup");
}

/// The offset of the title in [`note`].
fn title_at() -> u64 {
    note("aaaa", 2).find("aaaa").expect("test setup") as u64
}

/// Writes the note's title over in place (the same length), leaving the
/// file open for the edit to go on with.
fn retitle_in_place(path: &Path) -> std::fs::File {
    let file = OpenOptions::new().write(true).open(path).expect("edit");
    file.write_at(b"bbbb", title_at()).expect("edit");
    file
}

type Edit = fn(&Path, &Path);

/// The edit patterns: each changes the note at its path (a scratch folder
/// beside it is the second argument), most to the same length with its
/// times put back.
fn edits() -> Vec<(&'static str, Edit)> {
    vec![
        ("in place", |path, _| {
            retitle_in_place(path);
        }),
        ("in place, mtime put back", |path, _| {
            let modified = times_of(path).1;
            let file = retitle_in_place(path);
            file.set_modified(modified).expect("edit");
        }),
        ("in place, both times put back", |path, _| {
            let times = times_of(path);
            let file = retitle_in_place(path);
            drop(file);
            put_back(path, times);
        }),
        ("in place through a seek, times put back", |path, _| {
            let times = times_of(path);
            let mut file = OpenOptions::new().write(true).open(path).expect("edit");
            file.seek(SeekFrom::Start(title_at())).expect("edit");
            file.write_all(b"bbbb").expect("edit");
            drop(file);
            put_back(path, times);
        }),
        ("the date in place, times put back", |path, _| {
            let times = times_of(path);
            let at = note("aaaa", 2).find("2026-01-02").expect("edit") as u64;
            let file = OpenOptions::new().write(true).open(path).expect("edit");
            file.write_at(b"2026-01-09", at).expect("edit");
            drop(file);
            put_back(path, times);
        }),
        ("two edits in a row, times put back", |path, _| {
            let times = times_of(path);
            let file = OpenOptions::new().write(true).open(path).expect("edit");
            file.write_at(b"cccc", title_at()).expect("edit");
            file.write_at(b"bbbb", title_at()).expect("edit");
            drop(file);
            put_back(path, times);
        }),
        ("truncated and written again", |path, _| {
            fs::write(path, note("bbbb", 2)).expect("edit");
        }),
        ("truncated and written again, times put back", |path, _| {
            let times = times_of(path);
            fs::write(path, note("bbbb", 2)).expect("edit");
            put_back(path, times);
        }),
        (
            "set to length 0, written again, times put back",
            |path, _| {
                let times = times_of(path);
                let mut file = OpenOptions::new().write(true).open(path).expect("edit");
                file.set_len(0).expect("edit");
                file.write_all(note("bbbb", 2).as_bytes()).expect("edit");
                drop(file);
                put_back(path, times);
            },
        ),
        (
            "copied over from another file, times put back",
            |path, scratch| {
                let times = times_of(path);
                let other = scratch.join("copy-source");
                fs::write(&other, note("bbbb", 2)).expect("edit");
                fs::copy(&other, path).expect("edit");
                put_back(path, times);
            },
        ),
        ("renamed over", |path, scratch| {
            let temp = scratch.join("renamed");
            fs::write(&temp, note("bbbb", 2)).expect("edit");
            fs::rename(&temp, path).expect("edit");
        }),
        ("renamed over with the old times", |path, _| {
            let times = times_of(path);
            let temp = path.with_extension("tmp");
            fs::write(&temp, note("bbbb", 2)).expect("edit");
            put_back(&temp, times);
            fs::rename(&temp, path).expect("edit");
        }),
        ("removed and made again with the old times", |path, _| {
            let times = times_of(path);
            fs::remove_file(path).expect("edit");
            fs::write(path, note("bbbb", 2)).expect("edit");
            put_back(path, times);
        }),
        (
            "through a hard link elsewhere, times put back",
            |path, scratch| {
                let times = times_of(path);
                let link = scratch.join("hard-link");
                fs::hard_link(path, &link).expect("edit");
                let file = OpenOptions::new().write(true).open(&link).expect("edit");
                file.write_at(b"bbbb", title_at()).expect("edit");
                drop(file);
                put_back(&link, times);
            },
        ),
        ("longer, times put back", |path, _| {
            let times = times_of(path);
            fs::write(path, note("bbbbb", 2)).expect("edit");
            put_back(path, times);
        }),
        ("shorter, times put back", |path, _| {
            let times = times_of(path);
            fs::write(path, note("bbb", 2)).expect("edit");
            put_back(path, times);
        }),
        ("crumpled by hand, times put back", |path, _| {
            let times = times_of(path);
            let text = note("aaaa", 2).replace(
                "title: aaaa\n",
                "title: aaaa\ncrumpledAt: 2026-01-03T00:00:00.000+00:00\n",
            );
            fs::write(path, text).expect("edit");
            put_back(path, times);
        }),
        (
            "the frontmatter's lines reordered, times put back",
            |path, _| {
                let times = times_of(path);
                let text = note("aaaa", 2).replace("title: aaaa\n", "");
                let text = text.replacen("---\n", "---\ntitle: bbbb\n", 1);
                fs::write(path, text).expect("edit");
                put_back(path, times);
            },
        ),
        ("times put back to the future", |path, _| {
            let file = retitle_in_place(path);
            file.set_modified(SystemTime::now() + Duration::from_secs(86_400))
                .expect("edit");
        }),
        ("mode changed after the edit, times put back", |path, _| {
            use std::os::unix::fs::PermissionsExt;
            let times = times_of(path);
            let file = retitle_in_place(path);
            drop(file);
            put_back(path, times);
            fs::set_permissions(path, fs::Permissions::from_mode(0o600)).expect("edit");
        }),
        (
            "written through a descriptor opened before the listing",
            |_, _| {
                // Done by the test: see `held`.
            },
        ),
        ("the body only (the head is the same)", |path, _| {
            let times = times_of(path);
            let text = note("aaaa", 2);
            let at = text.rfind("body").expect("edit") as u64;
            let file = OpenOptions::new().write(true).open(path).expect("edit");
            file.write_at(b"BODY", at).expect("edit");
            drop(file);
            put_back(path, times);
        }),
        ("swapped with another note's file", |path, scratch| {
            let other = scratch.join("swap");
            fs::write(&other, note("bbbb", 2)).expect("edit");
            let times = times_of(path);
            put_back(&other, times);
            let aside = scratch.join("aside");
            fs::rename(path, &aside).expect("edit");
            fs::rename(&other, path).expect("edit");
        }),
        (
            "edited twice, the second time back to the first edit",
            |path, _| {
                let times = times_of(path);
                let file = retitle_in_place(path);
                file.write_at(b"aaaa", title_at()).expect("edit");
                file.write_at(b"bbbb", title_at()).expect("edit");
                drop(file);
                put_back(path, times);
            },
        ),
    ]
}

/// The notes of `edits`, one a pattern, and the files held open for the
/// pattern that writes through a descriptor opened beforehand.
fn library(f: &Fixture) -> Vec<PathBuf> {
    let dir = f.root().join("human");
    fs::create_dir_all(&dir).expect("test setup");
    (0..edits().len())
        .map(|index| {
            let path = dir.join(format!("p{index:02}.md"));
            fs::write(&path, note("aaaa", 2)).expect("test setup");
            path
        })
        .collect()
}

/// Runs every edit on its note (the held descriptor's too).
fn edit_all(f: &Fixture, paths: &[PathBuf], held: &File) {
    let scratch = f.dir.path().join("scratch");
    for (index, ((name, edit), path)) in edits().into_iter().zip(paths).enumerate() {
        let scratch = scratch.join(index.to_string());
        fs::create_dir_all(&scratch).expect("test setup");
        edit(path, &scratch);
        let _ = name;
    }
    let modified = held
        .metadata()
        .expect("test setup")
        .modified()
        .expect("test setup");
    held.write_at(b"bbbb", title_at()).expect("test setup");
    held.set_modified(modified).expect("test setup");
}

/// The pattern names whose rows differ between `ours` and `disk`.
fn stale(ours: &[NoteHeader], disk: &[NoteHeader]) -> Vec<String> {
    let names: Vec<&str> = edits().into_iter().map(|(name, _)| name).collect();
    let mut differ = Vec::new();
    for (index, name) in names.iter().enumerate() {
        let address = format!("@human/p{index:02}.md");
        let pick = |rows: &[NoteHeader]| -> Vec<NoteHeader> {
            rows.iter()
                .filter(|row| row.location.address == address)
                .cloned()
                .collect()
        };
        if pick(ours) != pick(disk) {
            differ.push((*name).to_owned());
        }
    }
    if ours.len() != disk.len() {
        differ.push(format!("{} rows, {} on disk", ours.len(), disk.len()));
    }
    differ
}

/// The store's clock-free rows (the notes hold every time they show).
fn settle() {
    // Heads are kept only for notes that have not changed for the settle
    // time.
    std::thread::sleep(HeadCache::DEFAULT_SETTLE + Duration::from_millis(100));
}

#[test]
fn every_edit_shows_through_a_running_cache_and_through_saved_heads() {
    let f = Fixture::new();
    let paths = library(&f);
    let held_index = edits()
        .iter()
        .position(|(name, _)| name.starts_with("written through a descriptor"))
        .expect("test setup");
    let held = OpenOptions::new()
        .write(true)
        .open(&paths[held_index])
        .expect("test setup");
    settle();
    let plain = Arc::new(HeadCache::new());
    let watching = Arc::new(HeadCache::new().watching());
    let caches = [("stamp-checked", &plain), ("watching", &watching)];
    let saved = f.dir.path().join("data/heads.bin");
    let disk = both_listings(&f.store);
    for (name, cache) in caches {
        let store = f.store.clone().with_head_cache(Arc::clone(cache));
        assert_eq!(both_listings(&store), disk, "{name}: first listing");
        assert_eq!(both_listings(&store), disk, "{name}: warm listing");
        assert_eq!(cache.len(), paths.len(), "{name}: every head kept");
    }
    plain.save(&saved).expect("saved");

    edit_all(&f, &paths, &held);
    let disk = both_listings(&f.store);
    assert_eq!(
        disk.iter()
            .filter(|row| format!("{:?}", row.meta.extras).contains("bbbb"))
            .count(),
        paths.len() - 4,
        "the edits landed"
    );
    for (name, cache) in caches {
        let store = f.store.clone().with_head_cache(Arc::clone(cache));
        assert_eq!(
            stale(&both_listings(&store), &disk),
            Vec::<String>::new(),
            "{name}"
        );
    }
    let loaded = Arc::new(HeadCache::load(&saved));
    let store = f.store.clone().with_head_cache(Arc::clone(&loaded));
    assert_eq!(
        stale(&both_listings(&store), &disk),
        Vec::<String>::new(),
        "saved heads"
    );
}

/// The first bytes of a saved-heads file (see `heads.rs`), before the
/// number of heads it holds.
const MAGIC: &[u8] = b"notesoup note heads 3\n";

/// The stamp of `path` as a saved-heads file holds it: device, inode,
/// length, modification and change times, little-endian.
fn stamp_bytes(path: &Path) -> Vec<u8> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::symlink_metadata(path).expect("test setup");
    let mut out = Vec::new();
    for word in [meta.dev(), meta.ino(), meta.len()] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    for word in [
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
    ] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    out
}

/// One saved entry, built by hand: `path`, the stamp bytes `stamp`, `head`
/// and `seal`.
fn entry(path: &Path, stamp: &[u8], head: &[u8], seal: [u8; 20]) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    let path = path.as_os_str().as_bytes();
    let mut out = Vec::new();
    out.extend_from_slice(&(path.len() as u32).to_le_bytes());
    out.extend_from_slice(path);
    out.extend_from_slice(stamp);
    out.extend_from_slice(&(head.len() as u32).to_le_bytes());
    out.extend_from_slice(head);
    out.extend_from_slice(&seal);
    out
}

/// `bytes` with every `from` replaced by `to` (of the same length).
fn replaced(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let mut at = 0;
    while let Some(found) = out[at..].windows(from.len()).position(|w| w == from) {
        out[at + found..at + found + from.len()].copy_from_slice(to);
        at += found + from.len();
    }
    out
}

/// A saved-heads file, however it was made (by hand, from a real one
/// changed, damaged, of the older unsealed format), never makes a listing
/// differ from the notes on disk, and never shows text that is not in them.
#[test]
fn crafted_saved_heads_never_add_text() {
    let f = Fixture::new();
    let dir = f.root().join("human");
    fs::create_dir_all(&dir).expect("test setup");
    let a = dir.join("a.md");
    let b = dir.join("b.md");
    fs::write(&a, note("aaaa", 2)).expect("test setup");
    fs::write(&b, note("bbbb", 3)).expect("test setup");
    settle();
    let saved_dir = f.dir.path().join("data/note-heads");
    let saved = saved_dir.join("heads.bin");
    let cache = Arc::new(HeadCache::new());
    let store = f.store.clone().with_head_cache(Arc::clone(&cache));
    let disk = both_listings(&f.store);
    assert_eq!(both_listings(&store), disk);
    cache.save(&saved).expect("saved");
    let real = fs::read(&saved).expect("saved");
    assert!(real.starts_with(MAGIC), "the format the test crafts");

    let evil_head = note("EVIL", 9);
    let evil_head = &evil_head.as_bytes()[..evil_head.find("\n---\n").expect("test setup") + 5];
    let stamp_a = stamp_bytes(&a);
    let mut wrong_size = stamp_a.clone();
    wrong_size[16] ^= 1;
    let mut wrong_inode = stamp_a.clone();
    wrong_inode[8] ^= 1;
    let mut wrong_ctime = stamp_a.clone();
    wrong_ctime[48] ^= 1;
    let seal_of_a = {
        // The seal the real file holds for a's entry.
        let at = real
            .windows(stamp_a.len())
            .position(|w| w == stamp_a.as_slice())
            .expect("a's stamp is saved");
        let head_len = u32::from_le_bytes(real[at + 56..at + 60].try_into().expect("len")) as usize;
        let seal_at = at + 60 + head_len;
        let seal: [u8; 20] = real[seal_at..seal_at + 20].try_into().expect("seal");
        seal
    };
    let with = |entries: &[Vec<u8>]| -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&(entries.len() as u32).to_le_bytes());
        for entry in entries {
            out.extend_from_slice(entry);
        }
        out
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "the head's text changed in place",
            replaced(&real, b"aaaa", b"EVIL"),
        ),
        (
            "the head's date changed in place",
            replaced(&real, b"2026-01-02", b"2026-12-31"),
        ),
        (
            "a head by hand, any seal",
            with(&[entry(&a, &stamp_a, evil_head, [7; 20])]),
        ),
        (
            "a head by hand, a's real seal",
            with(&[entry(&a, &stamp_a, evil_head, seal_of_a)]),
        ),
        ("a's seal on b's path", {
            let head = note("aaaa", 2);
            let head = &head.as_bytes()[..head.find("\n---\n").expect("test setup") + 5];
            with(&[entry(&b, &stamp_bytes(&b), head, seal_of_a)])
        }),
        (
            "a wrong size",
            with(&[entry(&a, &wrong_size, evil_head, seal_of_a)]),
        ),
        (
            "a wrong inode",
            with(&[entry(&a, &wrong_inode, evil_head, seal_of_a)]),
        ),
        (
            "a wrong change time",
            with(&[entry(&a, &wrong_ctime, evil_head, seal_of_a)]),
        ),
        ("cut short", real[..real.len() - 7].to_vec()),
        (
            "garbage",
            b"notesoup note heads 3\n\x01\x00\x00\x00\xff\xff\xff\xffEVIL".to_vec(),
        ),
        ("the format before the count", {
            let mut older = b"notesoup note heads 2\n".to_vec();
            older.extend_from_slice(&real[MAGIC.len() + 4..]);
            older
        }),
        ("the older unsealed format", {
            let mut old = b"notesoup note heads 1\n".to_vec();
            use std::os::unix::ffi::OsStrExt;
            let path = a.as_os_str().as_bytes();
            old.extend_from_slice(&(path.len() as u32).to_le_bytes());
            old.extend_from_slice(path);
            old.extend_from_slice(&stamp_a);
            old.extend_from_slice(&(evil_head.len() as u32).to_le_bytes());
            old.extend_from_slice(evil_head);
            old
        }),
    ];
    for (name, bytes) in &cases {
        fs::write(&saved, bytes).expect("test setup");
        let loaded = Arc::new(HeadCache::load(&saved));
        let store = f.store.clone().with_head_cache(Arc::clone(&loaded));
        let listed = both_listings(&store);
        assert_eq!(listed, disk, "{name}");
        assert!(!format!("{listed:?}").contains("EVIL"), "{name}");
        assert_eq!(both_listings(&store), disk, "{name}: listed again");
    }
    // The real file still serves (no read is needed for a proven head).
    fs::write(&saved, &real).expect("test setup");
    let loaded = Arc::new(HeadCache::load(&saved));
    assert_eq!(loaded.len(), 2);
    let store = f.store.clone().with_head_cache(Arc::clone(&loaded));
    assert_eq!(both_listings(&store), disk);
    // A key file others can read is no key: nothing is loaded.
    use std::os::unix::fs::PermissionsExt;
    let key = saved_dir.join(".note-heads.key");
    fs::set_permissions(&key, fs::Permissions::from_mode(0o644)).expect("test setup");
    assert!(HeadCache::load(&saved).is_empty());
}
