//! `sync`: core's sync over the notes root, on every binary.

use std::time::Duration;

use notesoup_core::plumbing::notes_home;
use notesoup_core::sync::{NotesSync, SyncConfig, SyncError};
use serde_json::json;

use crate::args::SyncArgs;
use crate::host::CliHost;
use crate::out::Out;

/// Runs `sync`, `sync --status` or `sync --remote URL`.
pub(crate) fn run<H: CliHost>(host: &mut H, args: SyncArgs, out: &mut Out) -> anyhow::Result<u8> {
    let root = notes_home(args.notes_home.as_deref(), host.notes_root())?;
    let sync = NotesSync::open(&root)
        .by(H::HOST, &host.agent())
        .timeout(Duration::from_secs(args.timeout.max(1)));
    let failed = |err: SyncError| anyhow::anyhow!("{}: {err}", err.code());
    if args.remote.is_some() || args.auto.is_some() {
        let before = sync.config().map_err(failed)?;
        let mut config = match (&args.remote, &before) {
            (Some(remote), _) => SyncConfig::new(remote, args.branch.as_deref()).map_err(failed)?,
            (None, Some(before)) => before.clone(),
            (None, None) => return Err(failed(SyncError::NotConfigured(root))),
        };
        // What is not given again is kept from the set-up before.
        if let Some(before) = &before {
            if args.branch.is_none() {
                config.branch.clone_from(&before.branch);
            }
            config.homes.clone_from(&before.homes);
            config.exclude.clone_from(&before.exclude);
            config.auto = before.auto;
            config.auto_wait_ms = before.auto_wait_ms;
        }
        if let Some(auto) = &args.auto {
            config.auto = auto == "on";
        }
        if let Some(wait) = args.auto_wait_ms {
            config.auto_wait_ms = wait;
        }
        if !args.homes.is_empty() {
            config.homes.clone_from(&args.homes);
        }
        if !args.exclude.is_empty() {
            config.exclude.clone_from(&args.exclude);
        }
        sync.setup(&config).map_err(failed)?;
        if args.json {
            out.print(&json!({"home": root, "config": config}).to_string());
        } else {
            let auto = if config.auto {
                format!(
                    "; automatic: boots pull first (waiting at most {} ms), close-outs push",
                    config.auto_wait_ms
                )
            } else {
                String::new()
            };
            out.print(&format!(
                "sync: {} syncs with {} (branch {}; homes {}{auto}); run `{} sync` to sync now",
                root.display(),
                config.remote,
                config.branch,
                config.homes.join(", "),
                H::BIN
            ));
        }
        return Ok(0);
    }
    if args.status {
        let status = sync.status().map_err(failed)?;
        if args.json {
            out.print(&serde_json::to_string(&status)?);
        } else {
            out.print(&format!(
                "sync: {} with {} (branch {})",
                root.display(),
                status.config.remote,
                status.config.branch
            ));
            out.print(&format!(
                "ahead {}, behind {}, {} note(s) changed here since the last sync",
                status.ahead, status.behind, status.changed
            ));
            if let Some(offline) = &status.offline {
                out.print(&format!(
                    "the remote was not reached ({offline}); counts are against the last fetch"
                ));
            }
            for side in &status.conflicts {
                out.print(&format!("unresolved conflict: {side}"));
            }
        }
        return Ok(u8::from(!status.conflicts.is_empty()));
    }
    let report = sync.run().map_err(failed)?;
    if args.json {
        out.print(&serde_json::to_string(&report)?);
        return Ok(0);
    }
    let short = report.commit.get(..12).unwrap_or(&report.commit);
    out.print(&format!(
        "sync: {} note(s) sent, {} received, {} conflict(s){}; at {short}",
        report.committed,
        report.received.len(),
        report.conflicts().len(),
        if report.pushed { ", pushed" } else { "" },
    ));
    for skipped in &report.skipped {
        out.warn(&format!(
            "{} sync: {skipped} is over the largest note notesoup keeps; it stays on this machine (doctor names it)",
            H::BIN
        ));
    }
    for (note, side) in report.conflicts() {
        out.print(&format!(
            "conflict: {note} kept as it was here; the other side is in {side} (merge it by hand, then crumple it)"
        ));
    }
    Ok(0)
}
