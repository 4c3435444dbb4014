//! The seal of saved note heads: a saved head is the text a listing shows
//! for a note without reading it, so a saved-heads file must not be able to
//! say what a note holds. Every saved entry (its path, its file's stamp and
//! its head) carries an HMAC-SHA1 under a key only the user can read (a
//! random 32-byte file, mode 0600, beside the saved heads). An entry whose
//! seal does not verify (crafted, damaged, or saved under another key) is
//! never served: the note is read instead.
//!
//! A seal proves the entry was saved by a notesoup process that read the
//! head from the file under that stamp, and the stamp (device, inode,
//! length, modification and change times: the change time cannot be set
//! back by a user) proves the file has not changed since. What it cannot
//! stop is a process of the same user that reads the key, and such a
//! process could as well write the notes themselves.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::Path;

use sha1::{Digest, Sha1};

/// The key file, beside the saved heads it seals.
pub(super) const KEY_FILE: &str = ".note-heads.key";
/// The length of a key.
const KEY_BYTES: usize = 32;
/// The length of a seal.
pub(super) const SEAL_BYTES: usize = 20;
/// SHA-1's block length, the length HMAC pads its key to.
const BLOCK: usize = 64;

/// A seal.
pub(super) type Seal = [u8; SEAL_BYTES];

/// A key, ready to seal: HMAC's inner and outer hashes with the padded key
/// already fed.
#[derive(Clone)]
pub(super) struct SealKey {
    inner: Sha1,
    outer: Sha1,
    /// The key's bytes, which tell two keys apart.
    key: [u8; KEY_BYTES],
}

impl PartialEq for SealKey {
    fn eq(&self, other: &SealKey) -> bool {
        self.key == other.key
    }
}

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealKey(..)")
    }
}

impl SealKey {
    fn from_bytes(key: &[u8; KEY_BYTES]) -> SealKey {
        let mut inner_pad = [0x36; BLOCK];
        let mut outer_pad = [0x5c; BLOCK];
        for (index, byte) in key.iter().enumerate() {
            inner_pad[index] ^= byte;
            outer_pad[index] ^= byte;
        }
        SealKey {
            inner: Sha1::new_with_prefix(inner_pad),
            outer: Sha1::new_with_prefix(outer_pad),
            key: *key,
        }
    }

    /// The key in `dir`, when there is one that only this user can read and
    /// no one else can have chosen: a regular file (not a link) of exactly
    /// [`KEY_BYTES`], owned by this user, with no permission for group or
    /// others.
    pub(super) fn load(dir: &Path) -> Option<SealKey> {
        let path = dir.join(KEY_FILE);
        if !fs::symlink_metadata(&path).ok()?.is_file() {
            return None;
        }
        let file = File::open(&path).ok()?;
        let meta = file.metadata().ok()?;
        if !meta.is_file() || meta.len() != KEY_BYTES as u64 || !private(&meta) {
            return None;
        }
        let mut key = [0; KEY_BYTES];
        file.take(KEY_BYTES as u64).read_exact(&mut key).ok()?;
        Some(SealKey::from_bytes(&key))
    }

    /// The key in `dir`, made (and any unusable file under its name
    /// replaced) when there is none.
    pub(super) fn load_or_make(dir: &Path) -> io::Result<SealKey> {
        if let Some(key) = SealKey::load(dir) {
            return Ok(key);
        }
        let mut key = [0; KEY_BYTES];
        // Version 4 UUIDs are drawn from the system's random source.
        for chunk in key.chunks_mut(16) {
            let random = uuid::Uuid::new_v4().into_bytes();
            chunk.copy_from_slice(&random[..chunk.len()]);
        }
        crate::durable::write_with_mode(&dir.join(KEY_FILE), &key, 0o600)?;
        Ok(SealKey::from_bytes(&key))
    }

    /// The seal of `parts`, taken in order.
    pub(super) fn seal(&self, parts: &[&[u8]]) -> Seal {
        let mut inner = self.inner.clone();
        for part in parts {
            inner.update(part);
        }
        let mut outer = self.outer.clone();
        outer.update(inner.finalize());
        outer.finalize().into()
    }

    /// Whether `seal` is the seal of `parts` (compared in full, whatever
    /// byte differs first).
    pub(super) fn verifies(&self, parts: &[&[u8]], seal: &Seal) -> bool {
        let ours = self.seal(parts);
        ours.iter()
            .zip(seal)
            .fold(0, |differ, (a, b)| differ | (a ^ b))
            == 0
    }
}

/// Whether the key file's metadata says only this user can have written or
/// read it.
#[cfg(unix)]
fn private(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    meta.mode() & 0o077 == 0 && owned_by_me(meta.uid())
}

#[cfg(not(unix))]
fn private(_: &fs::Metadata) -> bool {
    false
}

#[cfg(target_os = "linux")]
fn owned_by_me(uid: u32) -> bool {
    rustix::process::geteuid().as_raw() == uid
}

/// Without a way to ask who this process is, no key is trusted.
#[cfg(all(unix, not(target_os = "linux")))]
fn owned_by_me(_: u32) -> bool {
    false
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

    use super::*;

    /// Checked against Python's `hmac.new(key, message, hashlib.sha1)`.
    #[test]
    fn seals_are_hmac_sha1() {
        let key = *b"0123456789abcdef0123456789abcdef";
        let sealed = SealKey::from_bytes(&key).seal(&[b"what do ", b"ya want for nothing?"]);
        assert_eq!(
            crate::notes::lower_hex(&sealed),
            "a10c84cc8f94d196b3fb2995d525c2ce821ef25f"
        );
    }

    #[test]
    fn only_a_private_key_of_the_right_length_is_used() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        assert!(SealKey::load(dir.path()).is_none());
        let made = SealKey::load_or_make(dir.path()).unwrap();
        let path = dir.path().join(KEY_FILE);
        let meta = fs::metadata(&path).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        let loaded = SealKey::load(dir.path()).unwrap();
        let seal = made.seal(&[b"x"]);
        assert!(loaded.verifies(&[b"x"], &seal));
        assert!(!loaded.verifies(&[b"y"], &seal));
        // Readable by others: not a key, and a save makes another.
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        assert!(SealKey::load(dir.path()).is_none());
        let remade = SealKey::load_or_make(dir.path()).unwrap();
        assert!(!remade.verifies(&[b"x"], &seal));
        // Another length, or a link: not a key.
        let key = fs::read(&path).unwrap();
        fs::write(&path, &key[..31]).unwrap();
        assert!(SealKey::load(dir.path()).is_none());
        fs::remove_file(&path).unwrap();
        let elsewhere = dir.path().join("elsewhere");
        fs::write(&elsewhere, &key).unwrap();
        fs::set_permissions(&elsewhere, fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
        assert!(SealKey::load(dir.path()).is_none());
    }
}
