//! `boot`: the boot the host renders for the session's live window, as its
//! text, its section sizes (`--stats`), or JSON (`--json`).

use notesoup_core::boot::BootSections;
use serde_json::{Map, Value, json};

use crate::args::BootArgs;
use crate::host::{CliHost, no_session_recorded};
use crate::out::Out;
use crate::target::target;

/// Runs `boot`; its exit code.
pub(crate) fn run<H: CliHost>(
    host: &mut H,
    args: &BootArgs<H::SessionArgs>,
    out: &mut Out,
) -> anyhow::Result<u8> {
    let target = target(host, &args.session, None)?;
    target.notes_root()?;
    let view = host.boot(&target, out)?;
    if let Some(place) = &view.preview {
        out.warn(&format!(
            "{} boot: {}; this is a preview boot of a new session's first window ({}), with no session notes",
            H::BIN,
            no_session_recorded::<H>(place),
            view.window_id
        ));
    }
    if args.session.json {
        let sizes: Map<String, Value> = view
            .sections
            .sizes()
            .into_iter()
            .map(|(name, chars)| (name, json!(chars)))
            .collect();
        out.print(
            &json!({
                "window": view.window_id,
                "boot": view.sections.join(),
                "sectionChars": sizes,
                "bootMaxChars": view.max_chars,
            })
            .to_string(),
        );
    } else if args.stats {
        out.print(&boot_stats(&view.sections));
        out.warn(&format!(
            "{} boot: the bound is {} characters (bootMaxChars)",
            H::BIN,
            view.max_chars
        ));
    } else {
        out.print(&view.sections.join());
    }
    Ok(0)
}

/// One line per section, then the whole boot (sections and the blank lines
/// between them): characters and estimated tokens, a token per four
/// characters rounded up (Pi's own estimate; other hosts count their own).
pub fn boot_stats(sections: &BootSections) -> String {
    let tokens = |chars: usize| chars.div_ceil(4);
    let mut out = format!("{:<16} {:>8} {:>8}\n", "section", "chars", "~tokens");
    for (name, chars) in sections.sizes() {
        out.push_str(&format!("{name:<16} {chars:>8} {:>8}\n", tokens(chars)));
    }
    let total = sections.join().chars().count();
    out.push_str(&format!(
        "{:<16} {total:>8} {:>8}\n",
        "whole boot",
        tokens(total)
    ));
    out
}
