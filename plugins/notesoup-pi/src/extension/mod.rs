//! The notesoup extension for Pi: tools, commands, boots, the budget and the
//! reset lifecycle wired to Pi's events.
//!
//! [`Notesoup`] implements [`PiExtension`]. Its runtime state only schedules
//! work (the reducer's phases, staged budget drafts, notices waiting for a
//! verified commit); the session branch stays the source of truth, so a
//! reload or a branch switch never duplicates or inherits window state.
//!
//! Registration order: the context runtime and budget (`get_context_remaining`,
//! `wipe_memory`), then the history tools, then the notes tools.

mod boot;
mod budget;
mod commands;
mod context;
mod lifecycle;
mod texts;
mod tools;

use notesoup_core::sync::NotesSync;
use std::path::{Path, PathBuf};

use notesoup_core::boot::ToolBindings;
use notesoup_core::notes::{NoteStore, NotesIdentity, project_key};
use notesoup_core::plumbing::{BootCaches, NotesOwner};
use notesoup_core::settings::WarnOnce;

use crate::host::{
    AgentSettledEvent, BoundaryResult, BoundaryState, CommandDescriptor, HostError, MessageSummary,
    ModelSelectEvent, PiApiLevel, PiExtension, PiHost, SessionBeforeCompactEvent,
    SessionBeforeCompactResult, SessionBeforeTreeEvent, SessionBeforeTreeResult,
    SessionShutdownEvent, SessionStartEvent, SessionTreeEvent, ToolDescriptor, ToolInvocation,
    TurnEndEvent, TurnStartEvent, WindowEdit,
};
use crate::reset::{Kind, ResetControl, ResetEffect, ResetEvent, reduce, settle_matters};
use crate::session::AgentMessage;

pub use texts::requires_boundary_api;

/// The package version `/notesoup` reports.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Where notes live and who writes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotesoupConfig {
    /// The notes root (`PI_NOTES_HOME`, else `~/.agents/notes`).
    pub notes_home: PathBuf,
    /// The agent slug (`PI_NOTES_AGENT`, default `anonymous`).
    pub agent: String,
}

impl NotesoupConfig {
    /// The configuration from an environment lookup; `None` when no notes
    /// root can be found (no `PI_NOTES_HOME` and no home directory).
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> Option<Self> {
        Some(Self {
            notes_home: NotesIdentity::default_root(&env)?,
            agent: NotesIdentity::agent_slug(&env),
        })
    }
}

/// The extension refuses a host without the boundary API.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct VersionError {
    message: String,
}

impl VersionError {
    /// A stable code for the refusal.
    pub fn code(&self) -> &'static str {
        "host_too_old"
    }
}

/// A budget draft staged for persistence at `turn_end`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Staged {
    window_id: String,
    kind: Kind,
    text: String,
}

/// notesoup as a Pi extension.
pub struct Notesoup {
    config: NotesoupConfig,
    bindings: ToolBindings,
    enabled: bool,
    control: ResetControl,
    staged: Vec<Staged>,
    /// Windows whose reset was proposed; announced once verified.
    pending_resets: Vec<String>,
    /// The window whose warning was proposed; announced once durable.
    pending_warning: Option<String>,
    /// Windows whose unreadable-home notice was shown.
    boot_notices: Vec<String>,
    /// Windows whose missing-boot notice was shown.
    missing_boot_notices: Vec<String>,
    settings_warnings: WarnOnce,
    /// The context tokens from which a completed turn reaches the warning
    /// line, as of the newest `context` (see [`PiExtension::turn_end_at`]);
    /// `None` before the first one or without a model.
    turn_end_at: Option<u64>,
    /// `(cwd, project key)` of the last lookup.
    project: Option<(PathBuf, String)>,
    /// The boot caches: note heads kept between listings for the life of
    /// the extension, and, with a cache directory
    /// ([`Self::with_boot_caches`]), the boot shelves and heads saved
    /// between processes.
    caches: BootCaches,
    random_hex8: Box<dyn FnMut() -> String + Send>,
}

impl std::fmt::Debug for Notesoup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notesoup")
            .field("config", &self.config)
            .field("enabled", &self.enabled)
            .field("control", &self.control)
            .field("staged", &self.staged)
            .finish_non_exhaustive()
    }
}

impl Notesoup {
    /// Sync of the notes root, for its `auto` syncs (its set-up says
    /// whether), by the running binary (`notesoup-pi`).
    pub(crate) fn notes_sync(&self) -> NotesSync {
        NotesSync::open(&self.config.notes_home)
    }

    /// The extension for a host at `level`. A host without the boundary API
    /// (Pi before 0.87) is refused: notesoup cannot reset there.
    pub fn new(config: NotesoupConfig, level: PiApiLevel) -> Result<Self, VersionError> {
        if !(level.has_boundary_events()
            && level.has_retain_none_compaction()
            && level.has_context_with_system())
        {
            return Err(VersionError {
                message: requires_boundary_api(&format!("{level:?}")),
            });
        }
        Ok(Self {
            config,
            bindings: ToolBindings::plain(),
            enabled: true,
            control: ResetControl::default(),
            staged: Vec::new(),
            pending_resets: Vec::new(),
            pending_warning: None,
            boot_notices: Vec::new(),
            missing_boot_notices: Vec::new(),
            settings_warnings: WarnOnce::new(),
            turn_end_at: None,
            project: None,
            caches: BootCaches::new(None),
            random_hex8: Box::new(crate::reset::window::random_hex8),
        })
    }

    /// Replaces the source of the 8 random hex digits of new window ids
    /// (deterministic demos and tests).
    pub fn with_window_ids(mut self, source: impl FnMut() -> String + Send + 'static) -> Self {
        self.random_hex8 = Box::new(source);
        self
    }

    /// Keeps the boot caches in `dir` (core's
    /// [`notesoup_core::plumbing::BootCaches::dir`]) between processes, so the
    /// first boot of a sidecar reads the shelves and note heads an earlier
    /// one saved instead of listing every note; a boot that listed saves
    /// them on a thread of its own, so the boot does not wait for the
    /// write. Without it they live as long as the extension.
    pub fn with_boot_caches(mut self, dir: Option<PathBuf>) -> Self {
        self.caches = BootCaches::new(dir).saving_in_background();
        self
    }

    /// Whether `/notesoup` is on.
    pub fn is_enabled(&self) -> bool {
        self.enabled
    }

    /// The reducer's state (for hosts that show it, and tests).
    pub fn control(&self) -> &ResetControl {
        &self.control
    }

    /// The configuration.
    pub fn config(&self) -> &NotesoupConfig {
        &self.config
    }

    fn apply(&mut self, event: ResetEvent) -> ResetEffect {
        let (next, effect) = reduce(&self.control, &event);
        self.control = next;
        effect
    }

    /// Whether anything transient is there for [`Self::clear_transient`]
    /// to drop (or, for pending notices, for `agent_settled` to announce).
    fn transient_pending(&self) -> bool {
        settle_matters(&self.control) || !self.staged.is_empty() || self.announcement_pending()
    }

    /// Drops everything transient: reducer state, staged drafts, pending
    /// notices. Durable markers stay authoritative.
    fn clear_transient(&mut self) {
        self.apply(ResetEvent::Clear);
        self.staged.clear();
        self.pending_resets.clear();
        self.pending_warning = None;
    }

    fn project_key(&mut self, cwd: &Path) -> String {
        match &self.project {
            Some((known, key)) if known == cwd => key.clone(),
            _ => {
                let key = project_key(cwd);
                self.project = Some((cwd.to_owned(), key.clone()));
                key
            }
        }
    }

    /// The notes store of this session and the current model.
    fn store(&mut self, host: &dyn PiHost) -> Result<NoteStore, String> {
        let project = self.project_key(host.cwd());
        let model = NotesIdentity::model_slug(host.model().as_ref().map(|m| m.id.as_str()));
        let secret_guard = resolved_settings(host).secret_guard;
        NotesOwner {
            root: &self.config.notes_home,
            session_id: Some(host.session_id()),
            project_key: &project,
            agent: &self.config.agent,
            model: &model,
        }
        .open()
        .map(|store| {
            store
                .with_secret_guard(secret_guard)
                .with_head_cache(self.caches.heads())
        })
        .map_err(|error| error.to_string())
    }
}

impl PiExtension for Notesoup {
    fn tools(&self) -> Vec<ToolDescriptor> {
        tools::descriptors()
    }

    fn commands(&self) -> Vec<CommandDescriptor> {
        commands::descriptors()
    }

    fn execute_tool(
        &mut self,
        host: &mut dyn PiHost,
        call: &ToolInvocation,
    ) -> crate::host::AgentToolResult {
        self.run_tool(host, call)
    }

    fn run_command(
        &mut self,
        host: &mut dyn PiHost,
        name: &str,
        args: &str,
    ) -> Result<(), HostError> {
        self.command(host, name, args)
    }

    fn session_start(&mut self, host: &mut dyn PiHost, _event: &SessionStartEvent) {
        self.clear_transient();
        self.boot_notices.clear();
        self.missing_boot_notices.clear();
        if self.enabled {
            self.policy(host);
            // `auto` sync: the boot pulls first, waiting at most autoWaitMs.
            if let Some(notice) = self.notes_sync().auto_boot().boot_notice() {
                host.notify(&notice, crate::host::NotifyLevel::Warning);
            }
            self.ensure_window_boot(host);
        }
    }

    fn session_tree(&mut self, host: &mut dyn PiHost, _event: &SessionTreeEvent) {
        // A reset proposed on the old branch is stale: no success notice.
        self.clear_transient();
        if self.enabled {
            self.ensure_window_boot(host);
        }
    }

    fn session_before_tree(
        &mut self,
        host: &mut dyn PiHost,
        event: &SessionBeforeTreeEvent,
    ) -> SessionBeforeTreeResult {
        self.before_tree(host, event)
    }

    fn session_before_compact(
        &mut self,
        host: &mut dyn PiHost,
        event: &SessionBeforeCompactEvent,
    ) -> SessionBeforeCompactResult {
        self.before_compact(host, event)
    }

    fn session_shutdown(&mut self, _host: &mut dyn PiHost, _event: &SessionShutdownEvent) {
        self.clear_transient();
        if self.enabled {
            self.notes_sync().auto_background();
        }
    }

    fn model_select(&mut self, _host: &mut dyn PiHost, _event: &ModelSelectEvent) {
        self.staged.clear();
        // The line was the old model's window less the warning line: every
        // turn's end is delivered until the next request sets it again.
        self.turn_end_at = None;
    }

    fn turn_start(&mut self, host: &mut dyn PiHost, _event: &TurnStartEvent) {
        self.announce_verified(host);
    }

    fn turn_end(&mut self, host: &mut dyn PiHost, event: &TurnEndEvent) -> BoundaryResult {
        self.on_turn_end(host, event)
    }

    fn agent_before_settle(
        &mut self,
        host: &mut dyn PiHost,
        state: &BoundaryState,
    ) -> BoundaryResult {
        self.on_before_settle(host, state)
    }

    /// `agent_before_settle` only while a close-out, a committed stop or an
    /// overflow recovery waits for settlement; `turn_end` while the reducer
    /// is not idle or a budget draft waits to be saved (a turn that may end
    /// in an overflow or at the reserve is told by its own messages, see
    /// [`PiExtension::turn_end_at`]); `turn_start` while a notice waits
    /// for a durable fact; `agent_settled` while it would announce or clear
    /// anything (`transient_pending`); every other event always.
    fn needs(&self, event: &str) -> bool {
        match event {
            "turn_start" => self.announcement_pending(),
            "agent_before_settle" => settle_matters(&self.control),
            "turn_end" => settle_matters(&self.control) || !self.staged.is_empty(),
            "agent_settled" => self.transient_pending(),
            _ => true,
        }
    }

    fn turn_end_at(&self) -> Option<u64> {
        self.turn_end_at
    }

    fn agent_settled(&mut self, host: &mut dyn PiHost, _event: &AgentSettledEvent) {
        self.announce_verified(host);
        // Uncommitted drafts never announce; transient state ends with the run.
        self.clear_transient();
    }

    fn context(&mut self, host: &mut dyn PiHost) -> Vec<AgentMessage> {
        self.stage_budget(host)
    }

    fn context_with_system(
        &mut self,
        host: &mut dyn PiHost,
        messages: &[MessageSummary],
    ) -> Option<WindowEdit> {
        self.project_window(host, messages)
    }
}

/// The merged `notesoup` settings (the project's only when it is trusted);
/// unreadable settings give the defaults (the budget reports the problem).
fn resolved_settings(host: &dyn PiHost) -> notesoup_core::settings::Settings {
    host.settings()
        .map(|settings| {
            let project = host.is_project_trusted().then_some(&settings.project);
            notesoup_core::settings::ResolvedSettings::resolve(
                Some(&settings.global),
                project,
                notesoup_core::settings::ProjectTrust::Trusted,
            )
            .settings
        })
        .unwrap_or_default()
}
