//! `notesoup hook <event>`: Claude Code hook handlers.
//!
//! Every handler exits 0. What it says goes out as one JSON object (or
//! nothing); a failure is reported to the user as a `systemMessage`, never
//! swallowed and never a crash. Hooks fired from subagents are ignored.

pub mod io;
pub mod reset;

use notesoup_core::sync::{AutoSync, NotesSync};
use std::cell::RefCell;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use notesoup_core::budget::BudgetPolicy;
use notesoup_core::notes::project_key;

use self::io::{Event, HookInput, HookOutput};
use crate::boot::{self, BOOT_FAILED};
use crate::budget::{Budget, BudgetNotice, notice_due};
use crate::env::HostEnv;
use crate::files;
use crate::names::bindings;
use crate::state::{
    ChainLink, ClaudeSessionState, HandOff, Origin, StateDir, StateError, WindowFlags,
};
use crate::transcript::fnv::Fnv;
use crate::transcript::scan::{BootScan, KeptScan, boot_scan_kept, last_reply, reply_written};
use crate::window::WindowId;

/// The largest kept scan file read (a real one is a few hundred bytes).
const KEPT_SCAN_MAX_BYTES: usize = 64 * 1024;
/// How long a Stop hook waits for the reply that just ended to reach the
/// transcript (Claude Code writes it asynchronously; on a loaded machine it
/// can land after the hook starts).
const REPLY_WAIT: Duration = Duration::from_secs(2);

/// Shown once the close-out after a warning is done.
pub const CLOSE_OUT_DONE: &str =
    "notesoup: close-out done. Run /clear for a fresh window; it boots from your notes.";

/// Shown at every Stop while the window is at the hard reserve.
pub fn hard_reserve_notice(remaining: u64) -> String {
    format!(
        "notesoup: context almost full ({remaining} tokens left). Run /clear for a fresh window; it boots from your notes."
    )
}

/// Runs the handler of `event` on the hook's stdin.
pub fn run(event: Event, stdin: &[u8], env: &HostEnv) -> HookOutput {
    if env.disabled {
        return HookOutput::default();
    }
    let input: HookInput = match serde_json::from_slice(stdin) {
        Ok(input) => input,
        Err(err) => return HookOutput::notice(format!("notesoup: unreadable hook input: {err}")),
    };
    if input.agent_id.is_some() {
        return HookOutput::default();
    }
    match Session::open(env, &input) {
        Ok(session) => {
            let output = match event {
                Event::SessionStart => session.start(),
                Event::UserPromptSubmit => {
                    match input.prompt.as_deref().and_then(fresh_window_args) {
                        Some(prompt) => session.fresh_window(prompt),
                        None => session.budget_notice(event),
                    }
                }
                Event::PostToolBatch => session.budget_notice(event),
                Event::Stop => session.stop(),
                Event::SessionEnd => session.end(),
            };
            session
                .warnings
                .into_inner()
                .iter()
                .fold(output, |output, warning| output.with_notice(warning))
        }
        Err(message) => HookOutput::notice(format!("notesoup: {message}")),
    }
}

/// One hook run: the input, where its records live, and the session's
/// transcript and project.
struct Session<'a> {
    env: &'a HostEnv,
    input: &'a HookInput,
    states: StateDir,
    transcript: PathBuf,
    cwd: PathBuf,
    /// Records that were not read (not a regular file, or too large), each
    /// told once at the end of the run; the run goes on without them.
    warnings: RefCell<Vec<String>>,
}

impl<'a> Session<'a> {
    fn open(env: &'a HostEnv, input: &'a HookInput) -> Result<Self, String> {
        if input.session_id.is_empty() {
            return Err("hook input has no session_id".into());
        }
        let data = env
            .data_dir()
            .ok_or("CLAUDE_PLUGIN_DATA is not set; notesoup cannot keep its session records")?;
        let cwd = input
            .cwd
            .clone()
            .or_else(|| env.project_dir.clone())
            .ok_or("hook input has no cwd")?;
        let transcript = match &input.transcript_path {
            Some(path) => path.clone(),
            None => env
                .transcripts_dir(&cwd)
                .ok_or("hook input has no transcript_path")?
                .join(format!("{}.jsonl", input.session_id)),
        };
        Ok(Self {
            env,
            input,
            states: StateDir::new(data),
            transcript,
            cwd,
            warnings: RefCell::new(Vec::new()),
        })
    }

    /// Tells, once, that `record` was refused and what is done instead.
    fn warn_refused(&self, record: &StateError, instead: &str) {
        let warning = format!("notesoup: {record}; {instead}.");
        let mut warnings = self.warnings.borrow_mut();
        if !warnings.contains(&warning) {
            warnings.push(warning);
        }
    }

    fn session_id(&self) -> &str {
        &self.input.session_id
    }

    /// A state for a session that starts a new `/clear` chain.
    fn new_chain(&self) -> ClaudeSessionState {
        ClaudeSessionState::new_chain(
            self.session_id(),
            self.transcript.clone(),
            self.cwd.clone(),
            project_key(&self.cwd),
        )
    }

    /// The session's state, or one recovered from its transcript when the
    /// record is missing (plugin data wiped, plugin enabled mid-session, a
    /// fork). `true` when recovered.
    fn load_or_recover(&self) -> Result<(ClaudeSessionState, bool), String> {
        match self.load()? {
            Some(state) => Ok((state, false)),
            None => Ok((self.recover(&self.scan()?), true)),
        }
    }

    /// The session's record; a record that is not notesoup's JSON (torn by
    /// hand, an older format) counts as missing and is rebuilt.
    fn load(&self) -> Result<Option<ClaudeSessionState>, String> {
        match self.states.load(self.session_id()) {
            Ok(state) => Ok(state),
            Err(StateError::Malformed { .. }) => Ok(None),
            Err(refused @ StateError::Refused(_)) => {
                self.warn_refused(&refused, "the session's record is rebuilt");
                Ok(None)
            }
            Err(err) => Err(err.to_string()),
        }
    }

    /// The transcript's boot scan, reading only what was appended since the
    /// scan an earlier hook kept for it (see [`KeptScan`]); the new scan is
    /// kept in turn. A kept scan is a cache: one missing, damaged or not
    /// saved only makes the next scan read the whole file.
    fn scan(&self) -> Result<BootScan, String> {
        let file = self.kept_scan_file();
        let kept = files::read_record(&file)
            .ok()
            .flatten()
            .filter(|bytes| bytes.len() <= KEPT_SCAN_MAX_BYTES)
            .and_then(|bytes| serde_json::from_slice::<KeptScan>(&bytes).ok());
        let (scan, next) =
            boot_scan_kept(&self.transcript, kept.as_ref()).map_err(|e| e.to_string())?;
        if let Some(next) = next.filter(|next| Some(next) != kept.as_ref())
            && let Ok(bytes) = serde_json::to_vec(&next)
        {
            let _ = files::write_atomic(&file, &bytes);
        }
        Ok(scan)
    }

    /// Where the scan of this hook's transcript is kept: one file per
    /// transcript path (FNV-1a of the path), in the caches' directory.
    fn kept_scan_file(&self) -> PathBuf {
        let hash = Fnv::of(self.transcript.as_os_str().as_encoded_bytes());
        let cache = self.env.cache_dir();
        files::private_dir(cache.as_deref());
        cache
            .unwrap_or_else(|| self.states.root().to_path_buf())
            .join("transcript-scans")
            .join(format!("{hash:016x}.json"))
    }

    /// A state rebuilt from the transcript: the newest notesoup boot names
    /// the chain's root and the window, and every compaction after it opened
    /// one more window.
    fn recover(&self, scan: &BootScan) -> ClaudeSessionState {
        let mut state = self.new_chain();
        if let Some(ids) = &scan.last_boot {
            state.notes_session_id = ids.root.session_id.clone();
            state.window_ordinal = ids.current.ordinal;
        }
        state.window_ordinal += scan.boundaries_after;
        if scan.boundaries_after > 0 {
            state.previous_window_id =
                Some(WindowId::new(self.session_id(), state.window_ordinal - 1).to_string());
        }
        state.window.boot_injected = scan.in_live_window;
        state
    }

    /// Records `state`; a failure becomes a user notice on `output`.
    fn save(&self, state: &ClaudeSessionState, output: HookOutput) -> HookOutput {
        match self.states.save(state) {
            Ok(()) => output,
            Err(err) => {
                output.with_notice(&format!("notesoup: could not record the session: {err}"))
            }
        }
    }

    /// SessionStart: the boot, once per window.
    fn start(&self) -> HookOutput {
        let (mut state, continued) = match self.window_to_boot() {
            Ok(found) => found,
            Err(message) => {
                return HookOutput::context(Event::SessionStart, boot::fallback(&message))
                    .with_notice(BOOT_FAILED);
            }
        };
        if state.window.boot_injected {
            return self.save(&state, HookOutput::default());
        }
        state.window.boot_injected = true;
        let pulled = self
            .notes_sync()
            .map_or(AutoSync::Off, |sync| sync.auto_boot());
        let output = match boot::render_with_warnings(self.env, &state) {
            Ok((mut text, warnings)) => {
                if continued {
                    text.push_str("\n\n");
                    text.push_str(&bindings().continuation_text());
                    if let Some(prompt) = state.next_window_prompt.take() {
                        text.push_str(&fresh_window_prompt(&prompt));
                    }
                }
                let mut output = HookOutput::context(Event::SessionStart, text);
                for warning in warnings {
                    output = output.with_notice(&warning);
                }
                if let Some(notice) = pulled.boot_notice() {
                    output = output.with_notice(&notice);
                }
                output
            }
            Err(error) => HookOutput::context(Event::SessionStart, boot::fallback(&error))
                .with_notice(BOOT_FAILED),
        };
        self.save(&state, output)
    }

    /// The window a SessionStart opens (or finds), and whether it continues
    /// a chain after `/clear` (then the continuation follows the boot).
    fn window_to_boot(&self) -> Result<(ClaudeSessionState, bool), String> {
        let loaded = || self.load();
        match self.input.source.as_deref().unwrap_or("startup") {
            "compact" => {
                let state = match loaded()? {
                    // The reset mod's own compaction: it already placed the
                    // boot of the window it opened.
                    Some(mut state) if state.window.boot_by_mod => {
                        state.window.boot_by_mod = false;
                        state
                    }
                    Some(mut state) => {
                        state.open_next_window();
                        state
                    }
                    None => {
                        // The boundary row may not be on disk yet.
                        let scan = self.scan()?;
                        let mut state = self.recover(&scan);
                        if scan.boundaries_after == 0 {
                            state.open_next_window();
                        }
                        state.window = WindowFlags::default();
                        state
                    }
                };
                Ok((state, false))
            }
            "clear" => match loaded()? {
                // The window this session opened already has its boot.
                Some(state) if state.window.boot_injected => Ok((state, false)),
                _ => self.take_hand_off(),
            },
            "resume" | "fork" => {
                // Resume replays old attachments: a boot after the last
                // boundary means the live window already has one.
                let scan = self.scan()?;
                let mut state = match loaded()? {
                    Some(state) => state,
                    None => self.recover(&scan),
                };
                // Compactions notesoup did not see (it was off) opened
                // windows after the recorded one.
                if let Some(ids) = &scan.last_boot
                    && ids.current == state.window_id()
                {
                    for _ in 0..scan.boundaries_after {
                        state.open_next_window();
                    }
                }
                state.window.boot_injected = scan.in_live_window;
                Ok((state, false))
            }
            // startup, and any source a later Claude Code adds.
            _ => Ok((loaded()?.unwrap_or_else(|| self.new_chain()), false)),
        }
    }

    /// SessionStart(clear): the chain continues from the hand-off marker, or
    /// a new chain starts without one. `true` when it continued.
    fn take_hand_off(&self) -> Result<(ClaudeSessionState, bool), String> {
        let key = project_key(&self.cwd);
        let hand_off = match self.states.take_hand_off(&key) {
            Ok(hand_off) => hand_off,
            Err(refused @ StateError::Refused(_)) => {
                self.warn_refused(&refused, "a new chain starts");
                None
            }
            Err(err) => return Err(err.to_string()),
        };
        let Some(hand_off) = hand_off else {
            return Ok((self.new_chain(), false));
        };
        let mut chain = self
            .states
            .load(&hand_off.previous_session_id)
            .ok()
            .flatten()
            .map(|previous| previous.chain)
            .unwrap_or_default();
        chain.push(ChainLink {
            session_id: hand_off.previous_session_id,
            transcript_path: hand_off.previous_transcript_path,
        });
        let mut state = self.new_chain();
        state.project_key = key;
        state.notes_session_id = hand_off.notes_session_id;
        state.window_ordinal = hand_off.ordinal + 1;
        state.previous_window_id = Some(hand_off.window_id);
        state.chain = chain;
        state.next_window_prompt = hand_off.prompt;
        Ok((state, true))
    }

    /// The live window's budget, from the transcript's last usage; `None`
    /// before the first reply of the window.
    fn budget(&self) -> Result<Option<Budget>, String> {
        let reply = last_reply(&self.transcript).map_err(|e| e.to_string())?;
        Ok(reply.map(|reply| Budget::measure(&reply, &self.env.budget)))
    }

    /// UserPromptSubmit and PostToolBatch: the reminder, then the warning,
    /// each once per window.
    fn budget_notice(&self, event: Event) -> HookOutput {
        let run = || -> Result<HookOutput, String> {
            let (mut state, recovered) = self.load_or_recover()?;
            let changed = recovered | settle_mod_boot(&mut state);
            let Some(budget) = self.budget()? else {
                return Ok(if changed {
                    self.save(&state, HookOutput::default())
                } else {
                    HookOutput::default()
                });
            };
            let text = match notice_due(&budget, &state.window) {
                None if !changed => return Ok(HookOutput::default()),
                None => return Ok(self.save(&state, HookOutput::default())),
                Some(BudgetNotice::Reminder(countdown)) => {
                    state.window.reminder_shown = true;
                    BudgetPolicy::reminder_text(countdown, &bindings())
                }
                Some(BudgetNotice::Warning) => {
                    state.window.warning_shown = true;
                    BudgetPolicy::warning_text(&bindings())
                }
            };
            Ok(self.save(&state, HookOutput::context(event, text)))
        };
        run().unwrap_or_else(|message| HookOutput::notice(format!("notesoup: {message}")))
    }

    /// Stop: close-out done after a delivered warning (its notes pushed in
    /// the background when `auto` sync is on); otherwise one block with the
    /// close-out text when the warning line was crossed unseen; and the
    /// hard-reserve notice.
    fn stop(&self) -> HookOutput {
        let run = || -> Result<HookOutput, String> {
            self.await_reply();
            let (mut state, _) = self.load_or_recover()?;
            let settled = settle_mod_boot(&mut state);
            let budget = self.budget()?;
            let hard = budget
                .filter(|b| b.remaining <= b.policy.reserve_line())
                .map(|b| hard_reserve_notice(b.remaining));
            let output = if state.window.warning_shown && !state.window.close_out_done {
                state.window.close_out_done = true;
                // The close-out's notes go out in the background (`auto`).
                if let Some(sync) = self.notes_sync() {
                    sync.auto_background();
                }
                HookOutput::notice(CLOSE_OUT_DONE)
            } else if let Some(budget) = budget
                && budget.remaining <= budget.policy.warning_line()
                && !state.window.warning_shown
                && !self.input.stop_hook_active
            {
                state.window.warning_shown = true;
                HookOutput::block(BudgetPolicy::warning_text(&bindings()))
            } else {
                let output = hard.map(HookOutput::notice).unwrap_or_default();
                return Ok(if settled {
                    self.save(&state, output)
                } else {
                    output
                });
            };
            let output = match hard {
                Some(hard) => output.with_notice(&hard),
                None => output,
            };
            Ok(self.save(&state, output))
        };
        run().unwrap_or_else(|message| HookOutput::notice(format!("notesoup: {message}")))
    }

    /// Waits, at most [`REPLY_WAIT`], for the reply that just ended to be
    /// in the transcript: Claude Code writes it after the Stop hook may
    /// start, and the budget is that reply's usage. Without the message
    /// (or once the wait is over) the transcript is read as it is.
    fn await_reply(&self) {
        let Some(reply) = self.input.last_assistant_message.as_deref() else {
            return;
        };
        let deadline = Instant::now() + REPLY_WAIT;
        while !reply_written(&self.transcript, reply).unwrap_or(true) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `/fresh-window [prompt]`: arms the close-out (the skill the command
    /// runs has the model write it; the next Stop records it, then `/clear`
    /// or the reset mod opens the next window) and keeps the prompt for
    /// that window.
    fn fresh_window(&self, prompt: &str) -> HookOutput {
        let run = || -> Result<HookOutput, String> {
            let (mut state, _) = self.load_or_recover()?;
            settle_mod_boot(&mut state);
            state.window.warning_shown = true;
            state.window.close_out_done = false;
            state.next_window_prompt = (!prompt.is_empty()).then(|| prompt.to_owned());
            Ok(self.save(&state, HookOutput::default()))
        };
        run().unwrap_or_else(|message| HookOutput::notice(format!("notesoup: {message}")))
    }

    /// Sync of the notes root, for its `auto` syncs (its set-up says
    /// whether), by this very binary.
    fn notes_sync(&self) -> Option<NotesSync> {
        self.env.notes_root.as_deref().map(NotesSync::open)
    }

    /// SessionEnd: the notes pushed in the background (when `auto` sync
    /// is on) and, for `clear`, the hand-off marker for the next session;
    /// nothing else (SessionEnd runs under a short timeout).
    fn end(&self) -> HookOutput {
        // The session is over: its notes go out in the background.
        if let Some(sync) = self.notes_sync() {
            sync.auto_background();
        }
        if self.input.reason.as_deref() != Some("clear") {
            return HookOutput::default();
        }
        let state = match self.states.load(self.session_id()) {
            Ok(Some(state)) => state,
            Ok(None) => self.new_chain(),
            Err(refused @ StateError::Refused(_)) => {
                self.warn_refused(&refused, "the hand-off starts a new chain");
                self.new_chain()
            }
            Err(err) => return HookOutput::notice(format!("notesoup: {err}")),
        };
        let hand_off = HandOff {
            notes_session_id: state.notes_session_id.clone(),
            previous_session_id: state.session_id.clone(),
            previous_transcript_path: state.transcript_path.clone(),
            root_window_id: state.root_window().to_string(),
            window_id: state.window_id().to_string(),
            ordinal: state.window_ordinal,
            origin: Origin::Normal,
            created_at: notesoup_core::notes::now_local_iso(),
            prompt: state.next_window_prompt.clone(),
        };
        match self.states.put_hand_off(&state.project_key, &hand_off) {
            Ok(()) => HookOutput::default(),
            Err(err) => HookOutput::notice(format!(
                "notesoup: could not hand the session over to the next window: {err}"
            )),
        }
    }
}

/// The names `/fresh-window` is typed as: the plugin's skill, bare or with
/// the plugin's namespace.
const FRESH_WINDOW_COMMANDS: [&str; 2] = ["/fresh-window", "/notesoup:fresh-window"];

/// The arguments of a `/fresh-window` prompt (possibly empty), or `None`
/// for any other prompt. The arguments are kept as typed, after the one
/// separating run of whitespace.
pub fn fresh_window_args(prompt: &str) -> Option<&str> {
    let prompt = prompt.trim_start();
    FRESH_WINDOW_COMMANDS.iter().find_map(|command| {
        let rest = prompt.strip_prefix(command)?;
        match rest.chars().next() {
            None => Some(""),
            Some(c) if c.is_whitespace() => Some(rest.trim_start().trim_end_matches(['\n', '\r'])),
            Some(_) => None,
        }
    })
}

/// How the next window's first context carries the `/fresh-window` prompt.
pub fn fresh_window_prompt(prompt: &str) -> String {
    format!("\n\nThe human asked for this window (with /fresh-window):\n{prompt}")
}

/// Forgets that the reset mod opened the live window. By a prompt, a tool
/// batch or a Stop the mod's compaction is over, and so is the
/// SessionStart(`compact`) it may have raised: a later compaction must boot
/// as usual, and the transcript's usage is this window's. `true` when there
/// was a mark to forget.
fn settle_mod_boot(state: &mut ClaudeSessionState) -> bool {
    let boot = std::mem::take(&mut state.window.boot_by_mod);
    let opened = std::mem::take(&mut state.window.opened_by_mod);
    boot || opened
}
