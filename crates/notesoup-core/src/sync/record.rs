//! `.sync/merging`: the record of a merge being written to disk, so a sync
//! stopped while writing it (killed, the machine off) is finished by the
//! next one instead of merged a second time.
//!
//! Its first line is `<from> <to>` (the branch before the merge, `none`
//! when nothing was synced before, and the merge commit, in hex); each
//! further line is a note the merge has written, added once the note is on
//! disk. The first line is a durable write (fsynced, renamed, the directory
//! fsynced) before any note is touched; each note's line is fsynced before
//! the next note is written. A line cut short (no newline) is not read.

use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::path::Path;

use gix::ObjectId;

use super::SyncError;
use crate::plumbing::{Links, SmallFileError, read_small_file};

/// The largest record read (a merge's paths, each at most 512 bytes).
const MAX_BYTES: u64 = 64 * 1024 * 1024;

/// A merge being written to disk: its record, open for the notes it
/// writes.
#[derive(Debug)]
pub(crate) struct MergeRecord {
    file: fs::File,
}

impl MergeRecord {
    /// Records, durably, that the merge from `from` to `to` is about to be
    /// written to disk.
    pub(crate) fn begin(
        path: &Path,
        from: Option<ObjectId>,
        to: ObjectId,
    ) -> Result<MergeRecord, SyncError> {
        let from = from.map_or_else(|| "none".to_owned(), |id| id.to_string());
        crate::durable::write(path, format!("{from} {to}\n").as_bytes())
            .map_err(|err| SyncError::io("record the merge", err))?;
        let file = fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|err| SyncError::io("record the merge", err))?;
        Ok(MergeRecord { file })
    }

    /// Records, durably, that `note` is on disk as the merge has it (or
    /// merged with what was written there meanwhile).
    pub(crate) fn written(&mut self, note: &str) -> Result<(), SyncError> {
        self.file
            .write_all(format!("{note}\n").as_bytes())
            .and_then(|()| self.file.sync_data())
            .map_err(|err| SyncError::io("record a merged note", err))
    }
}

/// What a record left by a stopped sync says.
#[derive(Debug)]
pub(crate) struct Recorded {
    /// The branch before the merge (`none`: nothing synced before).
    pub(crate) from: String,
    /// The merge commit.
    pub(crate) to: String,
    /// The notes already written.
    pub(crate) written: BTreeSet<String>,
}

/// The record at `path`, when there is one that can be read (`from` and
/// `to` are empty when the path holds something else: a link, a file that
/// is not regular or is over [`MAX_BYTES`], text that is not UTF-8).
pub(crate) fn read(path: &Path) -> Option<Recorded> {
    let text = match read_small_file(path, MAX_BYTES, Links::Refuse) {
        Ok(None) | Err(SmallFileError::Io { .. }) => return None,
        Ok(Some(bytes)) => String::from_utf8(bytes).unwrap_or_default(),
        // There, but no record: a link, not a regular file, too large.
        Err(_) => String::new(),
    };
    let mut lines = text
        .split_inclusive('\n')
        .filter_map(|line| line.strip_suffix('\n'));
    let mut ids = lines.next().unwrap_or("").split_whitespace();
    let (from, to) = (ids.next().unwrap_or(""), ids.next().unwrap_or(""));
    Some(Recorded {
        from: from.to_owned(),
        to: to.to_owned(),
        written: lines.map(str::to_owned).collect(),
    })
}

/// Drops the record (once the branch is at the merge). A removal a power
/// cut undoes is harmless: the record then names a branch the branch has
/// moved past, and is dropped again.
pub(crate) fn remove(path: &Path) -> Result<(), SyncError> {
    match fs::remove_file(path) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
            Err(SyncError::io("remove the merge record", err))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_read_and_anything_else_there_is_no_record() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("merging");
        assert!(read(&path).is_none(), "none there");
        fs::write(&path, "none abc\nhuman/a.md\nhuman/b.md\ntorn").expect("write");
        let recorded = read(&path).expect("a record");
        assert_eq!(
            (recorded.from.as_str(), recorded.to.as_str()),
            ("none", "abc")
        );
        assert_eq!(
            recorded.written.into_iter().collect::<Vec<_>>(),
            ["human/a.md", "human/b.md"],
            "the torn last line is not a written note"
        );
        let empty = |what: &str| {
            let recorded = read(&path).expect(what);
            assert!(recorded.from.is_empty() && recorded.to.is_empty(), "{what}");
            assert!(recorded.written.is_empty(), "{what}");
        };
        fs::write(&path, b"none \xff\n").expect("write");
        empty("not utf-8");
        let elsewhere = dir.path().join("elsewhere");
        fs::rename(&path, &elsewhere).expect("move");
        fs::write(&elsewhere, "none abc\n").expect("write");
        std::os::unix::fs::symlink(&elsewhere, &path).expect("link");
        empty("a link");
        fs::remove_file(&path).expect("unlink");
        fs::create_dir(&path).expect("dir");
        empty("a directory");
    }
}
