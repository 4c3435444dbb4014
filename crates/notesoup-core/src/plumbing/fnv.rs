//! FNV-1a, the hash of the names notesoup keeps on disk: stable across
//! builds and platforms, so what a process saves under it is found again by
//! the next one.

/// The 64-bit FNV-1a hash of `parts`, one after the other.
pub(crate) fn fnv1a(parts: &[&[u8]]) -> u64 {
    parts
        .iter()
        .flat_map(|part| part.iter())
        .fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
            (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_published_test_vectors_hold_whole_or_in_parts() {
        assert_eq!(fnv1a(&[]), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(&[b"a"]), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(&[b"foo", b"bar"]), fnv1a(&[b"foobar"]));
        assert_eq!(fnv1a(&[b"foobar"]), 0x85944171f73967e8);
    }
}
