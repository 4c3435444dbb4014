//! The history a call reads: the calling session's whole `/clear` chain,
//! decoded for the call (the command line) or kept between calls and
//! extended as its newest transcript grows (a running server).

use notesoup_core::history::{History, SessionLedger, session_ledger};
use notesoup_core::tools::{Refusal, RefusalCode, ToolOutput};

use crate::state::ClaudeSessionState;
use crate::transcript::decode::{ChainFile, decode_chain_with_signals};
use crate::transcript::incremental::{ChainError, ChainHistory};

/// Where a call's history comes from: decoded for the call, or kept from
/// the last call and extended as its transcript grows. One chain is kept
/// at most: a server serves one conversation at a time, and a 50 MB
/// transcript decodes to a few times its size.
#[derive(Debug)]
pub struct HistorySource {
    keeps: bool,
    kept: Option<ChainHistory>,
}

impl HistorySource {
    /// Each call decodes its chain.
    pub fn one_shot() -> Self {
        Self {
            keeps: false,
            kept: None,
        }
    }

    /// The last chain decoded is kept for the next call.
    pub fn kept() -> Self {
        Self {
            keeps: true,
            kept: None,
        }
    }

    /// The history of `state`'s chain, owned.
    pub fn history(&mut self, state: &ClaudeSessionState) -> Result<History, Refusal> {
        if self.keeps {
            cached_chain_history(&mut self.kept, state)
        } else {
            chain_history(state)
        }
    }

    /// Runs a history tool over `state`'s chain; a kept history is lent,
    /// not copied.
    pub fn with_history(
        &mut self,
        state: &ClaudeSessionState,
        run: &mut dyn FnMut(&History) -> ToolOutput,
    ) -> ToolOutput {
        let output = if self.keeps {
            cached_chain(&mut self.kept, state).map(run)
        } else {
            chain_history(state).map(|history| run(&history))
        };
        output.unwrap_or_else(|refusal| ToolOutput::refusal(&refusal))
    }
}

/// The history of a session's whole `/clear` chain, decoded at once.
pub fn chain_history(state: &ClaudeSessionState) -> Result<History, Refusal> {
    let files = chain_files(state);
    let (transcript, signals) = decode_chain_with_signals(&state.notes_session_id, &files)
        .map_err(|err| {
            Refusal::new(
                RefusalCode::IoError,
                format!("transcript unreadable: {err}"),
            )
        })?;
    let mut history = History::new(transcript)
        .map_err(|err| Refusal::new(RefusalCode::InternalError, err.to_string()))?;
    history.set_window_signals(signals);
    Ok(history)
}

/// The window ledger of a session's whole `/clear` chain, decoded at once;
/// `context_window` (the user's override) replaces the window each reply's
/// model implies.
pub fn chain_ledger(
    state: &ClaudeSessionState,
    context_window: Option<u64>,
) -> Result<SessionLedger, Refusal> {
    let history = chain_history(state)?;
    let mut signals = history.window_signals().to_vec();
    if let Some(window) = context_window {
        for signal in &mut signals {
            signal.context_window = Some(window);
        }
    }
    Ok(session_ledger(&history, &signals))
}

/// The history of `state`'s chain: the kept one while none of its files
/// changed, else brought up to date (and kept).
pub fn cached_chain_history(
    kept: &mut Option<ChainHistory>,
    state: &ClaudeSessionState,
) -> Result<History, Refusal> {
    cached_chain(kept, state).cloned()
}

/// The kept history of `state`'s chain, lent. When the newest transcript
/// grew, only its new bytes are decoded (see [`ChainHistory::update`]); any
/// other change decodes the chain again.
pub fn cached_chain<'c>(
    kept: &'c mut Option<ChainHistory>,
    state: &ClaudeSessionState,
) -> Result<&'c History, Refusal> {
    let files = chain_files(state);
    let update = match kept {
        Some(chain) => chain.update(&state.notes_session_id, &files),
        None => ChainHistory::decode(&state.notes_session_id, &files).map(|chain| {
            *kept = Some(chain);
        }),
    };
    if let Err(err) = update {
        *kept = None;
        return Err(match err {
            ChainError::Io(_) => Refusal::new(RefusalCode::IoError, err.to_string()),
            ChainError::Transcript(err) => {
                Refusal::new(RefusalCode::InternalError, err.to_string())
            }
        });
    }
    kept.as_ref()
        .map(ChainHistory::history)
        .ok_or_else(|| Refusal::new(RefusalCode::InternalError, "the history cache is empty"))
}

fn chain_files(state: &ClaudeSessionState) -> Vec<ChainFile> {
    state
        .transcripts()
        .into_iter()
        .map(|link| ChainFile {
            session_id: link.session_id,
            path: link.transcript_path,
        })
        .collect()
}
