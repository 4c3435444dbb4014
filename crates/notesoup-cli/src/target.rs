//! What every shared command starts from and ends with: the target its
//! session flags name, and a tool's result printed as the command's.

use std::path::Path;

use notesoup_core::tools::ToolOutput;

use crate::args::SessionArgs;
use crate::hints::cli_text;
use crate::host::{CliHost, Target};
use crate::out::Out;

/// A tool's result as the command's: its text (in this command line's
/// words: its hints and a refusal's message as the flags to type) or its
/// compact JSON (the tool's own), on stdout; a refusal on stderr, exit 1.
pub(crate) fn tool_result(out: &mut Out, output: ToolOutput, as_json: bool) -> u8 {
    let shown = if as_json {
        output.json.as_str().to_owned()
    } else {
        cli_text(&output)
    };
    if output.is_error {
        out.warn(&shown);
        1
    } else {
        out.print(&shown);
        0
    }
}

/// The target the session flags name: `--cwd` checked to be a directory and
/// made absolute, `--notes-home` made absolute, else the host's notes root;
/// `session` (the flag, or `history`'s FILE) as given.
pub(crate) fn target<'a, H: CliHost>(
    host: &H,
    args: &'a SessionArgs<H::SessionArgs>,
    session: Option<&'a str>,
) -> anyhow::Result<Target<'a, H::SessionArgs>> {
    let cwd = match &args.cwd {
        Some(dir) => {
            let absolute = absolute("--cwd", dir)?;
            if !absolute.is_dir() {
                anyhow::bail!("--cwd {}: not a directory", dir.display());
            }
            Some(absolute)
        }
        None => None,
    };
    let notes_root = match &args.notes_home {
        Some(dir) => Some(absolute("--notes-home", dir)?),
        None => host.notes_root(),
    };
    Ok(Target {
        cwd,
        session: session.or(args.session.as_deref()),
        notes_root,
        host: &args.host,
    })
}

fn absolute(flag: &str, path: &Path) -> anyhow::Result<std::path::PathBuf> {
    std::path::absolute(path).map_err(|error| anyhow::anyhow!("{flag} {}: {error}", path.display()))
}
