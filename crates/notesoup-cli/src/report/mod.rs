//! `report`: a session's window ledger as a terminal table, as JSON, or as
//! one self-contained HTML page (`--all`: every session of the project,
//! `all.rs`). The ledger is core's; this is only how it is shown, with the
//! budget lines the host's settings give and the notes' texts at their
//! calls (`texts.rs`).

mod all;
#[cfg(test)]
mod tests;
mod texts;

use std::fmt::Write as _;

use notesoup_core::budget::BudgetPolicy;
use notesoup_core::history::{EndReason, SessionLedger, WindowLedger};
use notesoup_core::tools::{Refusal, RefusalCode, ToolOutput};
use serde::Serialize;

pub use all::{ProjectReport, SessionRow, Trend, render_all_html, render_all_table};
pub use texts::{NoteText, NoteTexts, TextSource};

use crate::args::ReportArgs;
use crate::host::{CliHost, Purpose, Target, UsageError};
use crate::out::Out;
use crate::target::target;

/// Runs `report`; its exit code.
pub(crate) fn run<H: CliHost>(
    host: &mut H,
    args: ReportArgs<H::SessionArgs>,
    out: &mut Out,
) -> anyhow::Result<u8> {
    let ReportArgs {
        file,
        html,
        all,
        session,
    } = args;
    if all && (file.is_some() || session.session.is_some()) {
        return Err(UsageError("--all reports every session: give no session".to_owned()).into());
    }
    let file = file.map(|path| path.to_string_lossy().into_owned());
    let target = target(host, &session, file.as_deref())?;
    if all {
        return all::run(host, &target, html.as_deref(), session.json, out);
    }
    let ledger = host.ledger(&target, out)?;
    let report = session_report(host, &target, ledger, html.is_some(), out)?;
    if let Some(path) = &html {
        notesoup_core::durable::write(path, render_html(&report).as_bytes())
            .map_err(|error| anyhow::anyhow!("--html {}: {error}", path.display()))?;
    }
    if session.json {
        out.print(&serde_json::to_string(&report)?);
    } else {
        out.print(&render_table(&report.ledger));
    }
    Ok(0)
}

/// The budget lines a report draws, as the tokens used at which each is
/// reached in a window of `context_window` tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BudgetLines {
    /// The window the lines are placed in (the largest the session's
    /// windows record).
    pub context_window: u64,
    /// The one-time reminder.
    pub reminder_at: u64,
    /// The close-out warning.
    pub warning_at: u64,
    /// The hard reserve: a forced reset.
    pub reserve_at: u64,
}

impl BudgetLines {
    /// The lines of `policy` in a window of `context_window` tokens.
    pub fn new(policy: &BudgetPolicy, context_window: u64) -> Self {
        Self {
            context_window,
            reminder_at: context_window.saturating_sub(policy.reminder_line()),
            warning_at: context_window.saturating_sub(policy.warning_line()),
            reserve_at: context_window.saturating_sub(policy.reserve_line()),
        }
    }
}

/// One session's report: its ledger, the budget lines of the settings the
/// host reads now, and (for the page) the notes' texts at their calls.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionReport {
    /// The ledger.
    #[serde(flatten)]
    pub ledger: SessionLedger,
    /// The budget lines; `None` when no window records its size.
    pub budget: Option<BudgetLines>,
    /// The notes' texts (the page only: not in the JSON).
    #[serde(skip)]
    pub texts: NoteTexts,
}

/// The report of `ledger`, the session `target` names: its budget lines
/// and, when `with_texts`, the notes' texts (read through the host's notes
/// store; a failure is said in the page, never fatal).
fn session_report<H: CliHost>(
    host: &mut H,
    target: &Target<'_, H::SessionArgs>,
    ledger: SessionLedger,
    with_texts: bool,
    out: &mut Out,
) -> anyhow::Result<SessionReport> {
    let budget = match ledger.windows.iter().filter_map(|w| w.context_window).max() {
        Some(window) if window > 0 => host
            .budget(target, window, out)?
            .map(|policy| BudgetLines::new(&policy, window)),
        _ => None,
    };
    let texts = if with_texts {
        note_texts(host, target, &ledger, out)
    } else {
        NoteTexts::default()
    };
    Ok(SessionReport {
        ledger,
        budget,
        texts,
    })
}

/// The notes' texts through the host's notes store.
fn note_texts<H: CliHost>(
    host: &mut H,
    target: &Target<'_, H::SessionArgs>,
    ledger: &SessionLedger,
    out: &mut Out,
) -> NoteTexts {
    if ledger.windows.iter().all(|w| w.notes.is_empty()) {
        return NoteTexts::default();
    }
    let root = match target.notes_root() {
        Ok(root) => root.to_owned(),
        Err(error) => {
            return NoteTexts {
                unavailable: Some(error.to_string()),
                ..NoteTexts::default()
            };
        }
    };
    let mut texts = None;
    let opened = host.with_tools(target, Purpose::Notes, out, &mut |tools| {
        let store = tools
            .notes()
            .map_err(|refusal| anyhow::anyhow!("{}", refusal.message()))?;
        texts = Some(texts::note_texts(ledger, &store, &root));
        Ok(ToolOutput::refusal(&Refusal::new(
            RefusalCode::InternalError,
            "the report reads no tool",
        )))
    });
    match (opened, texts) {
        (Ok(_), Some(texts)) => texts,
        (Err(error), _) => NoteTexts {
            unavailable: Some(format!("{error:#}")),
            ..NoteTexts::default()
        },
        (Ok(_), None) => NoteTexts {
            unavailable: Some("the notes store was not opened".to_owned()),
            ..NoteTexts::default()
        },
    }
}

/// The window's size, where the host recorded one (a size of 0 is none:
/// a model that did not say).
fn recorded_size(window: &WindowLedger) -> Option<u64> {
    window.context_window.filter(|&size| size > 0)
}

/// The widest window id column: a longer id is cut with an ellipsis.
const MAX_ID_CELLS: usize = 60;

/// Width of a fill bar, in cells.
const BAR_CELLS: usize = 20;

/// The ledger as a terminal table: a summary line, then one row per window
/// with a fill bar, the end, the notes written, the checkpoint and the
/// re-orientation cost.
pub fn render_table(ledger: &SessionLedger) -> String {
    let mut text = String::new();
    let resets = ledger
        .ends
        .iter()
        .filter(|(reason, _)| **reason != EndReason::Open)
        .map(|(reason, count)| format!("{} {count}", reason.as_str()))
        .collect::<Vec<_>>();
    let _ = writeln!(
        text,
        "session {}: {} windows, {} resets{}, {} summaries slipped through, {} notes written, {} tool calls",
        ledger.session_id,
        ledger.windows.len(),
        ledger
            .ends
            .iter()
            .filter(|(reason, _)| **reason != EndReason::Open)
            .map(|(_, count)| count)
            .sum::<u32>(),
        if resets.is_empty() {
            String::new()
        } else {
            format!(" ({})", resets.join(", "))
        },
        ledger.slipped_summaries,
        ledger.notes_written,
        ledger.tool_calls,
    );
    let scale = fill_scale(ledger);
    let id_width = ledger
        .windows
        .iter()
        .map(|w| w.window_id.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(6, MAX_ID_CELLS);
    let _ = writeln!(
        text,
        "{:>3}  {:<id_width$}  {:<11}  {:<width$}  {:>15}  {:<15}  {:>5}  {:<10}  reorientation",
        "#",
        "window",
        "seqs",
        "fill",
        "tokens",
        "end",
        "notes",
        "checkpoint",
        width = BAR_CELLS + 2,
    );
    for (index, window) in ledger.windows.iter().enumerate() {
        let seqs = match (window.first_seq, window.last_seq) {
            (Some(first), Some(last)) => format!("{first}-{last}"),
            _ => "-".to_owned(),
        };
        let tokens = match (window.tokens_at_end, recorded_size(window)) {
            (Some(tokens), Some(size)) => format!("{tokens}/{size}"),
            (Some(tokens), None) => format!("{tokens}/?"),
            (None, _) => "-".to_owned(),
        };
        let checkpoint = match window.checkpoint_chars {
            Some(chars) => format!("yes {chars}c"),
            None => "no".to_owned(),
        };
        let reorientation = match window.reorientation {
            None => "-".to_owned(),
            Some(cost) => {
                let tokens = cost
                    .tokens
                    .map_or_else(String::new, |tokens| format!(", {tokens} tokens"));
                if cost.reached_work {
                    format!("{} calls{tokens}", cost.tool_calls)
                } else {
                    format!("{} calls, no work yet", cost.tool_calls)
                }
            }
        };
        let _ = writeln!(
            text,
            "{:>3}  {:<id_width$}  {:<11}  {}  {:>15}  {:<15}  {:>5}  {:<10}  {}",
            index + 1,
            ellipsize(&window.window_id, id_width),
            seqs,
            fill_bar(window, scale),
            tokens,
            window.end.as_str(),
            window.notes.len(),
            checkpoint,
            reorientation,
        );
    }
    if scale.is_some_and(|(_, known)| !known) {
        text.push_str(
            "fill: relative to the fullest window (the context window is not recorded)\n",
        );
    }
    text
}

/// What a bar's full width stands for: the context window when every window
/// records one, else the fullest window's tokens (`false`).
fn fill_scale(ledger: &SessionLedger) -> Option<(u64, bool)> {
    let sizes: Option<Vec<u64>> = ledger.windows.iter().map(recorded_size).collect();
    if let Some(size) = sizes.and_then(|sizes| sizes.into_iter().max()) {
        return Some((size, true));
    }
    ledger
        .windows
        .iter()
        .filter_map(|w| w.tokens_at_end)
        .max()
        .filter(|&max| max > 0)
        .map(|max| (max, false))
}

fn fill_bar(window: &WindowLedger, scale: Option<(u64, bool)>) -> String {
    let full = match (window.tokens_at_end, scale) {
        (Some(tokens), Some((size, _))) => {
            let size = recorded_size(window).unwrap_or(size).max(1);
            let cells = u128::from(tokens.min(size)) * BAR_CELLS as u128 / u128::from(size);
            usize::try_from(cells).unwrap_or(BAR_CELLS)
        }
        _ => 0,
    };
    format!("[{}{}]", "#".repeat(full), ".".repeat(BAR_CELLS - full))
}

fn ellipsize(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let head: String = text.chars().take(width - 1).collect();
    format!("{head}…")
}

/// Points a timeline draws at most: a long session's fill is thinned, each
/// window keeping its first and last sample.
const MAX_POINTS: usize = 2000;

/// The most chars of one note's text the page embeds; the rest is cut
/// with a marker.
pub const MAX_NOTE_TEXT_CHARS: usize = 16 * 1024;

/// The most chars of note texts one page embeds in all; the notes past it
/// are listed with their text left out, with a marker.
pub const MAX_PAGE_TEXT_CHARS: usize = 2 * 1024 * 1024;

/// A page's opening up to its heading: the strict content policy (no
/// network, no script), the style, and `title` as title and heading.
fn page_head(page: &mut String, title: &str) {
    let title = escape(title);
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\
         <title>{title}</title><style>{STYLE}</style></head><body>\n<h1>{title}</h1>\n",
    );
}

/// The report as one self-contained HTML page: no network, no script, no
/// external font; an inline SVG timeline of every window's fill with the
/// resets marked by origin, the context window as the top line and the
/// budget lines (reminder, warning, reserve) below it, the ledger table,
/// and the notes each window wrote with their text right after the call
/// (one `<details>` each, linked from the table; bounded, with a marker
/// where cut).
pub fn render_html(report: &SessionReport) -> String {
    let ledger = &report.ledger;
    let mut page = String::with_capacity(16 * 1024);
    let title = format!("notesoup report: session {}", ledger.session_id);
    page_head(&mut page, &title);
    let resets: u32 = ledger
        .ends
        .iter()
        .filter(|(reason, _)| **reason != EndReason::Open)
        .map(|(_, count)| count)
        .sum();
    let _ = writeln!(
        page,
        "<p id=\"summary\" data-windows=\"{}\" data-resets=\"{resets}\" data-slipped=\"{}\">{} windows, {resets} resets, {} summaries slipped through, {} notes written, {} tool calls.</p>",
        ledger.windows.len(),
        ledger.slipped_summaries,
        ledger.windows.len(),
        ledger.slipped_summaries,
        ledger.notes_written,
        ledger.tool_calls,
    );
    timeline(&mut page, ledger, report.budget.as_ref());
    ledger_table(&mut page, ledger);
    notes_section(&mut page, ledger, &report.texts);
    page.push_str("</body></html>\n");
    page
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}\
table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:.2em .5em;text-align:left}\
svg{border:1px solid #ccc;background:#fafafa}.fill{fill:none;stroke:#2a6fdb;stroke-width:1.5}\
.reset line{stroke-width:2}.reset text{font-size:10px}.limit{stroke:#999;stroke-dasharray:4 3}\
.bar{display:inline-block;height:.8em;background:#2a6fdb}.barbox{display:inline-block;width:8em;background:#e4e4e4}\
pre{white-space:pre-wrap;background:#f4f4f4;padding:.5em;max-height:20em;overflow:auto}\
.budget line{stroke-width:1;stroke-dasharray:2 3}.budget-reminder{stroke:#66a61e}.budget-warning{stroke:#d95f02}\
.budget-reserve{stroke:#e7298a}.truncated{color:#a00;font-style:italic}.source{color:#555;font-size:.9em}\
.trend polyline{fill:none;stroke:#2a6fdb;stroke-width:1.5}.trend circle{fill:#2a6fdb}";

fn end_color(reason: EndReason) -> &'static str {
    match reason {
        EndReason::Tool => "#1b9e77",
        EndReason::Manual => "#7570b3",
        EndReason::Budget => "#66a61e",
        EndReason::HardReserve => "#d95f02",
        EndReason::Overflow => "#e7298a",
        EndReason::HostCompaction => "#a6761d",
        EndReason::Clear => "#666666",
        EndReason::Reset => "#444444",
        EndReason::Open => "#bbbbbb",
    }
}

fn timeline(page: &mut String, ledger: &SessionLedger, budget: Option<&BudgetLines>) {
    const WIDTH: u64 = 900;
    const HEIGHT: u64 = 240;
    const PAD: u64 = 20;
    let last_seq = ledger
        .windows
        .iter()
        .filter_map(|w| w.last_seq)
        .max()
        .unwrap_or(1)
        .max(1);
    let top = fill_scale(ledger).map_or(1, |(size, _)| size).max(1);
    let x = |seq: u32| PAD + u64::from(seq) * (WIDTH - 2 * PAD) / u64::from(last_seq);
    let y = |tokens: u64| {
        HEIGHT
            - PAD
            - u64::try_from(
                u128::from(tokens.min(top)) * u128::from(HEIGHT - 2 * PAD) / u128::from(top),
            )
            .unwrap_or(0)
    };
    let _ = write!(
        page,
        "<h2>Timeline</h2>\n<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" aria-label=\"context fill over the session\">\n<line class=\"limit\" x1=\"{PAD}\" y1=\"{top_y}\" x2=\"{right}\" y2=\"{top_y}\"/><text x=\"{PAD}\" y=\"{label_y}\" font-size=\"10\">{top} tokens</text>\n",
        top_y = y(top),
        right = WIDTH - PAD,
        label_y = PAD - 6,
    );
    if let Some(lines) = budget {
        // Each label at its own place along the line: the lines may lie
        // a few pixels apart.
        for (slot, (name, at)) in [
            ("reminder", lines.reminder_at),
            ("warning", lines.warning_at),
            ("reserve", lines.reserve_at),
        ]
        .into_iter()
        .enumerate()
        {
            let _ = writeln!(
                page,
                "<g class=\"budget\" data-line=\"{name}\" data-tokens=\"{at}\"><line class=\"budget-{name}\" x1=\"{PAD}\" y1=\"{ly}\" x2=\"{right}\" y2=\"{ly}\"/><text x=\"{tx}\" y=\"{ty}\" font-size=\"10\">{name} {at}</text></g>",
                ly = y(at),
                right = WIDTH - PAD,
                tx = WIDTH - PAD - 110 * (slot as u64 + 1),
                ty = y(at).saturating_sub(3),
            );
        }
    }
    let total: usize = ledger.windows.iter().map(|w| w.fill.len()).sum();
    let step = total.div_ceil(MAX_POINTS).max(1);
    for (index, window) in ledger.windows.iter().enumerate() {
        let mut points = String::new();
        let count = window.fill.len();
        for (position, &(seq, tokens)) in window.fill.iter().enumerate() {
            if position % step == 0 || position + 1 == count {
                let _ = write!(points, "{},{} ", x(seq), y(tokens));
            }
        }
        let _ = writeln!(
            page,
            "<polyline class=\"fill\" data-window=\"{}\" points=\"{}\"/>",
            index + 1,
            points.trim_end()
        );
        if window.end != EndReason::Open {
            let at = x(window.last_seq.unwrap_or(0));
            let _ = writeln!(
                page,
                "<g class=\"reset\" data-origin=\"{origin}\"><line x1=\"{at}\" y1=\"{PAD}\" x2=\"{at}\" y2=\"{bottom}\" stroke=\"{color}\"/><text x=\"{tx}\" y=\"{ty}\" fill=\"{color}\">{origin}</text></g>",
                origin = window.end.as_str(),
                color = end_color(window.end),
                bottom = HEIGHT - PAD,
                tx = at + 2,
                ty = PAD + 10 + 12 * (index as u64 % 4),
            );
        }
    }
    page.push_str("</svg>\n");
    match budget {
        Some(lines) => {
            let _ = writeln!(
                page,
                "<p id=\"budget\">Budget lines, from the settings as they are now, in a {} token window: reminder at {} tokens used, warning at {}, hard reserve at {}.</p>",
                lines.context_window, lines.reminder_at, lines.warning_at, lines.reserve_at
            );
        }
        None => page.push_str(
            "<p id=\"budget\">No budget lines: no window records the context window's size.</p>\n",
        ),
    }
}

fn ledger_table(page: &mut String, ledger: &SessionLedger) {
    page.push_str(
        "<h2>Windows</h2>\n<table id=\"ledger\"><thead><tr><th>#</th><th>window</th><th>seqs</th>\
         <th>started</th><th>fill</th><th>tokens</th><th>end</th><th>notices</th><th>notes</th>\
         <th>checkpoint</th><th>reorientation</th></tr></thead><tbody>\n",
    );
    let scale = fill_scale(ledger);
    for (index, window) in ledger.windows.iter().enumerate() {
        let percent = match (window.tokens_at_end, scale) {
            (Some(tokens), Some((size, _))) => {
                let size = recorded_size(window).unwrap_or(size).max(1);
                u128::from(tokens.min(size)) * 100 / u128::from(size)
            }
            _ => 0,
        };
        let seqs = match (window.first_seq, window.last_seq) {
            (Some(first), Some(last)) => format!("{first}–{last}"),
            _ => "–".to_owned(),
        };
        let tokens = match (window.tokens_at_end, recorded_size(window)) {
            (Some(tokens), Some(size)) => format!("{tokens} / {size}"),
            (Some(tokens), None) => tokens.to_string(),
            (None, _) => "–".to_owned(),
        };
        let notices = window
            .notices
            .iter()
            .map(|notice| {
                let kind = match notice.kind {
                    notesoup_core::history::NoticeKind::Reminder => "reminder",
                    notesoup_core::history::NoticeKind::Warning => "warning",
                };
                match notice.tokens {
                    Some(tokens) => format!("{kind} at {tokens}"),
                    None => kind.to_owned(),
                }
            })
            .collect::<Vec<_>>()
            .join(", ");
        let notes = window
            .notes
            .iter()
            .map(|note| {
                format!(
                    "<a href=\"#note-{}\">{}</a>",
                    note.seq,
                    escape(&note.address)
                )
            })
            .collect::<Vec<_>>()
            .join("<br>");
        let checkpoint = match window.checkpoint_chars {
            Some(chars) => format!("yes ({chars} chars)"),
            None => "no".to_owned(),
        };
        let reorientation = match window.reorientation {
            None => "–".to_owned(),
            Some(cost) if cost.reached_work => format!(
                "{} calls{}",
                cost.tool_calls,
                cost.tokens
                    .map_or_else(String::new, |tokens| format!(", {tokens} tokens"))
            ),
            Some(cost) => format!("{} calls, no work yet", cost.tool_calls),
        };
        let _ = writeln!(
            page,
            "<tr class=\"window\" data-end=\"{end}\"><td>{n}</td><td>{id}</td><td>{seqs}</td><td>{started}</td>\
             <td><span class=\"barbox\"><span class=\"bar\" style=\"width:{percent}%\"></span></span> {percent}%</td>\
             <td>{tokens}</td><td style=\"color:{color}\">{end}</td><td>{notices}</td><td>{notes}</td><td>{checkpoint}</td><td>{reorientation}</td></tr>",
            end = window.end.as_str(),
            n = index + 1,
            id = escape(&window.window_id),
            started = escape(window.started_at.as_deref().unwrap_or("–")),
            color = end_color(window.end),
            notices = escape(&notices),
        );
    }
    page.push_str("</tbody></table>\n");
}

fn notes_section(page: &mut String, ledger: &SessionLedger, texts: &NoteTexts) {
    page.push_str("<h2>Notes written</h2>\n");
    let source = match (&texts.unavailable, texts.git) {
        (Some(reason), _) => format!(
            "The notes' texts could not be read ({}): each note shows what its call carried.",
            escape(reason)
        ),
        (None, true) => "Each note shows its text right after the call: a write's content, an update applied to this session's earlier text of the note, else to the note in the notes' Git history (the notes root is a Git repository), else the note as it is now, as each says.".to_owned(),
        (None, false) => match &texts.git_error {
            Some(error) => format!("Each note shows its text right after the call: a write's content, an update applied to this session's earlier text of the note, else the note as it is now (the notes' Git history could not be read: {}), as each says.", escape(error)),
            None => "Each note shows its text right after the call: a write's content, an update applied to this session's earlier text of the note, else the note as it is now (the notes root is not a Git repository), as each says.".to_owned(),
        },
    };
    let _ = writeln!(
        page,
        "<p id=\"note-source\" data-git=\"{}\">{source}</p>",
        texts.git
    );
    let mut any = false;
    let mut budget = MAX_PAGE_TEXT_CHARS;
    for (index, window) in ledger.windows.iter().enumerate() {
        if window.notes.is_empty() {
            continue;
        }
        any = true;
        let _ = writeln!(
            page,
            "<h3>Window {} ({})</h3>",
            index + 1,
            escape(&window.window_id)
        );
        for note in &window.notes {
            let (text, source) = match texts.by_seq.get(&note.seq) {
                Some(shown) => (shown.text.as_str(), source_words(&shown.source)),
                None => (note.text.as_str(), "what the call carried".to_owned()),
            };
            let _ = write!(
                page,
                "<details class=\"note\" id=\"note-{seq}\" data-source=\"{kind}\"><summary>seq {seq}: {op} {address} ({chars} chars){checkpoint}</summary><p class=\"source\">{source}</p>",
                seq = note.seq,
                kind = texts
                    .by_seq
                    .get(&note.seq)
                    .map_or("call", |shown| source_kind(&shown.source)),
                op = note.op,
                address = escape(&note.address),
                chars = note.chars,
                checkpoint = if note.checkpoint { ", checkpoint" } else { "" },
                source = escape(&source),
            );
            let total = text.chars().count();
            let room = MAX_NOTE_TEXT_CHARS.min(budget);
            let shown: String = text.chars().take(room).collect();
            let shown_chars = total.min(room);
            budget -= shown_chars;
            let _ = write!(page, "<pre>{}</pre>", escape(&shown));
            if shown_chars < total {
                let _ = write!(
                    page,
                    "<p class=\"truncated\">truncated: {shown_chars} of {total} chars shown</p>"
                );
            }
            page.push_str("</details>\n");
        }
    }
    if !any {
        page.push_str("<p>No notes were written.</p>\n");
    }
}

fn source_kind(source: &TextSource) -> &'static str {
    match source {
        TextSource::Written => "written",
        TextSource::Replayed { .. } => "replayed",
        TextSource::Git { .. } => "git",
        TextSource::Current { .. } => "current",
        TextSource::Unknown { .. } => "unknown",
    }
}

fn source_words(source: &TextSource) -> String {
    match source {
        TextSource::Written => "The content this call wrote.".to_owned(),
        TextSource::Replayed { seq } => {
            format!("This update applied to the note as this session's call at seq {seq} left it.")
        }
        TextSource::Git {
            commit,
            committed_at,
        } => format!(
            "This update applied to the note as audit commit {commit} ({committed_at}) holds it."
        ),
        TextSource::Current { reason } => format!("The note as it is now: {reason}."),
        TextSource::Unknown { reason } => format!("No text: {reason}."),
    }
}

fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            _ => escaped.push(character),
        }
    }
    escaped
}
