//! Reading a transcript backwards, line by line, so hooks find the last
//! usage or the live window's boot without reading a long file whole.
//!
//! Linear in the bytes read: every chunk is searched for newlines once, the
//! chunks of a long line are kept as they were read and joined once when its
//! start is found. A line longer than [`MAX_LINE_BYTES`] (a Read of a large
//! image or PDF writes such rows) is skipped without being kept: the reader
//! only looks for the newline before it and goes on with the earlier lines,
//! counting it in [`ReverseLines::skipped`]. No row hooks look for (usage,
//! boots, compact boundaries, `tool_use` calls) comes near that size.

use std::fs::File;
use std::io::{self, Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::path::Path;

use notesoup_core::plumbing::LineRead;

use crate::files::open_regular;

const CHUNK: usize = 64 * 1024;

/// The longest line the reader hands out: core's one line cap (16 MiB);
/// longer ones are skipped.
pub const MAX_LINE_BYTES: usize = LineRead::MAX_BYTES;

/// Byte strings looked for in a transcript's lines, each with its finder
/// (built once, not per line).
#[derive(Debug, Clone)]
pub struct Needles {
    finders: Vec<memchr::memmem::Finder<'static>>,
}

impl Needles {
    /// Finders for `needles` (none of them may hold a newline: a line never
    /// does).
    pub fn new(needles: &[&[u8]]) -> Self {
        debug_assert!(needles.iter().all(|n| !n.contains(&b'\n')));
        Self {
            finders: needles
                .iter()
                .map(|n| memchr::memmem::Finder::new(n).into_owned())
                .collect(),
        }
    }

    /// Whether any needle occurs in `haystack`.
    pub fn find(&self, haystack: &[u8]) -> bool {
        self.finders.iter().any(|f| f.find(haystack).is_some())
    }

    /// Where the last occurrence of any needle starts in `haystack`. The
    /// forward finders are the vectorized ones, so this runs forwards.
    fn rfind(&self, haystack: &[u8]) -> Option<usize> {
        self.finders
            .iter()
            .filter_map(|f| f.find_iter(haystack).last())
            .max()
    }
}

/// The lines of a file from the last to the first (without their `\n`).
/// A torn last line (no trailing newline) is yielded too; callers parse and
/// skip what does not parse. Empty lines are left out.
#[derive(Debug)]
pub struct ReverseLines {
    file: File,
    /// The file's length when opened.
    len: u64,
    /// Bytes before `pos` are still unread.
    pos: u64,
    /// Where reading stops: the file's start, or the start of its tail
    /// (see [`ReverseLines::tail_only`]).
    floor: u64,
    /// The chunk read last; `chunk[..end]` is not consumed yet.
    chunk: Vec<u8>,
    end: usize,
    /// The later pieces of the line being assembled, the latest first.
    pending: Vec<Vec<u8>>,
    pending_len: usize,
    /// The line being passed over is longer than `max_line`.
    skipping: bool,
    max_line: usize,
    skipped: u64,
}

impl ReverseLines {
    /// Opens `path` for reading from its end. Only a regular file opens
    /// (see [`open_regular`]), so a FIFO or a device never blocks a hook.
    pub fn open(path: &Path) -> io::Result<Self> {
        Self::with_max_line(path, MAX_LINE_BYTES)
    }

    /// As [`ReverseLines::open`], skipping lines longer than `max_line`.
    pub fn with_max_line(path: &Path, max_line: usize) -> io::Result<Self> {
        Self::of_file(open_regular(path)?, max_line)
    }

    /// Reads `file` (opened by [`open_regular`]) from its end, skipping
    /// lines longer than `max_line`.
    pub fn of_file(mut file: File, max_line: usize) -> io::Result<Self> {
        let pos = file.seek(SeekFrom::End(0))?;
        Ok(Self {
            file,
            len: pos,
            pos,
            floor: 0,
            chunk: Vec::new(),
            end: 0,
            pending: Vec::new(),
            pending_len: 0,
            skipping: false,
            max_line,
            skipped: 0,
        })
    }

    /// Reads only the last `bytes` of the file: a line that starts before
    /// them is yielded cut at their start.
    #[must_use]
    pub fn tail_only(mut self, bytes: u64) -> Self {
        self.floor = self.len.saturating_sub(bytes);
        self
    }

    /// Reads only the bytes in `floor..ceiling` (each clamped to the file's
    /// length): a line that starts before `floor` is yielded cut at it, and
    /// the bytes from `ceiling` on are not read.
    #[must_use]
    pub fn between(mut self, floor: u64, ceiling: u64) -> Self {
        self.len = self.len.min(ceiling);
        self.pos = self.len;
        self.floor = floor.min(self.len);
        self
    }

    /// Lines passed over so far because they were longer than the cap.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// Bytes read from the end of the file so far.
    pub fn consumed(&self) -> u64 {
        self.len - self.pos
    }

    /// The next line from the end, or `None` at the start of the file.
    pub fn next_line(&mut self) -> io::Result<Option<Vec<u8>>> {
        loop {
            let rest = &self.chunk[..self.end];
            if let Some(at) = memchr::memrchr(b'\n', rest) {
                let head = at + 1..self.end;
                self.end = at;
                if let Some(line) = self.finish_line(head) {
                    return Ok(Some(line));
                }
                continue;
            }
            // No newline left in this chunk: all of it belongs to the line
            // being read.
            let end = self.end;
            self.end = 0;
            if !self.skipping {
                if self.pending_len + end > self.max_line {
                    self.start_skipping();
                } else if end > 0 {
                    let mut piece = std::mem::take(&mut self.chunk);
                    piece.truncate(end);
                    self.pending_len += end;
                    self.pending.push(piece);
                }
            }
            if self.pos == self.floor {
                // The file's first line has no newline before it (nor has
                // the tail's).
                if let Some(line) = self.finish_line(0..0) {
                    return Ok(Some(line));
                }
                return Ok(None);
            }
            self.read_chunk()?;
        }
    }

    /// The next line from the end that holds one of `needles`, or `None`
    /// at the start of the file. Lines without a needle are passed over
    /// without being copied (and, past the cap, without being counted in
    /// [`Self::skipped`]): each chunk is searched for the needles as a
    /// whole, and the lines after its last match are dropped at once.
    pub fn next_line_containing(&mut self, needles: &Needles) -> io::Result<Option<Vec<u8>>> {
        loop {
            // With no line being assembled, `chunk[..end]` ends where a line
            // ends: its lines after the first newline are whole.
            if self.pending.is_empty() && !self.skipping {
                let rest = &self.chunk[..self.end];
                let keep = match needles.rfind(rest) {
                    // The line holding the last match ends at the newline
                    // after it.
                    Some(at) => memchr::memchr(b'\n', &rest[at..]).map(|nl| at + nl),
                    // Only the piece before the first newline may still
                    // belong to a line with a match (it starts earlier).
                    // It is read again as the end of the next chunk rather
                    // than kept and joined: no copy, and the read buffer
                    // stays (it would go to `pending`). Less than twice the
                    // bytes are read: when this chunk's first newline is `f`
                    // bytes in, the next chunk's last `f` bytes (this
                    // piece) hold none, so it holds no newline at all (and
                    // is passed whole) or it moves on by more than `f`:
                    // two reads move on by more than a chunk.
                    None => {
                        if let Some(first) = memchr::memchr(b'\n', rest) {
                            self.pos += first as u64;
                            self.read_chunk()?;
                            continue;
                        }
                        None
                    }
                };
                if let Some(keep) = keep {
                    self.end = keep;
                }
            }
            match self.next_line()? {
                Some(line) if needles.find(&line) => return Ok(Some(line)),
                Some(_) => {}
                None => return Ok(None),
            }
        }
    }

    /// Reads the chunk before `pos`.
    fn read_chunk(&mut self) -> io::Result<()> {
        let take = usize::try_from(self.pos - self.floor).map_or(CHUNK, |pos| pos.min(CHUNK));
        self.pos -= take as u64;
        // The previous chunk moved into `pending`, or is consumed: its bytes
        // are overwritten, only a new buffer's are zeroed first.
        self.chunk.resize(take, 0);
        self.file.read_exact_at(&mut self.chunk, self.pos)?;
        self.end = take;
        Ok(())
    }

    fn start_skipping(&mut self) {
        self.skipping = true;
        self.pending.clear();
        self.pending_len = 0;
    }

    /// Ends the line whose first bytes are `chunk[head]`: the line, or
    /// `None` when it is empty or skipped.
    fn finish_line(&mut self, head: std::ops::Range<usize>) -> Option<Vec<u8>> {
        if self.skipping || self.pending_len + head.len() > self.max_line {
            self.skipped += 1;
            self.skipping = false;
            self.pending.clear();
            self.pending_len = 0;
            return None;
        }
        let len = head.len() + self.pending_len;
        if len == 0 {
            return None;
        }
        let mut line = Vec::with_capacity(len);
        line.extend_from_slice(&self.chunk[head]);
        for piece in self.pending.drain(..).rev() {
            line.extend_from_slice(&piece);
        }
        self.pending_len = 0;
        Some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_back(content: &[u8], max_line: usize) -> (Vec<Vec<u8>>, u64) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, content).unwrap();
        let mut lines = ReverseLines::with_max_line(&path, max_line).unwrap();
        let mut out = Vec::new();
        while let Some(line) = lines.next_line().unwrap() {
            out.push(line);
        }
        // At the start it stays at the start.
        assert_eq!(lines.next_line().unwrap(), None);
        (out, lines.skipped())
    }

    fn lines_backwards(content: &[u8]) -> Vec<Vec<u8>> {
        read_back(content, MAX_LINE_BYTES).0
    }

    /// The reference: split forwards, drop empty lines, reverse.
    fn expected(content: &[u8]) -> Vec<Vec<u8>> {
        let mut lines: Vec<Vec<u8>> = content
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(<[u8]>::to_vec)
            .collect();
        lines.reverse();
        lines
    }

    /// `next_line_containing` yields exactly the lines `next_line` yields
    /// that hold a needle.
    fn matching_back(content: &[u8], max_line: usize, needles: &[&[u8]]) -> Vec<Vec<u8>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, content).unwrap();
        let needles = Needles::new(needles);
        let mut lines = ReverseLines::with_max_line(&path, max_line).unwrap();
        let mut out = Vec::new();
        while let Some(line) = lines.next_line_containing(&needles).unwrap() {
            out.push(line);
        }
        assert_eq!(lines.next_line_containing(&needles).unwrap(), None);
        out
    }

    #[test]
    fn a_tail_reads_only_its_last_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let content = format!(
            "{}\nfirst\n{}\nlast\n",
            "a".repeat(CHUNK),
            "b".repeat(CHUNK)
        );
        std::fs::write(&path, &content).unwrap();
        let mut lines = ReverseLines::open(&path)
            .unwrap()
            .tail_only(CHUNK as u64 + 10);
        assert_eq!(lines.next_line().unwrap().unwrap(), b"last");
        assert_eq!(
            lines.next_line().unwrap().unwrap(),
            "b".repeat(CHUNK).as_bytes()
        );
        // Cut at the tail's start.
        assert_eq!(lines.next_line().unwrap().unwrap(), b"rst");
        assert_eq!(lines.next_line().unwrap(), None);
        assert_eq!(lines.consumed(), CHUNK as u64 + 10);
        let whole = ReverseLines::open(&path).unwrap().tail_only(u64::MAX);
        assert_eq!(whole.floor, 0);
    }

    #[test]
    fn only_lines_with_a_needle_are_yielded() {
        let content = b"a1\nneedle one\nb\n\nxx needle\ntorn needle";
        assert_eq!(
            matching_back(content, MAX_LINE_BYTES, &[b"needle"]),
            [&b"torn needle"[..], b"xx needle", b"needle one"]
        );
        assert_eq!(
            matching_back(content, MAX_LINE_BYTES, &[b"a1", b"b"]),
            [&b"b"[..], b"a1"]
        );
        assert!(matching_back(content, MAX_LINE_BYTES, &[b"zzz"]).is_empty());
    }

    #[test]
    fn yields_lines_last_first() {
        assert_eq!(
            lines_backwards(b"a\nbb\n\nccc\n"),
            [&b"ccc"[..], b"bb", b"a"]
        );
        assert_eq!(lines_backwards(b"a\ntorn"), [&b"torn"[..], b"a"]);
        assert_eq!(lines_backwards(b"\n\nx\n\n"), [&b"x"[..]]);
        assert!(lines_backwards(b"").is_empty());
        assert!(lines_backwards(b"\n\n\n").is_empty());
    }

    #[test]
    fn lines_longer_than_a_chunk_survive() {
        let long = vec![b'x'; CHUNK * 2 + 17];
        let mut content = b"first\n".to_vec();
        content.extend_from_slice(&long);
        content.extend_from_slice(b"\nlast\n");
        let lines = lines_backwards(&content);
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], b"last");
        assert_eq!(lines[1], long);
        assert_eq!(lines[2], b"first");
    }

    #[test]
    fn lines_of_many_chunks_keep_their_bytes_in_order() {
        // Distinct bytes, so a piece joined out of order shows.
        let long: Vec<u8> = (0..CHUNK * 5 + 3).map(|i| b'a' + (i % 23) as u8).collect();
        let mut content = long.clone();
        content.push(b'\n');
        content.extend_from_slice(&long[..CHUNK + 1]);
        assert_eq!(lines_backwards(&content), expected(&content));
        assert_eq!(lines_backwards(&content)[1], long);
    }

    #[test]
    fn newlines_at_chunk_boundaries() {
        // The file is read from its end, so chunk boundaries sit at
        // `len - k * CHUNK`; put newlines on, just before and just after
        // them, and lines of exactly one chunk.
        for total in [CHUNK, CHUNK + 1, 2 * CHUNK, 2 * CHUNK - 1, 3 * CHUNK + 1] {
            for offset in [0, 1, 2] {
                let mut content = vec![b'y'; total];
                for k in 1..=3 {
                    if let Some(at) = (total + offset).checked_sub(k * CHUNK)
                        && at < total
                    {
                        content[at] = b'\n';
                    }
                }
                assert_eq!(
                    lines_backwards(&content),
                    expected(&content),
                    "{total} {offset}"
                );
            }
        }
        // A line of exactly one chunk, with and without its newline.
        let mut one = vec![b'z'; CHUNK];
        assert_eq!(lines_backwards(&one), [one.clone()]);
        one.push(b'\n');
        assert_eq!(lines_backwards(&one), expected(&one));
    }

    #[test]
    fn lines_over_the_cap_are_skipped_and_reading_goes_on() {
        let cap = 100;
        let exact = vec![b'e'; cap];
        let over = vec![b'o'; cap + 1];
        let huge = vec![b'h'; CHUNK * 3 + 5];
        for (content, lines, skipped) in [
            (
                [&b"a\n"[..], &over, b"\nb\n"].concat(),
                vec![b"b".to_vec(), b"a".to_vec()],
                1,
            ),
            ([&over[..], b"\nb"].concat(), vec![b"b".to_vec()], 1),
            (
                [&exact[..], b"\n", &huge, b"\n", &over].concat(),
                vec![exact.clone()],
                2,
            ),
            ([&b"a\n"[..], &huge].concat(), vec![b"a".to_vec()], 1),
            (huge.clone(), vec![], 1),
        ] {
            assert_eq!(read_back(&content, cap), (lines, skipped));
        }
        // Chunk-sized caps, so the line crosses the cap while chunks are
        // kept, and while the head of the line is being finished.
        let content = [&b"keep\n"[..], &huge, b"\ntail\n"].concat();
        for cap in [CHUNK, CHUNK * 2, CHUNK * 3, CHUNK * 3 + 4] {
            assert_eq!(
                read_back(&content, cap),
                (vec![b"tail".to_vec(), b"keep".to_vec()], 1),
                "{cap}"
            );
        }
        assert_eq!(
            read_back(&content, CHUNK * 3 + 5).0,
            vec![b"tail".to_vec(), huge, b"keep".to_vec()]
        );
    }

    #[test]
    fn random_files_read_back_as_split_forwards() {
        // xorshift: deterministic, so a failure reproduces.
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..60 {
            let len = (next() % (4 * CHUNK as u64)) as usize;
            // Sparse newlines make lines of many chunks; dense ones make
            // many short lines per chunk.
            let density = [3, 1000, 50_000, 300_000][round % 4];
            let content: Vec<u8> = (0..len)
                .map(|_| {
                    if next() % density == 0 {
                        b'\n'
                    } else {
                        b'a' + (next() % 26) as u8
                    }
                })
                .collect();
            let cap = [usize::MAX, CHUNK / 2, CHUNK, 3 * CHUNK / 2, 7][round % 5];
            let all = expected(&content);
            let kept: Vec<Vec<u8>> = all.iter().filter(|l| l.len() <= cap).cloned().collect();
            let skipped = (all.len() - kept.len()) as u64;
            // Needles in most chunks, and needles in few of them (most
            // chunks are then passed over whole).
            let needles: [&[u8]; 2] = if round % 3 == 2 {
                [b"qzxj", b"jxzq"]
            } else {
                [b"ab", b"zq"]
            };
            let matching: Vec<Vec<u8>> = kept
                .iter()
                .filter(|l| needles.iter().any(|n| l.windows(n.len()).any(|w| w == *n)))
                .cloned()
                .collect();
            assert_eq!(read_back(&content, cap), (kept, skipped), "round {round}");
            assert_eq!(
                matching_back(&content, cap, &needles),
                matching,
                "round {round}"
            );
        }
    }

    #[test]
    fn the_real_cap_skips_a_line_just_over_it() {
        let over = vec![b'x'; MAX_LINE_BYTES + 1];
        let content = [&b"{\"first\":1}\n"[..], &over, b"\n{\"last\":1}\n"].concat();
        let (lines, skipped) = read_back(&content, MAX_LINE_BYTES);
        assert_eq!(
            lines,
            vec![b"{\"last\":1}".to_vec(), b"{\"first\":1}".to_vec()]
        );
        assert_eq!(skipped, 1);
    }

    #[test]
    fn consumed_counts_bytes_from_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        std::fs::write(&path, b"a\nb\n").unwrap();
        let mut lines = ReverseLines::open(&path).unwrap();
        assert_eq!(lines.consumed(), 0);
        lines.next_line().unwrap();
        assert_eq!(lines.consumed(), 4);
    }
}
