//! Reading note files: whole or only the head, as text or as bytes. Files
//! are opened inside their open directory, never through a link; writing
//! goes through the durable write of [`DirHandle::replace`].

use std::borrow::Cow;
use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use crate::notes::beneath::{BeneathError, DirHandle};
use crate::notes::error::NoteError;
use crate::notes::frontmatter::settled_head_len;

/// Reads the rest of a file into `buffer` after its first `filled` bytes
/// and returns the total length. The buffer keeps its initialized length
/// across files, so it is zeroed only when it grows, and no per-file size
/// query is made.
pub(super) fn read_into(
    mut file: File,
    buffer: &mut Vec<u8>,
    mut filled: usize,
) -> io::Result<usize> {
    const CHUNK: usize = 16 * 1024;
    loop {
        if buffer.len() - filled < CHUNK {
            buffer.resize(filled + 2 * CHUNK, 0);
        }
        match file.read(&mut buffer[filled..]) {
            Ok(0) => return Ok(filled),
            Ok(read) => filled += read,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// How many bytes `read_head` reads before it gives up on a short head:
/// a page, far more than any ordinary frontmatter block.
const HEAD_BYTES: usize = 4096;

/// Reads the start of a file into `buffer`, just enough to settle its
/// frontmatter ([`settled_head_len`]), and returns the length of the
/// settling prefix. A note whose block runs past [`HEAD_BYTES`] (or which
/// has no line break there) is read whole and the whole length returned,
/// as is a file that ends first. An ordinary note costs a single `read`:
/// no size query, no second read to meet the end of the file.
pub(super) fn read_head(mut file: File, buffer: &mut Vec<u8>) -> io::Result<usize> {
    if buffer.len() < HEAD_BYTES {
        buffer.resize(HEAD_BYTES, 0);
    }
    let mut filled = 0;
    while filled < HEAD_BYTES {
        match file.read(&mut buffer[filled..HEAD_BYTES]) {
            Ok(0) => return Ok(filled),
            Ok(read) => filled += read,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
        if let Some(len) = settled_head_len(&buffer[..filled]) {
            return Ok(len);
        }
    }
    read_into(file, buffer, filled)
}

/// The bytes as text; invalid UTF-8 is replaced (listing never rewrites).
pub(super) fn text_of(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// The bytes of the regular file `name` in `dir`, or `None` when there is
/// none. Never through a link (see [`DirHandle::open_file`]).
pub(super) fn read_bytes(dir: &DirHandle, name: &OsStr) -> Result<Option<Vec<u8>>, BeneathError> {
    let Some((file, len)) = dir.open_file(name)? else {
        return Ok(None);
    };
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0).saturating_add(1));
    // Through `take`: the length is known, and `File`'s own `read_to_end`
    // would ask for it again.
    file.take(u64::MAX)
        .read_to_end(&mut bytes)
        .map_err(|e| BeneathError::io("read", &dir.path().join(name), e))?;
    Ok(Some(bytes))
}

/// `bytes` (the file at `path`) as text for a rewrite that keeps its body:
/// invalid UTF-8 is an `io_error` so no byte is ever silently replaced.
pub(super) fn text_checked(bytes: Vec<u8>, path: &Path) -> Result<String, NoteError> {
    String::from_utf8(bytes).map_err(|_| {
        let error = io::Error::new(
            io::ErrorKind::InvalidData,
            "the note file is not valid UTF-8; refusing to rewrite it",
        );
        NoteError::io("read", path, &error)
    })
}

/// `bytes` as text where only its metadata matters (invalid UTF-8 is
/// replaced).
pub(super) fn text_lossy(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(invalid) => String::from_utf8_lossy(invalid.as_bytes()).into_owned(),
    }
}
