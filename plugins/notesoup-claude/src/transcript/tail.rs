//! Reading a transcript backwards, line by line, so hooks find the last
//! usage or the live window's boot without reading a long file whole.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

const CHUNK: usize = 64 * 1024;

/// The lines of a file from the last to the first (without their `\n`).
/// A torn last line (no trailing newline) is yielded too; callers parse and
/// skip what does not parse.
#[derive(Debug)]
pub struct ReverseLines {
    file: File,
    /// Bytes before `pos` are still unread.
    pos: u64,
    /// Unconsumed bytes: a partial line at the front, whole lines after it.
    buf: Vec<u8>,
}

impl ReverseLines {
    /// Opens `path` for reading from its end.
    pub fn open(path: &Path) -> io::Result<Self> {
        let mut file = File::open(path)?;
        let pos = file.seek(SeekFrom::End(0))?;
        Ok(Self {
            file,
            pos,
            buf: Vec::new(),
        })
    }

    /// The next line from the end, or `None` at the start of the file.
    pub fn next_line(&mut self) -> io::Result<Option<Vec<u8>>> {
        loop {
            // A newline in the buffer (other than a trailing one we already
            // split at) ends the last complete line.
            if let Some(at) = self.buf.iter().rposition(|&b| b == b'\n') {
                let line = self.buf.split_off(at + 1);
                self.buf.truncate(at);
                if line.is_empty() {
                    continue;
                }
                return Ok(Some(line));
            }
            if self.pos == 0 {
                if self.buf.is_empty() {
                    return Ok(None);
                }
                return Ok(Some(std::mem::take(&mut self.buf)));
            }
            let take = CHUNK.min(usize::try_from(self.pos).unwrap_or(CHUNK));
            self.pos -= take as u64;
            self.file.seek(SeekFrom::Start(self.pos))?;
            let mut chunk = vec![0; take];
            self.file.read_exact(&mut chunk)?;
            chunk.extend_from_slice(&self.buf);
            self.buf = chunk;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_backwards(content: &[u8]) -> Vec<Vec<u8>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, content).unwrap();
        let mut lines = ReverseLines::open(&path).unwrap();
        let mut out = Vec::new();
        while let Some(line) = lines.next_line().unwrap() {
            out.push(line);
        }
        out
    }

    #[test]
    fn yields_lines_last_first() {
        assert_eq!(
            lines_backwards(b"a\nbb\n\nccc\n"),
            [&b"ccc"[..], b"bb", b"a"]
        );
        assert_eq!(lines_backwards(b"a\ntorn"), [&b"torn"[..], b"a"]);
        assert!(lines_backwards(b"").is_empty());
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
}
