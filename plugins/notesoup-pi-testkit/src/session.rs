//! A port of Pi's `SessionManager` (1.6.0): the v3 JSONL file, 8-hex entry
//! ids, `parentId` chains, the leaf, and Pi's lazy flush: nothing is written
//! until the session holds a user or assistant message; then the header and
//! every buffered entry are written at once, and one line is appended per
//! entry after that.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::clock::{Clock, IdSource, iso};
use notesoup_pi::estimate::coding_agent::estimate_projected_context_tokens;
use notesoup_pi::host::SessionBoundaryDraft;
use notesoup_pi::projection::{Projection, current_system_message, project_path};
use notesoup_pi::session::{
    AgentMessage, BranchSummaryEntry, CURRENT_SESSION_VERSION, CompactionEntry, Content,
    ContextEditEntry, ContextReplacement, CustomEntry, CustomMessageEntry, Entry, EntryIndex,
    Extra, MessageEntry, SessionError, SessionFile, SessionHeader, Usage, append_entry,
};

/// A session: header, entries in append order, the leaf, and its file.
#[derive(Debug, Clone)]
pub struct SessionManager {
    header: SessionHeader,
    entries: Vec<Entry>,
    leaf: Option<String>,
    file: Option<PathBuf>,
    flushed: bool,
    clock: Clock,
    ids: IdSource,
}

impl SessionManager {
    /// A new session whose file will be
    /// `<dir>/<fileTimestamp>_<sessionId>.jsonl` (written lazily).
    pub fn create(
        dir: &Path,
        cwd: &Path,
        session_id: &str,
        mut clock: Clock,
        ids: IdSource,
    ) -> Self {
        let timestamp = iso(clock.now_ms());
        let file_stamp = timestamp.replace([':', '.'], "-");
        let file = dir.join(format!("{file_stamp}_{session_id}.jsonl"));
        let mut manager = Self::in_memory(cwd, session_id, &timestamp, clock, ids);
        manager.file = Some(file);
        manager
    }

    /// A session that is never written.
    pub fn in_memory(
        cwd: &Path,
        session_id: &str,
        timestamp: &str,
        clock: Clock,
        ids: IdSource,
    ) -> Self {
        Self {
            header: SessionHeader {
                version: Some(CURRENT_SESSION_VERSION),
                id: session_id.to_owned(),
                timestamp: Some(timestamp.to_owned()),
                cwd: Some(cwd.to_string_lossy().into_owned()),
                parent_session: None,
                extra: Extra::new(),
            },
            entries: Vec::new(),
            leaf: None,
            file: None,
            flushed: false,
            clock,
            ids,
        }
    }

    /// Opens a session file as Pi does: irregular lines are skipped (and
    /// kept on disk), the leaf is the last entry. A file whose first parsed
    /// line is not a session header is refused, like Pi 1.6.0.
    pub fn open(path: &Path, clock: Clock, ids: IdSource) -> Result<Self, SessionError> {
        let file = SessionFile::read(path)?;
        let header = match file.header() {
            Some(header) if file.is_loadable_by_pi() => header.clone(),
            _ => {
                return Err(SessionError::NotLoadable {
                    path: path.to_owned(),
                });
            }
        };
        let entries = file.entries().to_vec();
        Ok(Self {
            header,
            leaf: entries.last().map(|entry| entry.id().to_owned()),
            entries,
            file: Some(path.to_owned()),
            flushed: true,
            clock,
            ids,
        })
    }

    /// The header.
    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// The session id.
    pub fn session_id(&self) -> &str {
        &self.header.id
    }

    /// Every entry in append order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The leaf.
    pub fn leaf_id(&self) -> Option<&str> {
        self.leaf.as_deref()
    }

    /// The session file (written or not yet).
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// Whether the file has been written.
    pub fn is_flushed(&self) -> bool {
        self.flushed
    }

    /// The branch from the root to the leaf.
    pub fn branch(&self) -> Vec<&Entry> {
        match &self.leaf {
            Some(leaf) => EntryIndex::new(&self.entries).branch(leaf),
            None => Vec::new(),
        }
    }

    /// `buildSessionProjection()` at the leaf.
    pub fn projection(&self) -> Projection<'_> {
        project_path(&self.branch())
    }

    /// The current time in ms.
    pub fn now_ms(&mut self) -> i64 {
        self.clock.now_ms()
    }

    /// Moves the leaf (`branch(id)`; `None` is `resetLeaf()`). Nothing is
    /// written.
    pub fn set_leaf(&mut self, leaf: Option<&str>) {
        self.leaf = leaf.map(str::to_owned);
    }

    fn new_id(&mut self) -> String {
        // Pi retries 100 times, then falls back to a whole UUID.
        for _ in 0..100 {
            let id = self.ids.next_id();
            if !self.entries.iter().any(|entry| entry.id() == id) {
                return id;
            }
        }
        uuid::Uuid::new_v4().to_string()
    }

    /// Base fields of a new entry: id, parent, ISO time and its ms.
    fn base(&mut self) -> (String, Option<String>, String, i64) {
        let ms = self.clock.now_ms();
        (self.new_id(), self.leaf.clone(), iso(ms), ms)
    }

    fn append(&mut self, entry: Entry) -> Result<String, SessionError> {
        let id = entry.id().to_owned();
        self.entries.push(entry);
        self.leaf = Some(id.clone());
        self.persist()?;
        Ok(id)
    }

    fn persist(&mut self) -> Result<(), SessionError> {
        let Some(path) = self.file.clone() else {
            return Ok(());
        };
        if self.flushed {
            return match self.entries.last() {
                Some(entry) => append_entry(&path, entry),
                None => Ok(()),
            };
        }
        let has_conversation = self.entries.iter().any(|entry| {
            matches!(
                entry.message(),
                Some(AgentMessage::User(_) | AgentMessage::Assistant(_))
            )
        });
        if !has_conversation {
            return Ok(());
        }
        let mut file = SessionFile::new(self.header.clone());
        for entry in &self.entries {
            file.push(entry.clone());
        }
        file.write_to(&path)?;
        self.flushed = true;
        Ok(())
    }

    /// `appendMessage(message)`.
    pub fn append_message(&mut self, message: AgentMessage) -> Result<String, SessionError> {
        let (id, parent_id, timestamp, _) = self.base();
        self.append(Entry::Message(MessageEntry {
            id,
            parent_id,
            timestamp,
            message,
            extra: Extra::new(),
        }))
    }

    /// `appendCustomEntry(customType, data)`.
    pub fn append_custom(
        &mut self,
        custom_type: &str,
        data: Option<Value>,
    ) -> Result<String, SessionError> {
        let (id, parent_id, timestamp, _) = self.base();
        self.append(Entry::Custom(CustomEntry {
            custom_type: custom_type.to_owned(),
            data,
            id,
            parent_id,
            timestamp,
            extra: Extra::new(),
        }))
    }

    /// `appendCustomMessageEntry(customType, content, display, details)`.
    pub fn append_custom_message(
        &mut self,
        custom_type: &str,
        content: Content,
        display: bool,
        details: Option<Value>,
    ) -> Result<String, SessionError> {
        let (id, parent_id, timestamp, _) = self.base();
        self.append(Entry::CustomMessage(CustomMessageEntry {
            custom_type: custom_type.to_owned(),
            content: Some(content),
            display,
            details,
            id,
            parent_id,
            timestamp,
            extra: Extra::new(),
        }))
    }

    /// `branchWithSummary`'s entry: a `branch_summary` under the leaf,
    /// `fromId` naming the abandoned leaf (or `"root"`).
    pub fn append_branch_summary(
        &mut self,
        from_id: &str,
        summary: &str,
    ) -> Result<String, SessionError> {
        let (id, parent_id, timestamp, _) = self.base();
        self.append(Entry::BranchSummary(BranchSummaryEntry {
            id,
            parent_id,
            timestamp,
            from_id: from_id.to_owned(),
            summary: summary.to_owned(),
            details: None,
            usage: None,
            from_hook: None,
            extra: Extra::new(),
        }))
    }

    /// `appendContextEdit(targetId, replacement)`.
    pub fn append_context_edit(
        &mut self,
        target_id: &str,
        replacement: Option<ContextReplacement>,
    ) -> Result<String, SessionError> {
        let (id, parent_id, timestamp, _) = self.base();
        self.append(Entry::ContextEdit(ContextEditEntry {
            id,
            parent_id,
            timestamp,
            target_id: target_id.to_owned(),
            replacement,
            extra: Extra::new(),
        }))
    }

    /// `appendCompaction(summary, firstKeptEntryId, tokensBefore, details,
    /// fromHook, usage)`: `None` keeps nothing (the entry's own id is
    /// stored); the replayed system message of the projection at append time
    /// is stored with the compaction's time.
    pub fn append_compaction(
        &mut self,
        summary: &str,
        first_kept_entry_id: Option<&str>,
        tokens_before: u64,
        details: Option<Value>,
        from_hook: Option<bool>,
        usage: Option<Usage>,
    ) -> Result<String, SessionError> {
        let system = current_system_message(self.projection().message_refs());
        let (id, parent_id, timestamp, ms) = self.base();
        let system_message = system.map(|mut system| {
            system.timestamp = ms;
            system
        });
        self.append(Entry::Compaction(CompactionEntry {
            first_kept_entry_id: first_kept_entry_id.map_or_else(|| id.clone(), str::to_owned),
            id,
            parent_id,
            timestamp,
            summary: summary.to_owned(),
            tokens_before,
            details,
            usage,
            from_hook,
            system_message,
            extra: Extra::new(),
        }))
    }

    /// `_applyBoundaryDrafts`: each draft appended in order; a compaction
    /// gets `fromHook: true` and Pi's own `tokensBefore` estimate.
    pub fn apply_drafts(&mut self, drafts: &[SessionBoundaryDraft]) -> Result<(), SessionError> {
        for draft in drafts {
            match draft {
                SessionBoundaryDraft::Custom { custom_type, data } => {
                    self.append_custom(custom_type, data.clone())?;
                }
                SessionBoundaryDraft::CustomMessage {
                    custom_type,
                    content,
                    display,
                    details,
                } => {
                    self.append_custom_message(
                        custom_type,
                        content.clone(),
                        *display,
                        details.clone(),
                    )?;
                }
                SessionBoundaryDraft::ContextEdit {
                    target_id,
                    replacement,
                } => {
                    self.append_context_edit(target_id, replacement.clone())?;
                }
                SessionBoundaryDraft::Compaction {
                    summary,
                    first_kept_entry_id,
                    details,
                    usage,
                } => {
                    let tokens_before = self.projected_tokens();
                    self.append_compaction(
                        summary,
                        first_kept_entry_id.as_deref(),
                        tokens_before,
                        details.clone(),
                        Some(true),
                        usage.as_deref().cloned(),
                    )?;
                }
            }
        }
        Ok(())
    }

    /// Pi's `tokensBefore` of a boundary compaction draft:
    /// `estimateProjectedContextTokens(projection, branch).tokens`.
    pub fn projected_tokens(&self) -> u64 {
        let branch = self.branch();
        estimate_projected_context_tokens(&project_path(&branch), &branch).tokens
    }

    /// A copy holding only the current branch, never written (Pi's boundary
    /// preview manager).
    pub fn preview(&self) -> Self {
        Self {
            header: self.header.clone(),
            entries: self.branch().into_iter().cloned().collect(),
            leaf: self.leaf.clone(),
            file: None,
            flushed: false,
            clock: self.clock.clone(),
            ids: self.ids.clone(),
        }
    }
}
