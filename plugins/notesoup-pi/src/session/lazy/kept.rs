//! An index kept between readers of one session file. Pi only appends to
//! its session file, and a new sidecar starts for every start of Pi, so the
//! next sidecar that opens a long session would index again the lines the
//! last one indexed. [`LazySession::keep`] writes down the index of the
//! file's plain run (the header and the plain entries after it, see
//! [`Plain`]); [`LazySession::read_kept`] restores it and reads only the
//! lines after it.
//!
//! A kept index is a shortcut, never a source of truth: it is restored
//! only when its checksum holds, for the same file (device and inode),
//! when the file is at least as long as the run and still holds, byte for
//! byte, the run's first and last [`PROBE`] bytes, and when every line in
//! it is whole, in file order and within the run; anything else reads the
//! file whole. What it restores is what indexing those lines gives (the
//! header is read again, by the same rules), so a reader cannot tell a
//! restored index from a read one. Decoding an entry still reads its line
//! back from the file, and the bridge still checks the ids against Pi's.

use std::cell::OnceCell;
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};

use super::{IndexedLine, Indexer, LazySession, Source, TYPES};

/// The first bytes of a kept index (its format's name and version).
const MAGIC: &[u8; 16] = b"notesoup-pi-ix2\n";

/// How many bytes at the start of the run and before its end must be as
/// they were.
const PROBE: u64 = 4096;

impl LazySession {
    /// How many entries were restored from a kept index
    /// ([`Self::read_kept`]) instead of read from the file.
    pub fn restored(&self) -> usize {
        self.restored
    }

    /// How many entries an index kept now ([`Self::keep`]) would hold.
    pub fn keepable(&self) -> usize {
        self.plain.entries
    }

    /// The index of the file's plain run for a later [`Self::read_kept`]:
    /// `None` for a session read from bytes, a file that does not start
    /// with a plain header, or a file that cannot be read back now.
    pub fn keep(&self) -> Option<Vec<u8>> {
        let Source::File { file, .. } = &self.source else {
            return None;
        };
        let run = self.plain;
        let header_len = run.header_len?;
        let meta = file.metadata().ok()?;
        let probe = PROBE.min(run.end);
        let head = read_at(file, 0, probe)?;
        let tail = read_at(file, run.end - probe, probe)?;
        let lines = &self.lines[..run.entries];
        let mut out = Vec::with_capacity(128 + 2 * tail.len() + self.ids.len() + lines.len() * 40);
        out.extend_from_slice(MAGIC);
        for number in [
            meta.dev(),
            meta.ino(),
            run.end,
            header_len as u64,
            run.entries as u64,
        ] {
            out.extend_from_slice(&number.to_le_bytes());
        }
        put_bytes(&mut out, &head);
        put_bytes(&mut out, &tail);
        // The run's lines follow one another (any other line ends it): each
        // starts where the one before ends, with the next number.
        for line in lines {
            out.extend_from_slice(&(line.len as u64).to_le_bytes());
            out.push(line.kind);
            out.push(u8::from(line.legacy));
            put_bytes(&mut out, self.id_bytes(&line.id));
            match &line.parent {
                Some(parent) => {
                    out.push(1);
                    put_bytes(&mut out, self.id_bytes(parent));
                }
                None => out.push(0),
            }
        }
        let sum = crc32fast::hash(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        Some(out)
    }
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// `len` bytes of `file` at `offset`.
fn read_at(file: &File, offset: u64, len: u64) -> Option<Vec<u8>> {
    let mut bytes = vec![0; usize::try_from(len).ok()?];
    file.read_exact_at(&mut bytes, offset).ok()?;
    Some(bytes)
}

/// A kept index read front to back; every read is checked against what is
/// left.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, len: u64) -> Option<&'a [u8]> {
        let len = usize::try_from(len).ok()?;
        let (taken, rest) = self.0.split_at_checked(len)?;
        self.0 = rest;
        Some(taken)
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn usize(&mut self) -> Option<usize> {
        usize::try_from(self.u64()?).ok()
    }

    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let len = self.u64()?;
        self.take(len)
    }

    /// Bytes that must be an id's text.
    fn id(&mut self) -> Option<&'a [u8]> {
        let id = self.bytes()?;
        std::str::from_utf8(id).ok()?;
        Some(id)
    }
}

/// Restores into `indexer` (new) the index `kept` holds when `file` still
/// holds the lines it was made of; the offset to read on from, or `None`
/// (the indexer is then to be dropped).
pub(super) fn restore(indexer: &mut Indexer, kept: &[u8], file: &File) -> Option<u64> {
    let (kept, sum) = kept.split_last_chunk::<4>()?;
    if crc32fast::hash(kept) != u32::from_le_bytes(*sum) {
        return None;
    }
    let mut at = Cursor(kept);
    if at.take(MAGIC.len() as u64)? != MAGIC {
        return None;
    }
    let meta = file.metadata().ok()?;
    let (device, inode, end) = (at.u64()?, at.u64()?, at.u64()?);
    if (meta.dev(), meta.ino()) != (device, inode) || meta.len() < end {
        return None;
    }
    let (header_len, entries) = (at.usize()?, at.usize()?);
    let probe = PROBE.min(end);
    let (head, tail) = (at.bytes()?, at.bytes()?);
    if read_at(file, 0, probe)? != head || read_at(file, end - probe, probe)? != tail {
        return None;
    }
    // The header is read again by the usual rules: the reader's state after
    // it is what indexing the file gives.
    if header_len as u64 >= end {
        return None;
    }
    let header = read_at(file, 0, header_len as u64 + 1)?;
    if header.last() != Some(&b'\n') {
        return None;
    }
    indexer.line(0, &header[..header_len], false, None);
    let mut line_end = header.len() as u64;
    if !indexer.plain_open {
        return None;
    }
    for _ in 0..entries {
        let (offset, number) = (line_end, indexer.number + 1);
        let (len, kind, legacy) = (at.usize()?, at.u8()?, at.u8()?);
        let id = at.id()?;
        let parent = match at.u8()? {
            0 => None,
            1 => Some(at.id()?),
            _ => return None,
        };
        let next_end = offset.checked_add(len as u64)?.checked_add(1)?;
        if next_end > end || usize::from(kind) >= TYPES.len() || legacy > 1 {
            return None;
        }
        indexer.number = number;
        let id = indexer.session.push_id(id);
        let parent = parent.map(|parent| indexer.session.push_id(parent));
        indexer.session.push_line(IndexedLine {
            offset,
            len,
            number,
            kind,
            legacy: legacy == 1,
            id,
            parent,
            parent_hint: None,
            entry: OnceCell::new(),
        });
        indexer.extend_plain(true, next_end);
        line_end = next_end;
    }
    if !at.0.is_empty() || line_end != end {
        return None;
    }
    indexer.session.restored = entries;
    Some(end)
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use crate::session::{Entry, LazySession};

    /// A session file of `header` then `count` user messages, each `pad`
    /// bytes of text long, in a new temporary folder.
    fn written(header: &str, count: usize, pad: usize) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("session.jsonl");
        let mut text = format!("{header}\n");
        for n in 1..=count {
            let parent = match n {
                1 => "null".to_owned(),
                _ => format!("\"e{:04}\"", n - 1),
            };
            text += &format!(
                r#"{{"type":"message","id":"e{n:04}","parentId":{parent},"timestamp":"2026-01-01T00:00:00.000Z","message":{{"role":"user","content":"{}","timestamp":1}}}}"#,
                "x".repeat(pad)
            );
            text.push('\n');
        }
        std::fs::write(&path, text).expect("write");
        (dir, path)
    }

    const V3: &str = r#"{"type":"session","version":3,"id":"s3","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}"#;

    /// The index of the session at `path`, kept.
    fn kept(path: &Path) -> Vec<u8> {
        LazySession::read(path)
            .expect("read")
            .keep()
            .expect("an index")
    }

    /// `kept` with `edit` made to its body and its checksum made anew: an
    /// index someone wrote, not one damaged by accident.
    fn forged(kept: &[u8], edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut body = kept[..kept.len() - 4].to_vec();
        edit(&mut body);
        let sum = crc32fast::hash(&body);
        body.extend_from_slice(&sum.to_le_bytes());
        body
    }

    fn number(body: &[u8], at: usize) -> u64 {
        u64::from_le_bytes(body[at..at + 8].try_into().expect("8 bytes"))
    }

    /// Changes the number at `at` of the index's body by `change`.
    fn change(body: &mut [u8], at: usize, change: impl FnOnce(u64) -> u64) {
        let value = change(number(body, at));
        body[at..at + 8].copy_from_slice(&value.to_le_bytes());
    }

    /// Where the first line's record starts: after the magic, five numbers
    /// and the two probes (each its length, then its bytes).
    fn records(body: &[u8]) -> usize {
        let tail = 56 + 8 + number(body, 56) as usize;
        tail + 8 + number(body, tail) as usize
    }

    /// A change made to an index's body.
    type Forgery = fn(&mut Vec<u8>);

    /// How many entries `kept` restores for the file at `path`.
    fn restored(path: &Path, kept: &[u8]) -> usize {
        LazySession::read_kept(path, Some(kept))
            .expect("read")
            .restored()
    }

    /// Each check of an index that the checksum cannot make: an index
    /// forged past any one of them restores nothing, the file is read whole.
    #[test]
    fn a_forged_index_restores_nothing() {
        let (_dir, path) = written(V3, 20, 10);
        let kept = kept(&path);
        assert_eq!(restored(&path, &kept), 20, "the index as kept");
        let cases: [(&str, Forgery); 8] = [
            ("a byte after the last record", |body| body.push(0)),
            ("one entry fewer than the records", |body| {
                change(body, 48, |n| n - 1);
            }),
            ("the header a byte longer", |body| {
                change(body, 40, |n| n + 1);
            }),
            ("the header as long as the run", |body| {
                let end = number(body, 32);
                change(body, 40, |_| end);
            }),
            ("a line past the run's end", |body| {
                let at = records(body);
                change(body, at, |_| 1 << 40);
            }),
            ("the last line a byte short of the run's end", |body| {
                // The last record: its length, type, flag, then its id
                // (`e0020`, 5 bytes) and parent (`e0019`).
                let at = body.len() - (8 + 5) - 1 - (8 + 5) - 2 - 8;
                change(body, at, |n| n - 1);
            }),
            ("an unknown type", |body| {
                let at = records(body) + 8;
                body[at] = 200;
            }),
            ("a legacy flag that is neither", |body| {
                let at = records(body) + 9;
                body[at] = 2;
            }),
        ];
        for (case, edit) in cases {
            let forged = forged(&kept, edit);
            assert_eq!(restored(&path, &forged), 0, "{case}");
            assert_eq!(
                LazySession::read_kept(&path, Some(&forged))
                    .expect("read")
                    .len(),
                20,
                "{case}: read whole"
            );
        }
    }

    /// A file changed in its first bytes only (the run's end far away) is
    /// not the file the index was made of.
    #[test]
    fn a_file_changed_in_its_first_bytes_restores_nothing() {
        let (_dir, path) = written(V3, 200, 100);
        let kept = kept(&path);
        let mut bytes = std::fs::read(&path).expect("read");
        let at = V3.len() + 30;
        bytes[at] = if bytes[at] == b'1' { b'2' } else { b'1' };
        std::fs::write(&path, &bytes).expect("rewrite");
        assert_eq!(restored(&path, &kept), 0);
    }

    /// A version 2 session's entries keep the v2 → v3 migration when
    /// restored (a `hookMessage` reads as a custom message), and a version
    /// 3 session's do not take it.
    #[test]
    fn a_legacy_session_is_restored_with_its_migration() {
        let v2 = r#"{"type":"session","version":2,"id":"s2","timestamp":"2024-01-01T00:00:00.000Z","cwd":"/"}"#;
        for (header, migrated) in [(v2, true), (V3, false)] {
            let (_dir, path) = written(header, 3, 1);
            let mut text = std::fs::read_to_string(&path).expect("read");
            text += r#"{"type":"message","id":"e0004","parentId":"e0003","timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"hookMessage","customType":"h","content":"x","display":true,"timestamp":1}}"#;
            text.push('\n');
            std::fs::write(&path, text).expect("write");
            let read = LazySession::read(&path).expect("read");
            let kept = read.keep().expect("an index");
            let restored = LazySession::read_kept(&path, Some(&kept)).expect("read");
            assert_eq!(restored.restored(), read.keepable(), "{header}");
            let custom = |session: &LazySession| {
                matches!(
                    session.entry(session.len() - 1),
                    Entry::Message(message)
                        if matches!(message.message, crate::session::AgentMessage::Custom(_))
                )
            };
            assert_eq!(custom(&read), migrated, "{header}");
            assert_eq!(custom(&restored), migrated, "{header}");
        }
    }
}
