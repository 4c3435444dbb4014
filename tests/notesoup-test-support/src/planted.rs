//! A link planted where an installer writes one of its files, pointing at a
//! file of the user's (a `.bashrc`): every installer must replace the link,
//! never write through it.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// What the user's file holds.
const KEPT: &str = "export KEEP=1\n";

/// The user's file a planted link points at.
#[derive(Debug)]
pub struct Victim(PathBuf);

impl Victim {
    /// The user's file at `path` (written by [`Victim::reset`]).
    pub fn at(path: PathBuf) -> Self {
        let victim = Self(path);
        victim.reset();
        victim
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Writes the user's file again: its bytes, mode 0600.
    pub fn reset(&self) {
        std::fs::write(&self.0, KEPT).unwrap();
        std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(0o600)).unwrap();
    }

    /// Resets the user's file and replaces the installed `file` with a
    /// link to it.
    pub fn plant_at(&self, file: &Path) {
        self.reset();
        std::fs::remove_file(file).unwrap();
        std::os::unix::fs::symlink(&self.0, file).unwrap();
    }

    /// Fails the test unless the user's file keeps its bytes and its mode.
    pub fn assert_untouched(&self, what: &str) {
        assert_eq!(std::fs::read_to_string(&self.0).unwrap(), KEPT, "{what}");
        let mode = std::fs::metadata(&self.0).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{what}");
    }
}

/// Fails the test unless `file` is a regular file again (the link was
/// replaced, not followed).
pub fn assert_replaced(file: &Path, what: &str) {
    assert!(
        std::fs::symlink_metadata(file).unwrap().is_file(),
        "{what} is the installer's file again"
    );
}
