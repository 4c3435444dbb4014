//! The entries the sidecar mirrors: those Pi had written to the session
//! file when the mirror started, indexed by [`LazySession`] and decoded only
//! when a handler reads them, then those the shim sent on its lines.

use std::cell::Cell;
use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::session::{Entry, LazySession, UnknownEntry};

/// Pi's entries in append order, the first `disk_len` of them read lazily
/// from the session file.
#[derive(Debug)]
pub(crate) struct EntryMirror {
    /// The session file, indexed; its first `disk_len` entries are the
    /// mirror's first.
    disk: Option<LazySession>,
    disk_len: usize,
    /// Whether each entry on disk is a `message`, from the index: the
    /// window branch asks of every entry on the path at every event.
    disk_messages: Vec<bool>,
    /// The entries after them, decoded from the shim's lines.
    tail: Vec<Entry>,
    /// Each tail entry's id to its position (a later duplicate wins).
    tail_ids: HashMap<String, usize>,
    /// Some tail entry's id also names an entry on disk: the file index's
    /// parent links are not the mirror's.
    shadowed: bool,
    /// The last line on disk was found changed: the file changed under the
    /// mirror, which [`Self::check`] then reports (as it reports an entry
    /// read back that was not the one indexed, `LazySession::id_changed`).
    stale: Cell<bool>,
    /// The last entry on disk's line as it was read when the mirror
    /// started (`None` when it could not be read back).
    last_line: Option<Vec<u8>>,
    /// What [`Self::window_entry`] gives for a `message` entry.
    stand_in: Entry,
}

impl Default for EntryMirror {
    fn default() -> Self {
        let mut stand_in = Map::new();
        stand_in.insert("type".to_owned(), Value::String("message".to_owned()));
        Self {
            disk: None,
            disk_len: 0,
            disk_messages: Vec::new(),
            tail: Vec::new(),
            tail_ids: HashMap::new(),
            shadowed: false,
            stale: Cell::new(false),
            last_line: None,
            stand_in: Entry::Unknown(UnknownEntry(stand_in)),
        }
    }
}

impl EntryMirror {
    /// A mirror of the first `count` entries of `session` (the caller has
    /// checked that the file holds them).
    pub(crate) fn from_disk(session: LazySession, count: usize) -> Self {
        let disk_len = count.min(session.len());
        let last_line = disk_len
            .checked_sub(1)
            .and_then(|last| session.line_now(last).ok());
        Self {
            last_line,
            disk_messages: (0..disk_len)
                .map(|position| session.is_message(position))
                .collect(),
            disk_len,
            disk: Some(session),
            ..Self::default()
        }
    }

    /// The session file the first entries are read from, if any.
    pub(crate) fn disk(&self) -> Option<&LazySession> {
        self.disk.as_ref()
    }

    /// How many entries the mirror holds.
    pub(crate) fn len(&self) -> usize {
        self.disk_len + self.tail.len()
    }

    /// The id of the entry at `position`, without decoding it.
    pub(crate) fn id(&self, position: usize) -> &str {
        match &self.disk {
            Some(disk) if position < self.disk_len => disk.id(position),
            _ => self.tail[position - self.disk_len].id(),
        }
    }

    /// The ids of the first `count` entries, in order.
    pub(crate) fn ids(&self, count: usize) -> impl Iterator<Item = &str> {
        (0..count).map(|position| self.id(position))
    }

    /// The entry at `position`, decoded on first use.
    pub(crate) fn entry(&self, position: usize) -> &Entry {
        match &self.disk {
            Some(disk) if position < self.disk_len => disk.entry(position),
            _ => &self.tail[position - self.disk_len],
        }
    }

    /// The entry at `position` as the window rules read it: a `message`
    /// entry is a stand-in (an untyped entry of type `message`, which every
    /// rule treats as it treats a message), any other entry is itself.
    pub(crate) fn window_entry(&self, position: usize) -> &Entry {
        if self.is_message(position) {
            &self.stand_in
        } else {
            self.entry(position)
        }
    }

    /// What [`Self::window_entry`] gives for a `message` entry.
    pub(crate) fn stand_in(&self) -> &Entry {
        &self.stand_in
    }

    /// Whether the entry at `position` has the type `message`.
    pub(crate) fn is_message(&self, position: usize) -> bool {
        match self.disk_messages.get(position) {
            Some(&message) => message,
            None => self.tail[position - self.disk_len].entry_type() == "message",
        }
    }

    /// Whether the entry at `position` has the type `compaction`.
    pub(crate) fn is_compaction(&self, position: usize) -> bool {
        match &self.disk {
            Some(disk) if position < self.disk_len => disk.is_compaction(position),
            _ => self.tail[position - self.disk_len].entry_type() == "compaction",
        }
    }

    /// The positions among `positions` whose entries are on disk and not
    /// decoded yet.
    pub(crate) fn undecoded(&self, mut positions: Vec<usize>) -> Vec<usize> {
        match &self.disk {
            Some(disk) => {
                positions
                    .retain(|&position| position < self.disk_len && !disk.is_decoded(position));
                positions
            }
            None => Vec::new(),
        }
    }

    /// Decodes the entries at `positions` not decoded yet, side by side.
    pub(crate) fn prefetch(&self, positions: &[usize]) {
        let Some(disk) = &self.disk else {
            return;
        };
        let on_disk: Vec<usize> = positions
            .iter()
            .copied()
            .filter(|&position| position < self.disk_len)
            .collect();
        disk.prefetch(&on_disk);
    }

    /// Every entry, in append order (every one on disk decoded).
    pub(crate) fn all(&self) -> Vec<&Entry> {
        let positions: Vec<usize> = (0..self.len()).collect();
        self.prefetch(&positions);
        positions
            .into_iter()
            .map(|position| self.entry(position))
            .collect()
    }

    /// How many entries on disk have been decoded.
    #[cfg(test)]
    pub(crate) fn decoded(&self) -> usize {
        self.disk.as_ref().map_or(0, LazySession::decoded)
    }

    /// The position of the entry with this id; a later duplicate wins, as
    /// in Pi's `byId`.
    pub(crate) fn position_of(&self, id: &str) -> Option<usize> {
        match self.tail_ids.get(id) {
            Some(&position) => Some(position),
            None => self.disk_position(id),
        }
    }

    fn disk_position(&self, id: &str) -> Option<usize> {
        let disk = self.disk.as_ref()?;
        let position = disk.position_of(id)?;
        if position < self.disk_len {
            return Some(position);
        }
        // The file holds lines past Pi's entries, one of them with this id.
        (0..self.disk_len)
            .rev()
            .find(|&position| disk.id(position) == id)
    }

    /// The position of the parent of the entry at `position`.
    pub(crate) fn parent_position(&self, position: usize) -> Option<usize> {
        match &self.disk {
            Some(disk) if position < self.disk_len => {
                let id = disk.parent_id(position)?;
                if !self.shadowed
                    && let Some(parent) = disk.parent_of(position)
                    && parent < self.disk_len
                {
                    return Some(parent);
                }
                self.position_of(id)
            }
            _ => self.tail[position - self.disk_len]
                .parent_id()
                .and_then(|id| self.position_of(id)),
        }
    }

    /// Appends an entry; `true` when its id already named another entry
    /// (a path walked before may no longer hold).
    pub(crate) fn push(&mut self, entry: Entry) -> bool {
        let position = self.len();
        let id = entry.id().to_owned();
        self.tail.push(entry);
        let on_disk = self.disk_position(&id).is_some();
        self.shadowed |= on_disk;
        self.tail_ids.insert(id, position).is_some() || on_disk
    }

    /// Keeps the first `len` entries; `true` when some were dropped. Cutting
    /// into the entries on disk decodes those kept.
    pub(crate) fn truncate(&mut self, len: usize) -> bool {
        if len >= self.len() {
            return false;
        }
        if len < self.disk_len {
            let kept: Vec<Entry> = (0..len)
                .map(|position| self.entry(position).clone())
                .collect();
            *self = Self::default();
            for entry in kept {
                self.push(entry);
            }
            return true;
        }
        self.tail.truncate(len - self.disk_len);
        let tail = std::mem::take(&mut self.tail);
        self.tail_ids.clear();
        self.shadowed = false;
        for entry in tail {
            self.push(entry);
        }
        true
    }

    /// Whether the session file still holds the entries the mirror reads
    /// from it: every entry read back so far was the one indexed, and the
    /// last of them is still, byte for byte, the line that was indexed. Pi only appends to its file; a file edited,
    /// cut or rewritten under the mirror fails, and the mirror is rebuilt.
    pub(crate) fn check(&self) -> Result<(), String> {
        let Some(disk) = &self.disk else {
            return Ok(());
        };
        if self.stale.get() || disk.id_changed() {
            return Err("the session file changed under the mirror".to_owned());
        }
        if let Some(last) = self.disk_len.checked_sub(1)
            && (self.last_line.is_none() || disk.line_now(last).ok() != self.last_line)
        {
            self.stale.set(true);
            return Err("the session file changed under the mirror".to_owned());
        }
        disk.check().map_err(|error| error.to_string())
    }
}
