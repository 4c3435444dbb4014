//! `NoteStore`: the note operations over the five homes of one identity.
//!
//! - `types`: the arguments and results, with the [`NoteLocation`] they
//!   share;
//! - `ops`: `write`, `read`, `update` and `rename`, with the edit helpers;
//! - `listing`: `list`, `list_headers`, `peek_row` and `search`, and the
//!   walk over the homes they share;
//! - `files`: reading note files (whole, the head only, as text);
//! - `heads`: note heads kept between listings by a long-lived host;
//! - `watch`: change notification for the kept heads (Linux), so a head is
//!   served without an `lstat` while nothing reported a change to it.

mod files;
mod forget;
mod heads;
mod listing;
mod ops;
mod seal;
mod types;
#[cfg(target_os = "linux")]
mod watch;

/// Without change notification nothing is watched: every kept head is
/// checked by its file's stamp.
#[cfg(not(target_os = "linux"))]
mod watch {
    use std::path::Path;

    use super::forget::Forget;

    #[derive(Debug)]
    pub(super) struct Watcher;

    impl Watcher {
        pub(super) fn new() -> Option<Watcher> {
            None
        }

        pub(super) fn drain(&mut self, _: &mut Vec<Forget>) {}

        pub(super) fn watch_dir(&mut self, _: &Path, _: &mut Vec<Forget>) -> Option<u64> {
            None
        }

        pub(super) fn watch_note(&mut self, _: &Path) -> bool {
            false
        }

        pub(super) fn watches(&self) -> usize {
            0
        }
    }
}

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jiff::tz::TimeZone;

use super::address::{Address, Home};
use super::beneath::{BeneathError, DirHandle};
use super::error::{NoteError, SecretPlace};
use super::identity::NotesIdentity;
use super::secrets::{SecretFinding, find_secret};

pub use heads::HeadCache;
pub(crate) use types::{
    Change, ChangeKind, ListQuery, ListStatus, NoteHeader, NoteLocation, NoteRow, ReadResult,
    RenameResult, SearchRow, UpdateResult, WriteOutcome, WriteResult,
};
pub use types::{DeleteOutcome, Edit, UpdateRequest};

/// The longest virtual path (the home-relative path ending in `.md`).
pub(crate) const MAX_NOTE_PATH_BYTES: usize = 512;

/// The notes store of one identity. Cheap to build; the per-file queue and
/// the `updatedAt` clock are process-wide, so any number of stores may run
/// side by side.
#[derive(Debug, Clone)]
pub struct NoteStore {
    identity: NotesIdentity,
    root: PathBuf,
    tz: TimeZone,
    secret_guard: bool,
    /// Heads kept between listings, when the host keeps them.
    heads: Option<Arc<HeadCache>>,
}

impl NoteStore {
    /// A store over `identity`'s homes, writing times in the system time zone.
    pub fn new(identity: NotesIdentity) -> NoteStore {
        let root =
            fs::canonicalize(identity.home()).unwrap_or_else(|_| identity.home().to_path_buf());
        NoteStore {
            identity,
            root,
            tz: crate::notes::system_time_zone(),
            secret_guard: true,
            heads: None,
        }
    }

    /// The same store with the credential guard on (the default) or off (the
    /// `secretGuard: false` setting). See [`crate::notes::find_secret`].
    pub fn with_secret_guard(mut self, on: bool) -> NoteStore {
        self.secret_guard = on;
        self
    }

    /// The same store listing heads through `heads` (see [`HeadCache`]): a
    /// long-lived host keeps one for the life of the process, so listing an
    /// unchanged note costs an `lstat`, not a read.
    pub fn with_head_cache(mut self, heads: Arc<HeadCache>) -> NoteStore {
        self.heads = Some(heads);
        self
    }

    /// The heads the store lists through, when it was given some.
    pub(crate) fn head_cache(&self) -> Option<&Arc<HeadCache>> {
        self.heads.as_ref()
    }

    /// The same store writing times in `tz` (tests and fixed-zone hosts).
    pub fn with_time_zone(mut self, tz: TimeZone) -> NoteStore {
        self.tz = tz;
        self
    }

    /// The identity.
    pub fn identity(&self) -> &NotesIdentity {
        &self.identity
    }

    /// The notes root as used for paths (resolved when it exists).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The time zone times are written in.
    pub fn time_zone(&self) -> &TimeZone {
        &self.tz
    }

    /// The directory of `home` (`no_session` for the session home of an
    /// identity without a session).
    pub fn home_dir(&self, home: &Home) -> Result<PathBuf, NoteError> {
        home.dir(&self.root, &self.identity)
    }

    /// Parses an address against this store's identity.
    pub fn address(&self, address: &str) -> Result<Address, NoteError> {
        Address::parse(address, &self.identity)
    }

    /// The file of a parsed address.
    pub fn note_path(&self, address: &Address) -> Result<PathBuf, NoteError> {
        Ok(self.home_dir(address.home())?.join(address.path()))
    }

    /// The location of a parsed address whose file is `path`.
    fn locate(&self, address: &Address, path: PathBuf) -> NoteLocation {
        NoteLocation {
            address: address.render(&self.identity),
            scope: address.home().scope(),
            home: address.home().clone(),
            rel_path: address.path().to_owned(),
            path,
        }
    }

    /// Refuses a note body as it would be written (`place` says which
    /// operation's) when it holds a credential and the guard is on. The
    /// whole body is judged, not the text a request adds: an edit may
    /// complete a key the note already began.
    fn guard_body(&self, body: &str, place: SecretPlace) -> Result<(), NoteError> {
        match self.secret_in(body) {
            Some(found) => Err(NoteError::secret(found, place)),
            None => Ok(()),
        }
    }

    /// The first credential in `text` when the guard is on.
    fn secret_in(&self, text: &str) -> Option<SecretFinding> {
        self.secret_guard.then(|| find_secret(text)).flatten()
    }

    /// Refuses an address whose path (folders and file name) holds a
    /// credential when the guard is on: a note's name is stored, listed and
    /// booted like its body.
    fn guard_address(&self, address: &Address) -> Result<(), NoteError> {
        match self.secret_in(address.path()) {
            Some(found) => Err(NoteError::secret(found, SecretPlace::Address)),
            None => Ok(()),
        }
    }

    /// Where the file of `address` is: its directory relative to the root,
    /// and its name there.
    fn place<'a>(&self, address: &'a Address) -> Result<(PathBuf, &'a OsStr), NoteError> {
        let home = address.home().rel_dir(&self.identity)?;
        let (dir, name) = match address.path().rsplit_once('/') {
            Some((dir, name)) => (home.join(dir), name),
            None => (home, address.path()),
        };
        Ok((dir, OsStr::new(name)))
    }

    /// The root, opened; `None` when it does not exist yet.
    fn open_root(&self) -> Result<Option<DirHandle>, NoteError> {
        match DirHandle::open_root(&self.root) {
            Ok(root) => Ok(Some(root)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(NoteError::io("open directory", &self.root, &e)),
        }
    }

    /// The root, opened, created first when it does not exist.
    fn create_root(&self) -> Result<DirHandle, NoteError> {
        if let Some(root) = self.open_root()? {
            return Ok(root);
        }
        fs::create_dir_all(&self.root)
            .map_err(|e| NoteError::io("create directory", &self.root, &e))?;
        DirHandle::open_root(&self.root)
            .map_err(|e| NoteError::io("open directory", &self.root, &e))
    }

    /// A refusal of a path below the root, naming the address `address`
    /// (never the root's path) when the path crosses a link.
    fn refusal(&self, address: &Address, error: BeneathError) -> NoteError {
        NoteError::from(error).at_address(&address.render(&self.identity))
    }

    fn writable(&self, address: &str) -> Result<Address, NoteError> {
        let address = self.address(address)?;
        if !address.is_writable(&self.identity) {
            return Err(address.home().not_yours());
        }
        Ok(address)
    }

    /// The largest serialized note file, frontmatter included.
    pub const MAX_NOTE_BYTES: usize = 1_000_000;
}
