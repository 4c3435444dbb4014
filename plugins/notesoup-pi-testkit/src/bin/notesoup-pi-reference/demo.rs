//! The demo: the embedded scenario on the reference host, then a narration
//! read back from the host's event log, the session file and the notes
//! home. Nothing here is canned: every line comes from the run.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use notesoup_core::budget::BudgetPolicy;
use notesoup_core::tools::Tool;
use notesoup_pi::extension::{Notesoup, NotesoupConfig};
use notesoup_pi::host::{PiExtension, SessionStartReason, ToolInvocation};
use notesoup_pi::reset::window::active_window;
use notesoup_pi::session::{AgentMessage, ContentBlock, Entry, EntryIndex, SessionFile};
use notesoup_pi_testkit::{
    Clock, Harness, HostEvent, HostState, IdSource, SessionManager, entry_kind, message_text,
};
use serde_json::json;

use super::scenario;

const RULE: &str = "────────────────────────────────────────────────────────────────────────";

/// Runs the scenario and prints the narration.
pub fn run(notes_home: Option<PathBuf>, keep: bool) -> Result<()> {
    let temp = tempfile::Builder::new()
        .prefix("notesoup-pi-demo-")
        .tempdir()
        .context("creating the temporary directory")?;
    let root = temp.path().to_owned();
    let cwd = root.join("project");
    let sessions = root.join("sessions");
    std::fs::create_dir_all(&cwd).context("creating the project directory")?;
    std::fs::create_dir_all(&sessions).context("creating the sessions directory")?;
    let notes = notes_home.unwrap_or_else(|| root.join("notes"));

    let session_id = uuid::Uuid::new_v4().to_string();
    let session = SessionManager::create(
        &sessions,
        &cwd,
        &session_id,
        Clock::System,
        IdSource::Random,
    );
    let host = HostState::new(session, None, &cwd);
    let extension = Notesoup::new(
        NotesoupConfig {
            notes_home: notes.clone(),
            agent: "demo".to_owned(),
        },
        host.api_level,
    )?;
    let mut harness =
        Harness::new(host, extension, scenario::model()).with_tool(scenario::read_file_tool());
    harness.start(SessionStartReason::Startup);
    harness.prompt(scenario::TASK);

    let Some(file) = harness.host.session.file().map(Path::to_owned) else {
        bail!("the session has no file");
    };
    print_header(&harness, &file, &notes);
    print_log(&harness);
    print_fresh_window(&harness);
    print_windows(&mut harness);
    print_session_file(&file)?;
    print_notes(&notes)?;

    let notes_inside = notes.starts_with(&root);
    if keep {
        let kept = temp.keep();
        outln!(
            "\nKept {}: the session file {}.",
            kept.display(),
            file.display()
        );
        outln!("The notes are in {}.", notes.display());
    } else if notes_inside {
        outln!("\nThe temporary directory is removed; run with --keep to look around.");
    } else {
        outln!(
            "\nThe temporary directory is removed (run with --keep to look around); the notes stay in {}.",
            notes.display()
        );
    }
    Ok(())
}

fn heading(title: &str) {
    outln!(
        "\n{title}\n{}",
        &RULE[..RULE.len().min(title.chars().count() * 3)]
    );
}

fn print_header(harness: &Harness<Notesoup>, file: &Path, notes: &Path) {
    let model = &harness.model.info;
    outln!("notesoup-pi-reference demo: a scripted Pi session on the reference host");
    outln!("{RULE}");
    outln!("  session file  {}", file.display());
    outln!("  notes home    {}", notes.display());
    outln!(
        "  model         {}/{} · context window {} tokens",
        model.provider,
        model.id,
        thousands(model.context_window)
    );
    // The lines as notesoup derives them from this host's settings.
    if let Ok(settings) = &harness.host.settings {
        let margin = notesoup_core::settings::ResolvedSettings::resolve(
            Some(&settings.global),
            Some(&settings.project),
            notesoup_core::settings::ProjectTrust::Trusted,
        )
        .settings
        .reminder_margin_tokens;
        let policy = BudgetPolicy::new(settings.compaction.reserve_tokens, margin);
        outln!(
            "  budget        reminder at {} tokens left · warning at {} · hard reserve at {}",
            thousands(policy.reminder_line()),
            thousands(policy.warning_line()),
            thousands(policy.reserve_line()),
        );
    }
    outln!("  task          {}", scenario::TASK);
}

/// `12345` → `12,345`.
fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// The first line of a text, cut to `max` characters.
fn first_line(text: &str, max: usize) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let mut short: String = line.chars().take(max).collect();
    if line.chars().count() > max || text.lines().filter(|l| !l.trim().is_empty()).count() > 1 {
        short.push('…');
    }
    short
}

/// What a provider message is, read from its text (custom types are gone
/// after `convertToLlm`).
fn label(text: &str) -> &'static str {
    if text.starts_with("<context_window>") {
        "[boot] "
    } else if text.starts_with("<context_window_guidance>\nOnly") {
        "[reminder] "
    } else if text.starts_with("<context_window_guidance>\nFinal warning") {
        "[warning] "
    } else if text.starts_with("You wake up blank") {
        "[continuation] "
    } else if text.starts_with("The conversation history before this point was compacted") {
        "[checkpoint] "
    } else {
        ""
    }
}

fn describe(message: &AgentMessage) -> String {
    let text = message_text(message);
    match message {
        AgentMessage::System(system) => format!(
            "system      {} (+{} tools)",
            first_line(&text, 60),
            system.tools_added.as_ref().map_or(0, Vec::len)
        ),
        AgentMessage::Assistant(assistant) => {
            let calls: Vec<&str> = assistant
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolCall(call) => Some(call.name.as_str()),
                    _ => None,
                })
                .collect();
            let mut line = format!("assistant   {}", first_line(&text, 60));
            if !calls.is_empty() {
                if !text.is_empty() {
                    line.push(' ');
                }
                line.push_str(&format!("→ {}", calls.join(", ")));
            }
            line
        }
        AgentMessage::ToolResult(result) => {
            format!(
                "toolResult  {}: {}",
                result.tool_name,
                first_line(&text, 56)
            )
        }
        _ => format!(
            "{:<11} {}{} ({} chars)",
            message.role(),
            label(&text),
            first_line(&text, 48),
            thousands(text.chars().count() as u64)
        ),
    }
}

fn window_at(harness: &Harness<Notesoup>, leaf: Option<&str>) -> String {
    let entries = harness.host.session.entries();
    let index = EntryIndex::new(entries);
    let branch = leaf.map(|leaf| index.branch(leaf)).unwrap_or_default();
    active_window(&branch, harness.host.session.session_id()).id
}

fn print_log(harness: &Harness<Notesoup>) {
    heading("The run, as it happened");
    let entries = harness.host.session.entries();
    let find = |id: &str| entries.iter().find(|e| e.id() == id);
    for event in &harness.host.log {
        match event {
            HostEvent::SessionStart => outln!("\n▍ session_start"),
            HostEvent::RunStart { by } => outln!("\n▍ run started by {by}"),
            HostEvent::TurnStart { index } => outln!("\n  turn {index}"),
            HostEvent::Request { index, leaf } => {
                let request = &harness.host.requests[*index];
                let tokens: u64 = request
                    .messages
                    .iter()
                    .map(notesoup_pi::estimate::coding_agent::estimate_tokens)
                    .sum();
                outln!(
                    "  ▸ provider request #{} · window {} · {} messages · ≈{} tokens",
                    index + 1,
                    window_at(harness, leaf.as_deref()),
                    request.messages.len(),
                    thousands(tokens)
                );
            }
            HostEvent::Entry { id, kind } => {
                if let Some(entry) = find(id) {
                    print_entry(entry, kind);
                }
            }
            HostEvent::TurnEnd {
                outcome,
                drafts,
                continued,
            } => outln!(
                "  ■ turn_end ({outcome}): {drafts} draft(s) saved{}",
                if *continued {
                    ", one more request asked for"
                } else {
                    ""
                }
            ),
            HostEvent::BeforeSettle { drafts, continued } => outln!(
                "  ■ agent_before_settle: {drafts} draft(s) saved{}",
                if *continued {
                    ", the run continues"
                } else {
                    ""
                }
            ),
            HostEvent::Settled { aborted } => outln!(
                "\n▍ agent_settled{}",
                if *aborted { " (aborted)" } else { "" }
            ),
            HostEvent::Notice(notice) => {
                outln!("  ! notice [{:?}] {}", notice.level, notice.text);
            }
            HostEvent::Compaction { reason, cancelled } => outln!(
                "  ■ session_before_compact ({reason}): {}",
                if *cancelled { "cancelled" } else { "allowed" }
            ),
            HostEvent::ExtensionError { event, error } => {
                outln!("  ✗ {event}: {error}");
            }
        }
    }
}

/// Prints up to `max` lines of `text` under a `│` gutter, long lines
/// wrapped at word boundaries, then how many lines were left out.
fn print_lines(text: &str, max: usize) {
    let lines: Vec<String> = text.lines().flat_map(|line| wrap(line, 100)).collect();
    for line in lines.iter().take(max) {
        outln!("      │ {line}");
    }
    if lines.len() > max {
        outln!("      │ … {} more lines", lines.len() - max);
    }
}

/// Splits a line into pieces of at most `width` characters, at spaces when
/// it can.
fn wrap(line: &str, width: usize) -> Vec<String> {
    if line.chars().count() <= width {
        return vec![line.to_owned()];
    }
    let mut pieces = Vec::new();
    let mut current = String::new();
    for word in line.split(' ') {
        let needed =
            current.chars().count() + usize::from(!current.is_empty()) + word.chars().count();
        if needed > width && !current.is_empty() {
            pieces.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(word);
        while current.chars().count() > width {
            let head: String = current.chars().take(width).collect();
            current = current.chars().skip(width).collect();
            pieces.push(head);
        }
    }
    pieces.push(current);
    pieces
}

fn print_entry(entry: &Entry, kind: &str) {
    match entry {
        Entry::Message(message) => {
            let text = message_text(&message.message);
            match &message.message {
                AgentMessage::User(_) => {
                    outln!("    + {kind}");
                    print_lines(&text, 8);
                }
                AgentMessage::Assistant(assistant) => {
                    outln!("    + {kind} ({})", assistant.stop_reason.as_str());
                    print_lines(&text, 8);
                    for block in &assistant.content {
                        if let ContentBlock::ToolCall(call) = block {
                            let args = call.arguments.to_string();
                            let mut short: String = args.chars().take(96).collect();
                            if args.chars().count() > 96 {
                                short.push('…');
                            }
                            outln!("      → {} {short}", call.name);
                        }
                    }
                }
                AgentMessage::ToolResult(result) => {
                    let shown = if result.tool_name.starts_with("history_")
                        || result.tool_name.starts_with("notes_")
                    {
                        10
                    } else {
                        2
                    };
                    outln!(
                        "    + {kind} ({}{})",
                        result.tool_name,
                        if result.is_error { ", error" } else { "" }
                    );
                    print_lines(&text, shown);
                }
                AgentMessage::System(system) => outln!(
                    "    + {kind}: the system prompt and {} tool declarations",
                    system.tools_added.as_ref().map_or(0, Vec::len)
                ),
                _ => outln!("    + {kind}"),
            }
        }
        Entry::Custom(custom) => outln!(
            "    + {kind} {}",
            custom
                .data
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default()
        ),
        Entry::CustomMessage(custom) => {
            let text = custom
                .content
                .as_ref()
                .map(|c| c.text("\n"))
                .unwrap_or_default();
            outln!(
                "    + {kind} ({}, {} chars{})",
                if custom.display { "visible" } else { "hidden" },
                thousands(text.chars().count() as u64),
                custom
                    .details
                    .as_ref()
                    .map(|d| format!(", details {d}"))
                    .unwrap_or_default(),
            );
            // The budget texts open with their tag; their first sentence is the news.
            if text.starts_with("<context_window_guidance>") {
                print_lines(text.lines().nth(1).unwrap_or(""), 2);
            }
        }
        Entry::Compaction(compaction) => outln!(
            "    + {kind}: summary {:?}, retain-none {}, tokensBefore {}",
            compaction.summary,
            compaction.is_retain_none(),
            thousands(compaction.tokens_before)
        ),
        Entry::ContextEdit(edit) => outln!("    + {kind} of {}", edit.target_id),
        _ => outln!("    + {kind}"),
    }
}

/// The first provider request of the first reset window, in full.
fn print_fresh_window(harness: &Harness<Notesoup>) {
    let root = window_at(harness, None);
    let first_reset = harness.host.log.iter().find_map(|event| match event {
        HostEvent::Request { index, leaf } => {
            let window = window_at(harness, leaf.as_deref());
            (window != root && !window.ends_with(":root")).then_some((*index, window))
        }
        _ => None,
    });
    let Some((index, window)) = first_reset else {
        outln!("\n(no reset happened)");
        return;
    };
    let before = index.checked_sub(1).map(|i| &harness.host.requests[i]);
    if let Some(before) = before {
        heading("The last request before the reset (summarized)");
        for message in &before.messages {
            outln!("  {}", describe(message));
        }
    }
    heading(&format!("What the model saw first in window {window}"));
    for message in &harness.host.requests[index].messages {
        let text = message_text(message);
        match message {
            AgentMessage::System(_) => outln!("  {}", describe(message)),
            _ => {
                outln!("  {} {}", message.role(), label(&text).trim_end());
                for line in text.lines() {
                    outln!("  │ {line}");
                }
            }
        }
    }
}

fn print_windows(harness: &mut Harness<Notesoup>) {
    heading("history_windows, asked after the run");
    let result = harness.extension.execute_tool(
        &mut harness.host,
        &ToolInvocation {
            tool_call_id: "demo".to_owned(),
            name: Tool::HISTORY_WINDOWS.name.to_owned(),
            params: json!({}),
        },
    );
    for block in &result.content {
        if let ContentBlock::Text(text) = block {
            for line in text.text.lines() {
                outln!("  {line}");
            }
        }
    }
}

fn print_session_file(file: &Path) -> Result<()> {
    heading("The session file on disk");
    let read = SessionFile::read(file).context("reading the session file back")?;
    outln!("  {}", file.display());
    outln!(
        "  {} entries, {} irregular lines; line types:",
        read.entries().len(),
        read.diagnostics().len()
    );
    outln!("     1  session (header)");
    for (line, entry) in read.entries().iter().enumerate() {
        outln!("  {:>4}  {}", line + 2, entry_kind(entry));
    }
    Ok(())
}

fn print_notes(notes: &Path) -> Result<()> {
    heading("The notes on disk");
    outln!("  {}", notes.display());
    let mut files = Vec::new();
    collect_notes(notes, &mut files)?;
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let body = text
            .split_once("\n---\n")
            .map_or(text.as_str(), |(_, body)| body)
            .trim();
        let relative = path.strip_prefix(notes).unwrap_or(&path);
        outln!("\n  {}", relative.display());
        for line in body.lines() {
            outln!("  │ {line}");
        }
    }
    Ok(())
}

fn collect_notes(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            collect_notes(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
    Ok(())
}
