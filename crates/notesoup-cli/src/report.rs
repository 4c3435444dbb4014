//! `report`: a session's window ledger as a terminal table, as JSON, or as
//! one self-contained HTML page. The ledger is core's; this is only how it
//! is shown.

use std::fmt::Write as _;

use notesoup_core::history::{EndReason, SessionLedger, WindowLedger};

use crate::args::ReportArgs;
use crate::host::CliHost;
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
        session,
    } = args;
    let file = file.map(|path| path.to_string_lossy().into_owned());
    let target = target(host, &session, file.as_deref())?;
    let ledger = host.ledger(&target, out)?;
    if let Some(path) = &html {
        notesoup_core::durable::write(path, render_html(&ledger).as_bytes())
            .map_err(|error| anyhow::anyhow!("--html {}: {error}", path.display()))?;
    }
    if session.json {
        out.print(&serde_json::to_string(&ledger)?);
    } else {
        out.print(&render_table(&ledger));
    }
    Ok(0)
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
        let tokens = match (window.tokens_at_end, window.context_window) {
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
    let sizes: Option<Vec<u64>> = ledger.windows.iter().map(|w| w.context_window).collect();
    if let Some(size) = sizes.and_then(|sizes| sizes.into_iter().max())
        && size > 0
    {
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
            let size = window.context_window.unwrap_or(size).max(1);
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

/// The ledger as one self-contained HTML page: no network, no script, no
/// external font; an inline SVG timeline of every window's fill with the
/// resets marked by origin and the context window as the top line, the
/// notes each window wrote (their text as written, one link each), and the
/// ledger table.
pub fn render_html(ledger: &SessionLedger) -> String {
    let mut page = String::with_capacity(16 * 1024);
    let title = format!("notesoup report: session {}", ledger.session_id);
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        escape(&title),
        escape(&title),
    );
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
    timeline(&mut page, ledger);
    ledger_table(&mut page, ledger);
    notes_section(&mut page, ledger);
    page.push_str("</body></html>\n");
    page
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}\
table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:.2em .5em;text-align:left}\
svg{border:1px solid #ccc;background:#fafafa}.fill{fill:none;stroke:#2a6fdb;stroke-width:1.5}\
.reset line{stroke-width:2}.reset text{font-size:10px}.limit{stroke:#999;stroke-dasharray:4 3}\
.bar{display:inline-block;height:.8em;background:#2a6fdb}.barbox{display:inline-block;width:8em;background:#e4e4e4}\
pre{white-space:pre-wrap;background:#f4f4f4;padding:.5em;max-height:20em;overflow:auto}";

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

fn timeline(page: &mut String, ledger: &SessionLedger) {
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
                let size = window.context_window.unwrap_or(size).max(1);
                u128::from(tokens.min(size)) * 100 / u128::from(size)
            }
            _ => 0,
        };
        let seqs = match (window.first_seq, window.last_seq) {
            (Some(first), Some(last)) => format!("{first}–{last}"),
            _ => "–".to_owned(),
        };
        let tokens = match (window.tokens_at_end, window.context_window) {
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

fn notes_section(page: &mut String, ledger: &SessionLedger) {
    page.push_str("<h2>Notes written</h2>\n");
    let mut any = false;
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
            let _ = writeln!(
                page,
                "<details class=\"note\" id=\"note-{seq}\"><summary>seq {seq}: {op} {address} ({chars} chars){checkpoint}</summary><pre>{text}</pre></details>",
                seq = note.seq,
                op = note.op,
                address = escape(&note.address),
                chars = note.chars,
                checkpoint = if note.checkpoint { ", checkpoint" } else { "" },
                text = escape(&note.text),
            );
        }
    }
    if !any {
        page.push_str("<p>No notes were written.</p>\n");
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
