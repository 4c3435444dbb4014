//! `notesoup-dsh serve`: the sidecar's state and its request handlers.
//!
//! One sidecar serves every agent of a dsh process. It keeps a mirror of each
//! session's log; every decision reads the log, so a restarted sidecar that is
//! re-sent the log decides exactly as before.

use notesoup_core::sync::NotesSync;
use std::collections::HashMap;
use std::io::{self, BufRead, Write};
use std::panic::{self, AssertUnwindSafe};

use jiff::Timestamp;

use notesoup_core::boot::ToolBindings;
use notesoup_core::budget::BudgetPolicy;
use notesoup_core::history::History;
use notesoup_core::notes::NoteStore;
use notesoup_core::plumbing::{CappedLines, LineRead};
use notesoup_core::settings::{Settings, WarnOnce};
use notesoup_core::tools::{
    BudgetHost, CompactJson, Refusal, RefusalCode, ResetRequest, Tool, ToolContext, ToolOutput,
    call_tool,
};
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::boot::{self, NotesPlace};
use crate::budget::{self, WindowNotices};
use crate::decode::{PINNED_DSH_VERSION, SessionEvent};
use crate::history::IncrementalHistory;
use crate::messages::{self, DshNotice, ResetOrigin};
use crate::mirror::SessionMirror;
use crate::protocol::{
    BudgetAction, BudgetParams, BudgetResult, Call, ErrorCode, FreshWindowParams,
    FreshWindowResult, HelloParams, HelloResult, Outcome, PROTOCOL_VERSION, PendingReset,
    ProtocolError, Request, ResetParams, ResetPlan, ResetTrigger, Response, SessionInput, Span,
    SyncResult, ToolParams, ToolResult, WindowOpenResult,
};
use crate::reset::plan_span;
use crate::settings;
use crate::window::{self, BootCarrier};

/// The prompt variable that renders `{{` (dsh interpolates `{{name}}` in
/// prompt contexts, and notes may contain braces).
pub const TEMPLATE_OPEN: &str = "notesoup_open";

/// Escapes text for a dsh prompt context: every `{{` becomes the
/// [`TEMPLATE_OPEN`] variable, which renders it back.
pub fn escape_template(text: &str) -> String {
    text.replace("{{", &format!("{{{{{TEMPLATE_OPEN}}}}}"))
}

/// What the sidecar knows of one session.
#[derive(Debug, Default)]
struct SessionState {
    mirror: SessionMirror,
    /// The history tools' model, extended as the log grows.
    history: Option<IncrementalHistory>,
    cwd: String,
    model: Option<String>,
    pending: Option<PendingReset>,
    remaining: Option<u64>,
}

/// The sidecar.
#[derive(Debug)]
pub struct Sidecar {
    place: NotesPlace,
    policy: BudgetPolicy,
    automatic: bool,
    secret_guard: bool,
    boot_max_chars: usize,
    greeted: bool,
    sessions: HashMap<String, SessionState>,
    file_settings: Map<String, Value>,
    file_warnings: Vec<String>,
    /// Warnings said on stderr, each once for the sidecar's life.
    warned: WarnOnce,
}

impl Sidecar {
    /// A sidecar writing notes under `place`, with the default settings
    /// until `hello` brings the row's.
    pub fn new(place: NotesPlace) -> Self {
        let defaults = Settings::default();
        Self {
            place,
            policy: BudgetPolicy::default(),
            automatic: true,
            secret_guard: defaults.secret_guard,
            boot_max_chars: defaults.boot_max_chars,
            greeted: false,
            sessions: HashMap::new(),
            file_settings: Map::new(),
            file_warnings: Vec::new(),
            warned: WarnOnce::new(),
        }
    }

    /// The same sidecar with the settings file's `notesoup` record (and the
    /// warnings reading it gave), under the row's settings at `hello`.
    pub fn with_settings_file(mut self, record: Map<String, Value>, warnings: Vec<String>) -> Self {
        self.file_settings = record;
        self.file_warnings = warnings;
        self
    }

    /// Answers one request line with one answer line (no newline).
    pub fn answer_line(&mut self, line: &str) -> String {
        if LineRead::too_many_tokens(line.as_bytes(), LineRead::MAX_TOKENS) {
            return encode(&refusal(
                LineRead::recover_id(line.as_bytes()),
                ErrorCode::BadRequest,
                format!(
                    "the request line holds more than {max_tokens} commas, colons and opening brackets",
                    max_tokens = LineRead::MAX_TOKENS
                ),
            ));
        }
        let response = match Request::parse(line) {
            Ok(request) => Response {
                id: request.id,
                outcome: match self.handle(request.call) {
                    Ok(result) => Outcome::Result(result),
                    Err(error) => Outcome::Error(error),
                },
            },
            Err(error) => refusal(
                LineRead::recover_id(line.as_bytes()),
                ErrorCode::BadRequest,
                error.to_string(),
            ),
        };
        encode(&response)
    }

    /// Answers one raw request line: a line that is not UTF-8 is refused
    /// with `bad_request` and the id the line shows, if any.
    pub fn answer_bytes(&mut self, line: &[u8]) -> String {
        match std::str::from_utf8(line) {
            Ok(text) => self.answer_line(text),
            Err(error) => encode(&refusal(
                LineRead::recover_id(line),
                ErrorCode::BadRequest,
                format!(
                    "the request line is not UTF-8 (invalid byte at offset {})",
                    error.valid_up_to()
                ),
            )),
        }
    }

    /// Handles one call: its result serialized once, as it goes on the wire.
    pub fn handle(&mut self, call: Call) -> Result<CompactJson, ProtocolError> {
        if !self.greeted && !matches!(call, Call::Hello(_)) {
            return Err(ProtocolError::new(
                ErrorCode::ProtocolMismatch,
                "the first request must be hello",
            ));
        }
        match call {
            Call::Hello(params) => to_value(self.hello(params)?),
            Call::WindowOpen(params) => to_value(self.window_open(params.session)?),
            Call::BudgetDecide(params) => to_value(self.budget(params)?),
            Call::Tool(params) => to_value(self.tool(params)?),
            Call::ResetPlan(params) => to_value(self.reset_plan(params)?),
            Call::FreshWindow(params) => to_value(self.fresh_window(params)?),
            Call::SessionSync(params) => {
                let state = self.sync(params.session)?;
                to_value(SyncResult {
                    next: state.mirror.next_seq(),
                })
            }
        }
    }

    fn hello(&mut self, params: HelloParams) -> Result<HelloResult, ProtocolError> {
        if params.protocol != PROTOCOL_VERSION {
            return Err(ProtocolError::new(
                ErrorCode::ProtocolMismatch,
                format!(
                    "the bundle speaks protocol {}, this notesoup-dsh speaks {PROTOCOL_VERSION}; write the bundle again with this binary",
                    params.protocol
                ),
            ));
        }
        let resolved = settings::resolve(&self.file_settings, &params.settings);
        let mut warnings = self.file_warnings.clone();
        warnings.extend(resolved.warnings);
        if let Some(running) = params.running_dsh.as_deref()
            && running != PINNED_DSH_VERSION
        {
            warnings.push(version_warning(running));
        }
        let chosen = resolved.settings;
        self.policy = BudgetPolicy::new(chosen.reserve_tokens, chosen.core.reminder_margin_tokens);
        self.automatic = chosen.automatic_resets;
        self.secret_guard = chosen.core.secret_guard;
        self.boot_max_chars = chosen.core.boot_max_chars;
        self.greeted = true;
        Ok(HelloResult {
            protocol: PROTOCOL_VERSION,
            server: env!("CARGO_PKG_VERSION").to_owned(),
            dsh: PINNED_DSH_VERSION.to_owned(),
            warnings,
        })
    }

    /// Brings the session's mirror up to date.
    fn sync(&mut self, input: SessionInput) -> Result<&mut SessionState, ProtocolError> {
        check_session_id(&input.id)?;
        let state = self.sessions.entry(input.id.clone()).or_default();
        state.cwd = input.cwd;
        state.model = input.model;
        let from = input.from;
        state.mirror.extend(from, input.events).map_err(|error| {
            // A whole log that does not fold is the bundle's to fix; a batch
            // that does not continue the mirror is answered by sending the
            // whole log again.
            let code = if from == 0 {
                ErrorCode::BadRequest
            } else {
                ErrorCode::Resync
            };
            ProtocolError::new(code, error.to_string())
        })?;
        Ok(state)
    }

    fn window_open(&mut self, input: SessionInput) -> Result<WindowOpenResult, ProtocolError> {
        let id = input.id.clone();
        let place = self.place.clone();
        let (guard, max_chars) = (self.secret_guard, self.boot_max_chars);
        let state = self.sync(input)?;
        let recovered = window::recover(&id, state.mirror.events());
        let context_text = match recovered.boot {
            BootCarrier::Marker => String::new(),
            BootCarrier::Context(Some(text)) => escape_template(&text),
            BootCarrier::Context(None) => {
                // `auto` sync: the boot pulls first, waiting at most
                // autoWaitMs (a failure leaves the boot as the disk has it,
                // said in the sidecar's log: dsh's window has no notice).
                if let Some(notice) = NotesSync::open(&place.root).auto_boot().boot_notice() {
                    eprintln!("{notice}");
                }
                let store =
                    boot::store(&place, Some(&id), &state.cwd, state.model.as_deref(), guard)
                        .map_err(boot_failed)?;
                let text = boot::render(
                    &place,
                    &store,
                    recovered.window.ordinal,
                    Timestamp::now(),
                    max_chars,
                )
                .map_err(boot_failed)?;
                escape_template(&text)
            }
        };
        if state.pending.is_none() && wipe_requested(state.mirror.events(), &recovered.window) {
            state.pending = Some(PendingReset {
                origin: ResetOrigin::Normal,
                trigger: ResetTrigger::Tool,
                prompt: None,
            });
        }
        Ok(WindowOpenResult {
            window_id: recovered.window.id,
            context_text,
            pending_reset: state.pending.clone(),
        })
    }

    fn budget(&mut self, params: BudgetParams) -> Result<BudgetResult, ProtocolError> {
        let id = params.session.id.clone();
        let (policy, automatic) = (self.policy, self.automatic);
        let state = self.sync(params.session)?;
        let window = window::recover(&id, state.mirror.events()).window;
        let notices = WindowNotices::since(state.mirror.events(), window.marker_seq.unwrap_or(0));
        let decision = budget::decide(
            &policy,
            automatic,
            params.total_tokens,
            params.context_window,
            notices,
        );
        state.remaining = decision.remaining;
        let bindings = ToolBindings::plain();
        let message = match decision.action {
            BudgetAction::Reminder => {
                let countdown = policy.countdown(decision.remaining).unwrap_or(0);
                Some(messages::notice(
                    DshNotice::Reminder,
                    &BudgetPolicy::reminder_text(countdown, &bindings),
                    &format!("notesoup: {countdown} tokens before close-out"),
                ))
            }
            BudgetAction::Warning => Some(messages::notice(
                DshNotice::Warning,
                &BudgetPolicy::warning_text(&bindings),
                "notesoup: context almost full; close out the current memory window",
            )),
            BudgetAction::None | BudgetAction::Reset => None,
        };
        Ok(BudgetResult {
            action: decision.action,
            remaining_tokens: decision.remaining,
            message,
        })
    }

    fn tool(&mut self, params: ToolParams) -> Result<ToolResult, ProtocolError> {
        let policy = self.policy;
        let place = self.place.clone();
        let guard = self.secret_guard;
        let id = params.session.id.clone();
        // Lent to the tools for the call (the session's state is borrowed
        // from the sidecar meanwhile), then put back.
        let mut warned = std::mem::take(&mut self.warned);
        let state = match self.sync(params.session) {
            Ok(state) => state,
            Err(error) => {
                self.warned = warned;
                return Err(error);
            }
        };
        if let (Some(window), Some(used)) = (params.context_window, params.total_tokens) {
            state.remaining = Some(BudgetPolicy::remaining_tokens(window, used));
        }
        let mut host = DshTools {
            state,
            place: &place,
            session_id: &id,
            secret_guard: guard,
            policy,
            requested: None,
            warned: &mut warned,
        };
        let output = call_tool(&mut host, &params.name, params.arguments);
        let reset = host.requested.take();
        drop(host);
        self.warned = warned;
        Ok(ToolResult {
            // A shared tool's flat result, or a budget tool's plain JSON: the
            // compact JSON core serialized, embedded as it is.
            result: output.json,
            text: output.text,
            is_error: output.is_error,
            conclude_turn: output.terminate,
            reset,
        })
    }

    fn reset_plan(&mut self, params: ResetParams) -> Result<ResetPlan, ProtocolError> {
        // The close-out's notes go out in the background (`auto`).
        NotesSync::open(&self.place.root).auto_background();
        let id = params.session.id.clone();
        let place = self.place.clone();
        let (guard, max_chars) = (self.secret_guard, self.boot_max_chars);
        let state = self.sync(params.session)?;
        // The attempt consumes the request: a refused plan keeps the window,
        // and the next wipe_memory or /fresh-window asks again.
        state.pending = None;
        let span = plan_span(&state.mirror, &params.surface)
            .map_err(|error| ProtocolError::new(ErrorCode::ResetRefused, error.to_string()))?;
        let ordinal = window::recover(&id, state.mirror.events())
            .window
            .ordinal
            .checked_add(1)
            .ok_or_else(|| {
                ProtocolError::new(
                    ErrorCode::ResetRefused,
                    "the log's last window is numbered u64::MAX; no next window id exists",
                )
            })?;
        let window_id = window::window_id(&id, ordinal);
        let store = boot::store(&place, Some(&id), &state.cwd, state.model.as_deref(), guard)
            .map_err(boot_failed)?;
        let boot = boot::render(&place, &store, ordinal, Timestamp::now(), max_chars)
            .map_err(boot_failed)?;
        let bindings = ToolBindings::plain();
        let followup = match (params.trigger, params.prompt.as_deref()) {
            (ResetTrigger::Manual, Some(prompt)) => Some(messages::human_prompt(prompt)),
            (ResetTrigger::Manual | ResetTrigger::Compaction, _) => None,
            _ => Some(messages::notice(
                DshNotice::Continuation,
                &ToolBindings::continuation_text(&bindings),
                &format!("notesoup: fresh context window {window_id}"),
            )),
        };
        let (replace, source_event_seqs) = match span {
            Some((span, shadowed)) => (Some(span), shadowed),
            None => (None::<Span>, Vec::new()),
        };
        Ok(ResetPlan {
            message: messages::boot_marker(&boot, &window_id, params.origin),
            window_id,
            replace,
            source_event_seqs,
            context_text: String::new(),
            followup,
        })
    }

    fn fresh_window(
        &mut self,
        params: FreshWindowParams,
    ) -> Result<FreshWindowResult, ProtocolError> {
        let state = self.sync(params.session)?;
        if state.pending.is_some() {
            return Ok(FreshWindowResult {
                text: "notesoup: a fresh-window request is already pending; keeping its original prompt and behavior.".into(),
                steer: None,
                reset: None,
            });
        }
        let prompt = params.prompt.filter(|p| !p.trim().is_empty());
        let reset = PendingReset {
            origin: ResetOrigin::Normal,
            trigger: ResetTrigger::Manual,
            prompt: prompt.clone(),
        };
        state.pending = Some(reset.clone());
        let close_out =
            BudgetPolicy::manual_close_out_text(&ToolBindings::plain(), prompt.as_deref());
        let text = if prompt.is_some() {
            "notesoup: after closing out notes, the agent continues with your prompt in a fresh window."
        } else {
            "notesoup: the agent closes out its notes, then stops in a fresh window."
        };
        Ok(FreshWindowResult {
            text: text.into(),
            steer: Some(messages::notice(
                DshNotice::CloseOut,
                &close_out,
                "notesoup: close out notes before a fresh window",
            )),
            reset: Some(reset),
        })
    }
}

/// The warning for a dsh other than the pinned one (given once, at `hello`).
pub fn version_warning(running: &str) -> String {
    format!(
        "notesoup: this is dsh {running}, but notesoup-dsh {} is built and tested for dsh {PINNED_DSH_VERSION} only; resets and history may misread its session log.",
        env!("CARGO_PKG_VERSION")
    )
}

/// The longest session id: it names a directory of the notes root.
const MAX_SESSION_ID_BYTES: usize = 255;

/// Refuses a session id that could not name `pi/session/<id>/` safely or
/// would forge text where it is printed (window ids in every boot and
/// marker). dsh's own ids are `session-<uuid>`.
fn check_session_id(id: &str) -> Result<(), ProtocolError> {
    let problem = if id.is_empty() {
        Some("is empty")
    } else if id.len() > MAX_SESSION_ID_BYTES {
        Some("is longer than 255 bytes")
    } else if id == "." || id == ".." {
        Some("is . or ..")
    } else if id.eq_ignore_ascii_case(".git") {
        // The dream's Git audit skips every .git entry.
        Some("is .git")
    } else if id.contains(['/', '\\', ':']) {
        Some("contains /, \\ or :")
    } else if id.chars().any(forges_text) {
        Some("contains a control, line-separator or bidirectional character")
    } else {
        None
    };
    match problem {
        Some(problem) => Err(ProtocolError::new(
            ErrorCode::BadRequest,
            format!("the session id {problem}"),
        )),
        None => Ok(()),
    }
}

/// Characters that change how the text around them is laid out.
fn forges_text(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// A successful `wipe_memory` in the current window that no marker followed.
fn wipe_requested(events: &[SessionEvent], window: &window::WindowSpan) -> bool {
    let from = window.marker_seq.unwrap_or(0);
    let calls: Vec<String> = events
        .iter()
        .filter(|e| e.seq >= from && e.kind == "tool/call")
        .filter(|e| e.data.get("name").and_then(Value::as_str) == Some(Tool::WIPE_MEMORY.name))
        .filter_map(|e| {
            e.data
                .get("callId")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .collect();
    events
        .iter()
        .filter(|e| e.seq >= from)
        .filter_map(SessionEvent::tool_result)
        .any(|result| !result.is_error && calls.contains(&result.call_id))
}

fn boot_failed(error: boot::BootError) -> ProtocolError {
    ProtocolError::new(ErrorCode::BootFailed, error.to_string())
}

fn to_value<T: Serialize>(value: T) -> Result<CompactJson, ProtocolError> {
    CompactJson::to_json(&value)
        .map_err(|error| ProtocolError::new(ErrorCode::Internal, error.to_string()))
}

fn refusal(id: u64, code: ErrorCode, message: impl Into<String>) -> Response {
    Response {
        id,
        outcome: Outcome::Error(ProtocolError::new(code, message)),
    }
}

fn encode(response: &Response) -> String {
    serde_json::to_string(response).unwrap_or_else(|error| {
        json!({"id": response.id, "error": {"code": "internal", "message": error.to_string()}})
            .to_string()
    })
}

/// Serves JSON lines until the input ends.
///
/// One bad line never ends the loop: a line that is not UTF-8, not a request
/// or longer than [`LineRead::MAX_BYTES`] is answered with `bad_request` (the
/// over-long one without being buffered whole), and a handler that panics is
/// answered with `internal`. Only a failing pipe ends it early.
pub fn serve(mut sidecar: Sidecar, input: impl BufRead, mut output: impl Write) -> io::Result<()> {
    let mut lines = CappedLines::new(input);
    loop {
        let answer = match lines.next_line()? {
            LineRead::Eof => return Ok(()),
            LineRead::TooLong { prefix, bytes } => encode(&refusal(
                LineRead::recover_id(prefix),
                ErrorCode::BadRequest,
                format!(
                    "the request line is {bytes} bytes, over the limit of {max_bytes}; it was discarded",
                    max_bytes = LineRead::MAX_BYTES
                ),
            )),
            LineRead::Line(line) if LineRead::is_blank(line) => continue,
            LineRead::Line(line) => {
                // A panic is a bug, but it must cost one request, not the
                // session's notes: the sidecar's state is only replaced whole
                // (a mirror is extended after its batch is checked), so it
                // stays usable.
                panic::catch_unwind(AssertUnwindSafe(|| sidecar.answer_bytes(line))).unwrap_or_else(
                    |_| {
                        encode(&refusal(
                            LineRead::recover_id(line),
                            ErrorCode::Internal,
                            "the sidecar failed on this request (a bug); it keeps serving",
                        ))
                    },
                )
            }
        };
        output.write_all(answer.as_bytes())?;
        output.write_all(b"\n")?;
        output.flush()?;
    }
}

/// One session's state as core's tools see it.
struct DshTools<'a> {
    state: &'a mut SessionState,
    place: &'a NotesPlace,
    session_id: &'a str,
    secret_guard: bool,
    policy: BudgetPolicy,
    /// The reset `wipe_memory` asked for, for the bundle to carry out.
    requested: Option<PendingReset>,
    /// Warnings already said on stderr.
    warned: &'a mut WarnOnce,
}

impl ToolContext for DshTools<'_> {
    /// The session's store; its credential check is the sidecar's, turned
    /// on by the project's `secretGuard: true` (never off by its `false`).
    /// What was wrong with the project's file is said once, on stderr
    /// (which dsh shows: the bundle leaves the sidecar's stderr to it).
    fn notes(&mut self) -> Result<NoteStore, Refusal> {
        let (guard, warnings) = settings::session_secret_guard(
            std::path::Path::new(&self.state.cwd),
            self.secret_guard,
        );
        for warning in self.warned.fresh(warnings) {
            // A closed stderr leaves nowhere to say it.
            let _ = writeln!(io::stderr(), "{warning}");
        }
        boot::store(
            self.place,
            Some(self.session_id),
            &self.state.cwd,
            self.state.model.as_deref(),
            guard,
        )
        .map_err(|error| Refusal::new(RefusalCode::InternalError, error.to_string()))
    }

    fn history(&mut self) -> Result<History, Refusal> {
        self.decoded().cloned()
    }

    /// The model kept between calls is lent, never copied.
    fn with_history(&mut self, run: &mut dyn FnMut(&History) -> ToolOutput) -> ToolOutput {
        match self.decoded() {
            Ok(history) => run(history),
            Err(refusal) => ToolOutput::refusal(&refusal),
        }
    }

    fn budget(&mut self) -> Option<&mut dyn BudgetHost> {
        Some(self)
    }
}

impl DshTools<'_> {
    /// The session's history, extended from the last decoded event.
    fn decoded(&mut self) -> Result<&History, Refusal> {
        let decoder = self
            .state
            .history
            .get_or_insert_with(|| IncrementalHistory::new(self.session_id));
        decoder
            .history(self.state.mirror.generation(), self.state.mirror.events())
            .map_err(|error| Refusal::new(RefusalCode::InternalError, error.to_string()))
    }
}

impl BudgetHost for DshTools<'_> {
    fn remaining_tokens(&mut self) -> Option<u64> {
        self.policy.countdown(self.state.remaining)
    }

    /// A repeat in the same window only acknowledges.
    fn request_reset(&mut self) -> ResetRequest {
        if self.state.pending.is_some() {
            return ResetRequest::AlreadyPending;
        }
        let reset = PendingReset {
            origin: ResetOrigin::Normal,
            trigger: ResetTrigger::Tool,
            prompt: None,
        };
        self.state.pending = Some(reset.clone());
        self.requested = Some(reset);
        ResetRequest::Requested
    }
}
