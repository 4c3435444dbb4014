//! FNV-1a: the hash of the transcript code's maps and of the names the
//! hooks give their kept files.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// FNV-1a for the per-file uuid maps: row uuids are short ids Claude Code
/// generates, so a fast unkeyed hash serves (SipHash dominated the decode).
pub(crate) struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    /// The FNV-1a hash of `bytes`.
    pub(crate) fn of(bytes: &[u8]) -> u64 {
        let mut hasher = Self::default();
        hasher.write(bytes);
        hasher.finish()
    }
}

impl Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

pub(super) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<Fnv>>;
pub(super) type FastSet<K> = HashSet<K, BuildHasherDefault<Fnv>>;
