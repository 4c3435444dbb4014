//! Plumbing every host adapter shares where it meets the outside world: the
//! one capped line reader for a JSON-lines stream (a sidecar's stdin, the
//! MCP server's, the dream-tools server's), the one bounded reader for the
//! small files notesoup keeps or reads (settings, session records, kept
//! heads and shelves), the boot caches a host keeps between its processes
//! ([`BootCaches`], in [`BootCaches::dir`]), opening the notes store for an
//! identity, and the dream command's flow.
//!
//! The readers exist so that no input can make a host hold unbounded memory
//! or wait forever: a line longer than [`LineRead::MAX_BYTES`] streams past
//! without being kept, and a "file" that is a FIFO, a device, a directory or
//! far too large is refused with a typed error before anything is read. The
//! store opening and the dream flow exist so that every host's command line
//! finds the same notes home, names the same identity and says the same
//! lines, from one definition.

mod dream;
mod dreamer_child;
pub(crate) mod fnv;
mod kept;
pub(crate) mod lines;
mod settings_file;
mod small_file;
mod store;

pub use dream::{
    DreamFlags, DreamProgress, Dreamer, DreamerProcess, DreamerSetting, NotesHomeError, notes_home,
};
pub use dreamer_child::run_dreamer_child;
pub use kept::BootCaches;
pub use lines::{CappedLines, LineRead, read_capped};
pub use small_file::{Links, SmallFileError, open_regular, read_small_file, read_small_text};
pub use store::NotesOwner;
