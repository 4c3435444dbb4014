//! A link planted where an installer writes one of its files, pointing at a
//! file of the user's (a `.bashrc`): every installer must replace the link,
//! never write through it. A link where one of its folders belongs, and a
//! folder of someone else's files, are refused.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

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

/// What an installer said on stderr.
fn said(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Replaces the installed `folder` with a link to the empty folder
/// `elsewhere`: every one of `attempts` (the installer's arguments, run by
/// `run`) is refused with exit 1 naming the link, and nothing is written
/// through it.
pub fn assert_linked_folder_refused(
    folder: &Path,
    elsewhere: &Path,
    attempts: &[Vec<&str>],
    run: impl Fn(&[&str]) -> Output,
) {
    std::fs::create_dir_all(elsewhere).unwrap();
    std::fs::remove_dir_all(folder).unwrap();
    std::os::unix::fs::symlink(elsewhere, folder).unwrap();
    for args in attempts {
        let refused = run(args);
        assert_eq!(refused.status.code(), Some(1), "{args:?}");
        assert!(
            said(&refused).contains("is a symbolic link"),
            "{}",
            said(&refused)
        );
    }
    assert_eq!(std::fs::read_dir(elsewhere).unwrap().count(), 0);
}

/// Someone else's folder `foreign`, holding only their file `theirs` (a
/// path under it, holding `text`): every one of `attempts` (the installer's
/// arguments, run by `run`) is refused with exit 1, naming the entry that
/// is not the installer's, `--force` and each of `also_said`; their file
/// keeps its bytes and nothing is written beside it.
pub fn assert_foreign_folder_refused(
    foreign: &Path,
    theirs: &str,
    text: &str,
    attempts: &[Vec<&str>],
    also_said: &[&str],
    run: impl Fn(&[&str]) -> Output,
) {
    crate::files::put(&foreign.join(theirs), text);
    let entry = theirs.split('/').next().unwrap_or(theirs);
    for args in attempts {
        let refused = run(args);
        assert_eq!(refused.status.code(), Some(1), "{args:?}");
        let said = said(&refused);
        assert!(
            said.contains(&format!("holds files notesoup did not install ({entry})"))
                && said.contains("--force")
                && also_said.iter().all(|word| said.contains(word)),
            "{said}"
        );
    }
    assert_eq!(std::fs::read_to_string(foreign.join(theirs)).unwrap(), text);
    assert_eq!(
        std::fs::read_dir(foreign).unwrap().count(),
        1,
        "nothing written"
    );
}
