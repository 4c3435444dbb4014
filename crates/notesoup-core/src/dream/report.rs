//! The dream report `<home>/dreams/<stamp>.md` and `finishDream`: write the
//! report, run the final audit, decide the exit code.

use std::path::{Path, PathBuf};

use super::audit::audit_commit;
use super::result::{DreamResult, DreamWrite};
use super::{DreamOutput, OutputLine};
use crate::notes::beneath::DirHandle;
use crate::notes::{SecretKind, find_secret};

/// Where the report of the run with `stamp` goes.
pub(crate) fn report_path(home: &Path, stamp: &str) -> PathBuf {
    home.join("dreams").join(format!("{stamp}.md"))
}

/// The report text: `# Dream <stamp>[ (failed)]`, a blank line, the body,
/// a blank line, then one `- <tool>: <path>` line per write, or
/// `- no changes`.
pub(crate) fn render_report(
    stamp: &str,
    failed: bool,
    body: &str,
    writes: &[DreamWrite],
) -> String {
    let mut text = format!(
        "# Dream {stamp}{}\n\n{}\n\n",
        failed_suffix(failed),
        withhold_credentials(body.trim())
    );
    if writes.is_empty() {
        text.push_str("- no changes\n");
    }
    for write in writes {
        text.push_str(&format!("- {}: {}\n", write.tool, write.path));
    }
    text
}

/// `body` with every line that holds a credential withheld (a private key
/// block through its `-----END` line): the report is committed to the
/// audit repository, and the dreamer, told to report a credential, may
/// quote it.
fn withhold_credentials(body: &str) -> String {
    let mut text = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(found) = find_secret(rest) {
        let mut lines = rest.split_inclusive('\n');
        let mut consumed = 0;
        for line in lines.by_ref().take(found.line - 1) {
            text.push_str(line);
            consumed += line.len();
        }
        let mut withheld = lines.next().unwrap_or_default();
        consumed += withheld.len();
        if found.kind == SecretKind::PrivateKey {
            while !withheld.contains("-----END") {
                let Some(line) = lines.next() else { break };
                withheld = line;
                consumed += line.len();
            }
        }
        text.push_str(&format!(
            "(withheld: a line holding a credential ({}))",
            found.kind
        ));
        if withheld.ends_with('\n') {
            text.push('\n');
        }
        rest = &rest[consumed..];
    }
    text.push_str(rest);
    text
}

/// What is appended to the report when the final audit fails.
pub(crate) fn audit_failure_section(error: &str) -> String {
    format!("\n## Final audit failed\n\n{error}\n")
}

fn failed_suffix(failed: bool) -> &'static str {
    if failed { " (failed)" } else { "" }
}

/// Finishes a run: writes the report (the dreamer's report, or its error
/// when it failed), always runs the final audit commit
/// `dream <stamp>[ (failed)]`, and appends the audit failure to the report.
/// Exit code 1 when the run failed, the audit failed or the report could
/// not be written; otherwise 0 and the report path is printed.
pub(crate) fn finish_dream(home: &Path, stamp: &str, result: &DreamResult) -> DreamOutput {
    let mut lines = Vec::new();
    let failed = result.error.is_some();
    let path = report_path(home, stamp);
    let body = result.error.as_deref().unwrap_or(&result.report);
    let text = render_report(stamp, failed, body, &result.writes);
    let written = write_report(home, &path, &text);
    if let Err(err) = &written {
        lines.push(OutputLine::stderr(format!(
            "dream: could not write report at {}: {err}",
            path.display()
        )));
    }

    let message = format!("dream {stamp}{}", failed_suffix(failed));
    let audited = audit_commit(home, &message);
    if let Ok(audit) = &audited {
        lines.extend(super::audit::withheld_lines("final", &audit.withheld));
    }
    if let Err(err) = &audited {
        lines.push(OutputLine::stderr(format!(
            "dream: final audit failed: {err}"
        )));
        if written.is_ok() {
            let appended = text + &audit_failure_section(&err.to_string());
            if let Err(err) = write_report(home, &path, &appended) {
                lines.push(OutputLine::stderr(format!(
                    "dream: could not write report at {}: {err}",
                    path.display()
                )));
            }
        }
    }

    let ok = !failed && written.is_ok() && audited.is_ok();
    if ok {
        lines.push(OutputLine::stdout(path.display().to_string()));
    } else if let Some(error) = result.error.as_deref() {
        // Why, in the terminal, not only in the report.
        let reason = failure_reason(error);
        lines.push(OutputLine::stderr(if written.is_ok() {
            format!("dream: run failed: {reason}; see {}", path.display())
        } else {
            format!("dream: run failed: {reason}")
        }));
    }
    DreamOutput {
        exit_code: i32::from(!ok),
        lines,
    }
}

/// The most a failure's reason takes on the terminal; the report has it
/// whole.
const MAX_REASON_CHARS: usize = 400;

/// A failure's reason on one line: its lines joined, credentials withheld
/// (the terminal may be recorded), cut to [`MAX_REASON_CHARS`].
fn failure_reason(error: &str) -> String {
    let joined = error
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" / ");
    let withheld = withhold_credentials(&joined);
    match withheld.char_indices().nth(MAX_REASON_CHARS) {
        Some((cut, _)) => format!("{}…", &withheld[..cut]),
        None => withheld,
    }
}

/// Writes the report at `path` (in `home`'s `dreams/`) durably, through
/// the open `dreams/` directory: reached without following a link, so a
/// `dreams/` swapped for one cannot carry the report out of the home.
fn write_report(home: &Path, path: &Path, text: &str) -> std::io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    let dir = DirHandle::open_root(home)?
        .create_dirs(Path::new("dreams"))
        .map_err(std::io::Error::other)?;
    dir.replace(name, text.as_bytes())?;
    dir.sync()
}
