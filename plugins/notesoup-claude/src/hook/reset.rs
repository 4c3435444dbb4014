//! `notesoup mod <op>`: the decisions and texts behind the optional reset
//! mod (`mod/` beside the plugin). The mod holds no logic of its own: it
//! sends one JSON object on stdin and reads one JSON line back,
//! `{"ok":true,"result":…}` or `{"ok":false,"error":…}`.
//!
//! A mod reset keeps the Claude session (and its id), so no hand-off marker
//! is involved: `boot` opens window `n + 1` in the session record and marks
//! its boot as placed by the mod, which SessionStart(`compact`) honours;
//! `failed` gives the window back; `committed` forgets the way back.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Session;
use super::io::HookInput;
use crate::boot;
use crate::env::{HostEnv, notesoup_data_for_mod};
use crate::names::bindings;
use crate::state::{Origin, ResetFrom};

/// The instructions the mod passes to `$.session.compact`.
pub const RESET_INSTRUCTIONS: &str = "notesoup: reset to a fresh notes-only context window.";

/// One request of the mod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Op {
    /// Whether to reset now: the close-out of this window is done, or the
    /// window is at the hard reserve.
    Decide,
    /// The boot of window `n + 1`, the one message the compacted
    /// conversation keeps; records the new window.
    Boot,
    /// The compaction stands.
    Committed,
    /// The compaction was vetoed or failed: the window before it is live again.
    Failed,
}

/// What the mod sends: the session as `$.session` reads it, and the mod's
/// own `${CLAUDE_PLUGIN_DATA}` from `$.process.hookEnv()`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ModInput {
    /// `$.session.id()`.
    pub session_id: String,
    /// `$.session.cwd()`.
    pub cwd: Option<PathBuf>,
    /// `$.session.info().transcriptPath`.
    pub transcript_path: Option<PathBuf>,
    /// The mod's data directory; notesoup's records live in the sibling
    /// directory of the notesoup plugin.
    pub plugin_data: Option<PathBuf>,
    /// Why a reset failed (`failed` only).
    pub reason: Option<String>,
}

/// The answer of `decide`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResetDecision {
    /// Reset now.
    pub reset: bool,
    /// Why: `normal` after the close-out, `forced` at the hard reserve.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
    /// What to pass to `$.session.compact`.
    pub instructions: &'static str,
}

/// Runs `op` on the mod's JSON request; returns the one line to print.
pub fn run(op: Op, stdin: &[u8], env: &HostEnv) -> String {
    let answer = answer(op, stdin, env);
    let value = match answer {
        Ok(result) => json!({ "ok": true, "result": result }),
        Err(error) => json!({ "ok": false, "error": error.replace('\n', " ") }),
    };
    value.to_string() + "\n"
}

fn answer(op: Op, stdin: &[u8], env: &HostEnv) -> Result<Value, String> {
    if env.disabled {
        return Err(format!(
            "notesoup is disabled ({})",
            crate::env::DISABLE_VAR
        ));
    }
    let input: ModInput =
        serde_json::from_slice(stdin).map_err(|err| format!("unreadable mod request: {err}"))?;
    if input.session_id.is_empty() {
        return Err(
            "no session_id: the request needs sessionId, the session's id ($.session.id()); it was missing or empty"
                .to_owned(),
        );
    }
    let mut env = env.clone();
    if let Some(data) = &input.plugin_data {
        // A relative one would put records wherever the process happens to
        // run.
        if !data.is_absolute() {
            return Err(format!(
                "pluginData must be an absolute path, not {:?}",
                crate::shown::shown(&data.to_string_lossy())
            ));
        }
        env.plugin_data = Some(notesoup_data_for_mod(data));
    }
    let hook_input = HookInput {
        session_id: input.session_id.clone(),
        transcript_path: input.transcript_path.clone(),
        cwd: input.cwd.clone(),
        ..HookInput::default()
    };
    let session = Session::open(&env, &hook_input)?;
    match op {
        Op::Decide => session.decide().map(|d| json!(d)),
        Op::Boot => session.mod_boot(),
        Op::Committed => session.mod_committed(),
        Op::Failed => session.mod_failed(input.reason.as_deref().unwrap_or("unknown")),
    }
}

impl Session<'_> {
    /// `decide`: reset after the close-out, or at the hard reserve.
    fn decide(&self) -> Result<ResetDecision, String> {
        let (state, _) = self.load_or_recover()?;
        let origin = if state.reset_from.is_some() || state.window.opened_by_mod {
            // A reset is in flight, or has just opened this window: the
            // transcript may not show its compaction yet.
            None
        } else if state.window.close_out_done {
            Some(Origin::Normal)
        } else {
            self.budget()?
                .filter(|b| b.remaining <= b.policy.reserve_line())
                .map(|_| Origin::Forced)
        };
        Ok(ResetDecision {
            reset: origin.is_some(),
            origin,
            instructions: RESET_INSTRUCTIONS,
        })
    }

    /// `boot`: opens window `n + 1` and renders its boot plus the
    /// continuation. A boot that cannot be built changes nothing, so the
    /// mod vetoes the reset.
    fn mod_boot(&self) -> Result<Value, String> {
        let (mut state, _) = self.load_or_recover()?;
        let from = ResetFrom {
            previous_window_id: state.previous_window_id.clone(),
            window: state.window,
        };
        state.open_next_window();
        let mut text = boot::render(self.env, &state)?;
        text.push_str("\n\n");
        text.push_str(&bindings().continuation_text());
        // Kept until the reset is committed: a vetoed one gives it back.
        if let Some(prompt) = &state.next_window_prompt {
            text.push_str(&super::fresh_window_prompt(prompt));
        }
        state.window.boot_injected = true;
        state.window.boot_by_mod = true;
        state.window.opened_by_mod = true;
        state.reset_from = Some(from);
        self.states.save(&state).map_err(|e| e.to_string())?;
        Ok(json!({ "text": text, "window": state.window_id().to_string() }))
    }

    /// `committed`: the new window stands.
    fn mod_committed(&self) -> Result<Value, String> {
        let (mut state, _) = self.load_or_recover()?;
        state.reset_from = None;
        state.next_window_prompt = None;
        self.states.save(&state).map_err(|e| e.to_string())?;
        Ok(json!({
            "window": state.window_id().to_string(),
            "message": format!("notesoup: memory cleared · window {}", state.window_ordinal),
        }))
    }

    /// `failed`: the window before the reset is live again, its flags as
    /// they were.
    fn mod_failed(&self, reason: &str) -> Result<Value, String> {
        let (mut state, _) = self.load_or_recover()?;
        if let Some(from) = state.reset_from.take()
            && state.window_ordinal > 1
        {
            state.window_ordinal -= 1;
            state.previous_window_id = from.previous_window_id;
            state.window = from.window;
            self.states.save(&state).map_err(|e| e.to_string())?;
        }
        Ok(json!({
            "window": state.window_id().to_string(),
            "message": format!("notesoup: reset failed; keeping the current window: {reason}"),
        }))
    }
}
