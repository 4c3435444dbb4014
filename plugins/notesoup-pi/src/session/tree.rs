//! The entry tree: ids, parents, the active branch (Pi's `getBranch` and
//! `buildSessionPath`) and labels.

use std::collections::HashMap;

use super::entry::Entry;

/// Where the leaf is. Pi's `leafId` is a string, `null` (before the first
/// entry, after `resetLeaf()`) or, in the standalone builders, `undefined`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leaf<'a> {
    /// `null`: nothing is selected; the path is empty.
    Null,
    /// A specific entry; an unknown id falls back to the last entry, like Pi.
    Id(&'a str),
    /// `undefined`: the last entry in file order (Pi's leaf after loading a file).
    Last,
}

/// An id index over entries in file order. Like Pi's `byId` map, a later
/// entry with a duplicate id replaces the earlier one.
#[derive(Debug, Clone)]
pub struct EntryIndex<'a> {
    entries: &'a [Entry],
    by_id: HashMap<&'a str, usize>,
}

impl<'a> EntryIndex<'a> {
    /// Indexes `entries` (file order, header excluded).
    pub fn new(entries: &'a [Entry]) -> Self {
        let mut by_id = HashMap::with_capacity(entries.len());
        for (position, entry) in entries.iter().enumerate() {
            by_id.insert(entry.id(), position);
        }
        Self { entries, by_id }
    }

    /// The entry with this id.
    pub fn get(&self, id: &str) -> Option<&'a Entry> {
        self.position(id).map(|position| &self.entries[position])
    }

    /// The file position of the entry with this id.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }

    /// Pi's default leaf after loading: the last entry in file order.
    pub fn last_id(&self) -> Option<&'a str> {
        self.entries.last().map(Entry::id)
    }

    /// `getBranch(fromId)`: the path from the root to `from`, root first;
    /// empty when `from` is unknown. All entry types are included.
    pub fn branch(&self, from: &str) -> Vec<&'a Entry> {
        match self.get(from) {
            Some(start) => self.walk_to_root(start),
            None => Vec::new(),
        }
    }

    /// `buildSessionPath(entries, leafId)`: like [`Self::branch`], with Pi's
    /// fallbacks: `Null` gives nothing, an unknown id or `Last` gives the
    /// path of the last entry in file order.
    pub fn path(&self, leaf: Leaf<'_>) -> Vec<&'a Entry> {
        let start = match leaf {
            Leaf::Null => return Vec::new(),
            Leaf::Id(id) => self.get(id).or_else(|| self.entries.last()),
            Leaf::Last => self.entries.last(),
        };
        start
            .map(|start| self.walk_to_root(start))
            .unwrap_or_default()
    }

    /// Follows `parentId` to the root. A cycle (which would hang Pi) ends the
    /// walk before the first repeated entry.
    fn walk_to_root(&self, start: &'a Entry) -> Vec<&'a Entry> {
        let mut visited = vec![false; self.entries.len()];
        let mut path = vec![start];
        if let Some(position) = self.position(start.id()) {
            visited[position] = true;
        }
        let mut current = start;
        while let Some(position) = current.parent_id().and_then(|id| self.position(id)) {
            if std::mem::replace(&mut visited[position], true) {
                break;
            }
            current = &self.entries[position];
            path.push(current);
        }
        path.reverse();
        path
    }

    /// The labels as Pi rebuilds them from `label` entries in file order: a
    /// label with no or empty text clears the target's label.
    pub fn labels(&self) -> HashMap<&'a str, &'a str> {
        let mut labels = HashMap::new();
        for entry in self.entries {
            if let Entry::Label(label) = entry {
                match label.label.as_deref() {
                    Some(text) if !text.is_empty() => {
                        labels.insert(label.target_id.as_str(), text);
                    }
                    _ => {
                        labels.remove(label.target_id.as_str());
                    }
                }
            }
        }
        labels
    }

    /// `getSessionName()`: the latest `session_info` name, trimmed; an empty
    /// name clears it.
    pub fn session_name(&self) -> Option<&'a str> {
        self.entries.iter().rev().find_map(|entry| match entry {
            Entry::SessionInfo(info) => Some(
                info.name
                    .as_deref()
                    .map(str::trim)
                    .filter(|name| !name.is_empty()),
            ),
            _ => None,
        })?
    }
}
