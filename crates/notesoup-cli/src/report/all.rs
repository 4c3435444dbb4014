//! `report --all`: every recorded session of a project, one row each with
//! its totals, and the trends across them (resets per session, the fill at
//! a reset, the re-orientation cost), as a table, JSON or one page.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use notesoup_core::history::{EndReason, SessionLedger};
use serde::Serialize;

use super::{escape, page_head};
use crate::host::{CliHost, Target};
use crate::out::Out;

/// One session's row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionRow {
    /// The session as the host lists it (`--session` takes it).
    pub session: String,
    /// Its id, once read.
    pub session_id: Option<String>,
    /// When its first window began.
    pub started_at: Option<String>,
    /// Windows.
    pub windows: u32,
    /// Windows ended by a reset (the open one not counted).
    pub resets: u32,
    /// Those resets by origin.
    pub resets_by_origin: BTreeMap<EndReason, u32>,
    /// The mean fill at a reset, in percent of the window, over the resets
    /// whose window size is recorded.
    pub fill_at_reset_percent: Option<f64>,
    /// The mean tokens at a reset.
    pub tokens_at_reset: Option<u64>,
    /// The mean notes, history and budget calls a fresh window made before
    /// its first work call.
    pub reorientation_calls: Option<f64>,
    /// The mean context tokens at that first work call.
    pub reorientation_tokens: Option<u64>,
    /// Summaries that slipped through.
    pub slipped_summaries: u32,
    /// Notes written or updated.
    pub notes_written: u32,
    /// Tool calls.
    pub tool_calls: u32,
    /// Why the session could not be read (its other fields are empty).
    pub error: Option<String>,
}

/// One measure over the sessions, oldest first, and its mean over the
/// earlier and the later half of them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trend {
    /// What is measured.
    pub metric: &'static str,
    /// Per session (`None`: nothing to measure there).
    pub values: Vec<Option<f64>>,
    /// The mean over the earlier half of the sessions.
    pub earlier: Option<f64>,
    /// The mean over the later half.
    pub later: Option<f64>,
}

/// Every session of one project.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProjectReport {
    /// The project's directory.
    pub project: String,
    /// One row per session, oldest first.
    pub sessions: Vec<SessionRow>,
    /// Windows over every session.
    pub windows: u32,
    /// Resets over every session.
    pub resets: u32,
    /// Those resets by origin.
    pub resets_by_origin: BTreeMap<EndReason, u32>,
    /// Summaries that slipped through, over every session.
    pub slipped_summaries: u32,
    /// Notes written or updated, over every session.
    pub notes_written: u32,
    /// Tool calls over every session.
    pub tool_calls: u32,
    /// Resets per session, the fill at a reset and the re-orientation
    /// cost, over time.
    pub trends: Vec<Trend>,
}

/// Runs `report --all`; its exit code (1 when a session could not be read:
/// its row says why, the others are reported).
pub(super) fn run<H: CliHost>(
    host: &mut H,
    target: &Target<'_, H::SessionArgs>,
    html: Option<&Path>,
    json: bool,
    out: &mut Out,
) -> anyhow::Result<u8> {
    let sessions = host.sessions(target, out)?;
    let targets: Vec<Target<'_, H::SessionArgs>> = sessions
        .iter()
        .map(|session| Target {
            cwd: target.cwd.clone(),
            session: Some(session.as_str()),
            notes_root: target.notes_root.clone(),
            host: target.host,
        })
        .collect();
    let ledgers = host.ledgers(&targets, out);
    let rows = sessions
        .iter()
        .zip(ledgers)
        .map(|(session, ledger)| match ledger {
            Ok(ledger) => session_row(session, &ledger),
            Err(error) => {
                out.warn(&format!("{} report: {session}: {error:#}", H::BIN));
                failed_row(session, format!("{error:#}"))
            }
        })
        .collect();
    let project = target.cwd_or_current()?.display().to_string();
    let report = project_report(project, rows);
    if let Some(path) = html {
        notesoup_core::durable::write(path, render_all_html(&report).as_bytes())
            .map_err(|error| anyhow::anyhow!("--html {}: {error}", path.display()))?;
    }
    if json {
        out.print(&serde_json::to_string(&report)?);
    } else {
        out.print(&render_all_table(&report));
    }
    Ok(u8::from(
        report.sessions.iter().any(|row| row.error.is_some()),
    ))
}

fn failed_row(session: &str, error: String) -> SessionRow {
    SessionRow {
        session: session.to_owned(),
        session_id: None,
        started_at: None,
        windows: 0,
        resets: 0,
        resets_by_origin: BTreeMap::new(),
        fill_at_reset_percent: None,
        tokens_at_reset: None,
        reorientation_calls: None,
        reorientation_tokens: None,
        slipped_summaries: 0,
        notes_written: 0,
        tool_calls: 0,
        error: Some(error),
    }
}

impl SessionRow {
    /// The row of `session` (as the host lists it) from its ledger.
    pub fn of(session: &str, ledger: &SessionLedger) -> Self {
        session_row(session, ledger)
    }
}

impl ProjectReport {
    /// The report of `project` over its sessions' rows, oldest first: the
    /// totals and the trends.
    pub fn new(project: String, sessions: Vec<SessionRow>) -> Self {
        project_report(project, sessions)
    }
}

/// A session's row from its ledger.
fn session_row(session: &str, ledger: &SessionLedger) -> SessionRow {
    let resets: Vec<_> = ledger
        .windows
        .iter()
        .filter(|w| w.end != EndReason::Open)
        .collect();
    let percents: Vec<f64> = resets
        .iter()
        .filter_map(|w| match (w.tokens_at_end, w.context_window) {
            (Some(tokens), Some(size)) if size > 0 => Some(tokens as f64 * 100.0 / size as f64),
            _ => None,
        })
        .collect();
    let fresh: Vec<_> = ledger
        .windows
        .iter()
        .filter_map(|w| w.reorientation)
        .collect();
    SessionRow {
        session: session.to_owned(),
        session_id: Some(ledger.session_id.clone()),
        started_at: ledger.windows.first().and_then(|w| w.started_at.clone()),
        windows: count(ledger.windows.len()),
        resets: count(resets.len()),
        resets_by_origin: ledger
            .ends
            .iter()
            .filter(|(reason, _)| **reason != EndReason::Open)
            .map(|(reason, n)| (*reason, *n))
            .collect(),
        fill_at_reset_percent: mean(&percents).map(round1),
        tokens_at_reset: mean_u64(resets.iter().filter_map(|w| w.tokens_at_end)),
        reorientation_calls: mean(
            &fresh
                .iter()
                .map(|r| f64::from(r.tool_calls))
                .collect::<Vec<_>>(),
        )
        .map(round1),
        reorientation_tokens: mean_u64(fresh.iter().filter_map(|r| r.tokens)),
        slipped_summaries: ledger.slipped_summaries,
        notes_written: ledger.notes_written,
        tool_calls: ledger.tool_calls,
        error: None,
    }
}

/// One value of a session row a trend is taken over; `None` when the
/// session has none.
type SessionValue = fn(&SessionRow) -> Option<f64>;

/// The project's report over its rows.
fn project_report(project: String, sessions: Vec<SessionRow>) -> ProjectReport {
    let mut resets_by_origin = BTreeMap::new();
    for row in &sessions {
        for (reason, n) in &row.resets_by_origin {
            *resets_by_origin.entry(*reason).or_insert(0) += n;
        }
    }
    let read: Vec<&SessionRow> = sessions.iter().filter(|r| r.error.is_none()).collect();
    let metrics: [(&'static str, SessionValue); 5] = [
        ("resets per session", |r| Some(f64::from(r.resets))),
        ("fill at a reset (% of the window)", |r| {
            r.fill_at_reset_percent
        }),
        ("tokens at a reset", |r| r.tokens_at_reset.map(|t| t as f64)),
        ("re-orientation calls per fresh window", |r| {
            r.reorientation_calls
        }),
        ("re-orientation tokens per fresh window", |r| {
            r.reorientation_tokens.map(|t| t as f64)
        }),
    ];
    let trends = metrics
        .into_iter()
        .map(|(metric, value)| trend(metric, read.iter().map(|r| value(r)).collect()))
        .collect();
    ProjectReport {
        project,
        windows: sessions.iter().map(|r| r.windows).sum(),
        resets: sessions.iter().map(|r| r.resets).sum(),
        resets_by_origin,
        slipped_summaries: sessions.iter().map(|r| r.slipped_summaries).sum(),
        notes_written: sessions.iter().map(|r| r.notes_written).sum(),
        tool_calls: sessions.iter().map(|r| r.tool_calls).sum(),
        trends,
        sessions,
    }
}

fn trend(metric: &'static str, values: Vec<Option<f64>>) -> Trend {
    let half = values.len() / 2;
    let known = |part: &[Option<f64>]| mean(&part.iter().flatten().copied().collect::<Vec<_>>());
    Trend {
        metric,
        earlier: known(&values[..half]).map(round1),
        later: known(&values[half..]).map(round1),
        values,
    }
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

fn mean_u64(values: impl Iterator<Item = u64>) -> Option<u64> {
    let (sum, n) = values.fold((0u128, 0u128), |(sum, n), v| (sum + u128::from(v), n + 1));
    (n > 0).then(|| u64::try_from(sum / n).unwrap_or(u64::MAX))
}

fn round1(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn origins(by: &BTreeMap<EndReason, u32>) -> String {
    by.iter()
        .map(|(reason, n)| format!("{} {n}", reason.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The fill at a reset: the percent of the window, else the tokens.
fn fill_at_reset(row: &SessionRow) -> String {
    match (row.fill_at_reset_percent, row.tokens_at_reset) {
        (Some(percent), _) => format!("{percent}%"),
        (None, Some(tokens)) => format!("{tokens}t"),
        (None, None) => "-".to_owned(),
    }
}

fn or_dash<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

/// The project's report as a terminal table: a summary line, one row per
/// session, then each trend's earlier and later mean.
pub fn render_all_table(report: &ProjectReport) -> String {
    let mut text = String::new();
    let by = origins(&report.resets_by_origin);
    let _ = writeln!(
        text,
        "project {}: {} sessions, {} windows, {} resets{}, {} summaries slipped through, {} notes written, {} tool calls",
        report.project,
        report.sessions.len(),
        report.windows,
        report.resets,
        if by.is_empty() {
            String::new()
        } else {
            format!(" ({by})")
        },
        report.slipped_summaries,
        report.notes_written,
        report.tool_calls,
    );
    let _ = writeln!(
        text,
        "{:>3}  {:<38}  {:<24}  {:>7}  {:>6}  {:>11}  {:>13}  {:>7}  {:>5}",
        "#",
        "session",
        "started",
        "windows",
        "resets",
        "at reset",
        "reorientation",
        "slipped",
        "notes"
    );
    for (index, row) in report.sessions.iter().enumerate() {
        let id = row
            .session_id
            .as_deref()
            .filter(|id| !id.is_empty())
            .unwrap_or(&row.session);
        if let Some(error) = &row.error {
            let _ = writeln!(
                text,
                "{:>3}  {:<38}  unreadable: {error}",
                index + 1,
                super::ellipsize(id, 38)
            );
            continue;
        }
        let reorientation = match (row.reorientation_calls, row.reorientation_tokens) {
            (None, _) => "-".to_owned(),
            (Some(calls), None) => format!("{calls} calls"),
            (Some(calls), Some(tokens)) => format!("{calls}c {tokens}t"),
        };
        let _ = writeln!(
            text,
            "{:>3}  {:<38}  {:<24}  {:>7}  {:>6}  {:>11}  {:>13}  {:>7}  {:>5}",
            index + 1,
            super::ellipsize(id, 38),
            super::ellipsize(row.started_at.as_deref().unwrap_or("-"), 24),
            row.windows,
            row.resets,
            fill_at_reset(row),
            reorientation,
            row.slipped_summaries,
            row.notes_written,
        );
    }
    text.push_str("trends (mean over the earlier half of the sessions -> the later half):\n");
    for trend in &report.trends {
        let _ = writeln!(
            text,
            "  {}: {} -> {}",
            trend.metric,
            or_dash(trend.earlier),
            or_dash(trend.later)
        );
    }
    text
}

/// The project's report as one self-contained page: the summary, one row
/// per session, and a small chart per trend (no script, no network).
pub fn render_all_html(report: &ProjectReport) -> String {
    let mut page = String::with_capacity(8 * 1024);
    let title = format!("notesoup report: project {}", report.project);
    page_head(&mut page, &title);
    let _ = writeln!(
        page,
        "<p id=\"summary\" data-sessions=\"{}\" data-windows=\"{}\" data-resets=\"{}\" data-slipped=\"{}\">{} sessions, {} windows, {} resets{}, {} summaries slipped through, {} notes written, {} tool calls.</p>",
        report.sessions.len(),
        report.windows,
        report.resets,
        report.slipped_summaries,
        report.sessions.len(),
        report.windows,
        report.resets,
        {
            let by = origins(&report.resets_by_origin);
            if by.is_empty() {
                String::new()
            } else {
                format!(" ({})", escape(&by))
            }
        },
        report.slipped_summaries,
        report.notes_written,
        report.tool_calls,
    );
    page.push_str(
        "<h2>Sessions</h2>\n<table id=\"sessions\"><thead><tr><th>#</th><th>session</th><th>started</th>\
         <th>windows</th><th>resets</th><th>fill at reset</th><th>reorientation</th><th>slipped</th>\
         <th>notes</th><th>tool calls</th></tr></thead><tbody>\n",
    );
    for (index, row) in report.sessions.iter().enumerate() {
        let id = escape(
            row.session_id
                .as_deref()
                .filter(|id| !id.is_empty())
                .unwrap_or(&row.session),
        );
        if let Some(error) = &row.error {
            let _ = writeln!(
                page,
                "<tr class=\"session unreadable\"><td>{}</td><td>{id}</td><td colspan=\"8\">unreadable: {}</td></tr>",
                index + 1,
                escape(error)
            );
            continue;
        }
        let reorientation = match (row.reorientation_calls, row.reorientation_tokens) {
            (None, _) => "–".to_owned(),
            (Some(calls), None) => format!("{calls} calls"),
            (Some(calls), Some(tokens)) => format!("{calls} calls, {tokens} tokens"),
        };
        let by = origins(&row.resets_by_origin);
        let _ = writeln!(
            page,
            "<tr class=\"session\" data-resets=\"{resets}\"><td>{n}</td><td title=\"{file}\">{id}</td><td>{started}</td><td>{windows}</td>\
             <td>{resets}{by}</td><td>{fill}</td><td>{reorientation}</td><td>{slipped}</td><td>{notes}</td><td>{calls}</td></tr>",
            n = index + 1,
            file = escape(&row.session),
            started = escape(row.started_at.as_deref().unwrap_or("–")),
            windows = row.windows,
            resets = row.resets,
            by = if by.is_empty() {
                String::new()
            } else {
                format!(" ({})", escape(&by))
            },
            fill = fill_at_reset(row),
            slipped = row.slipped_summaries,
            notes = row.notes_written,
            calls = row.tool_calls,
        );
    }
    page.push_str("</tbody></table>\n<h2>Trends</h2>\n<p>Each chart runs over the sessions, oldest on the left; the figures are the mean over the earlier half of the sessions and over the later half.</p>\n");
    for trend in &report.trends {
        trend_chart(&mut page, trend);
    }
    page.push_str("</body></html>\n");
    page
}

fn trend_chart(page: &mut String, trend: &Trend) {
    const WIDTH: f64 = 420.0;
    const HEIGHT: f64 = 90.0;
    const PAD: f64 = 12.0;
    let top = trend
        .values
        .iter()
        .flatten()
        .copied()
        .fold(0.0_f64, f64::max)
        .max(1.0);
    let n = trend.values.len().max(2) - 1;
    let x = |i: usize| PAD + i as f64 * (WIDTH - 2.0 * PAD) / n as f64;
    let y = |v: f64| HEIGHT - PAD - v.min(top) * (HEIGHT - 2.0 * PAD) / top;
    let points: Vec<String> = trend
        .values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|v| format!("{:.1},{:.1}", x(i), y(v))))
        .collect();
    let _ = write!(
        page,
        "<figure class=\"trend\" data-metric=\"{metric}\"><figcaption>{metric}: {earlier} → {later}</figcaption>\
         <svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" aria-label=\"{metric} over the sessions\">\
         <text x=\"{PAD}\" y=\"10\" font-size=\"10\">max {top}</text><polyline points=\"{points}\"/>",
        metric = escape(trend.metric),
        earlier = or_dash(trend.earlier),
        later = or_dash(trend.later),
        points = points.join(" "),
    );
    for (i, value) in trend.values.iter().enumerate() {
        if let Some(value) = value {
            let _ = write!(
                page,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\"><title>session {}: {value}</title></circle>",
                x(i),
                y(*value),
                i + 1
            );
        }
    }
    page.push_str("</svg></figure>\n");
}
