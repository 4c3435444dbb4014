//! Measuring a result before it is built: the byte length of a value's
//! compact JSON, counted as serde writes it, so nothing is allocated. Both a
//! refusal's details and a result's fit are measured here, so the refusal
//! and the result modules need not import each other.

use std::io;

use serde::Serialize;

/// Byte length of the compact JSON of `value`, measured without building it.
/// A value that cannot be serialized measures as `usize::MAX`, so it never fits.
pub(crate) fn json_bytes<T: Serialize + ?Sized>(value: &T) -> usize {
    let mut counter = ByteCounter(0);
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => counter.0,
        Err(_) => usize::MAX,
    }
}

struct ByteCounter(usize);

impl io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
