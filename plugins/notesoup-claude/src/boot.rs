//! Rendering the boot of a Claude window: core's snapshot and renderer with
//! the Claude identity and bindings.

use notesoup_core::boot::{BootIdentity, BootSections};
use notesoup_core::notes::{Home, NoteStore, NotesIdentity};
use notesoup_core::plumbing::BootCaches;

use crate::env::HostEnv;
use crate::names::{AGENT, MODEL, bindings, notes_identity};
use crate::state::ClaudeSessionState;

/// What the user sees when no boot could be built.
pub const BOOT_FAILED: &str = "notesoup: Notes boot failed.";

/// The boot for the state's live window, or why it could not be built.
pub fn render(env: &HostEnv, state: &ClaudeSessionState) -> Result<String, String> {
    render_with_warnings(env, state).map(|(boot, _)| boot)
}

/// The boot, within the project's `bootMaxChars`, and the warnings the
/// project's settings gave.
pub fn render_with_warnings(
    env: &HostEnv,
    state: &ClaudeSessionState,
) -> Result<(String, Vec<String>), String> {
    sections(env, state).map(|(sections, warnings)| (sections.join(), warnings))
}

/// The boot in its sections (for `boot --stats`), within the project's
/// `bootMaxChars`, and the warnings the project's settings gave.
pub fn sections(
    env: &HostEnv,
    state: &ClaudeSessionState,
) -> Result<(BootSections, Vec<String>), String> {
    sections_of(env, state, Some(&state.notes_session_id))
}

/// [`sections`] of a preview with no session recorded: the window ids are
/// the preview state's, the notes identity has no session (no session notes
/// are read, none is made up).
pub fn preview_sections(
    env: &HostEnv,
    state: &ClaudeSessionState,
) -> Result<(BootSections, Vec<String>), String> {
    sections_of(env, state, None)
}

fn sections_of(
    env: &HostEnv,
    state: &ClaudeSessionState,
    notes_session: Option<&str>,
) -> Result<(BootSections, Vec<String>), String> {
    let settings = crate::settings::load(env, &state.cwd);
    let identity = notes_identity(env, notes_session, &state.project_key)?;
    // Both are caches: a boot whose caches are not saved lists again.
    let caches = BootCaches::new(env.cache_dir());
    let snapshot = caches
        .snapshot(&NoteStore::new(identity.clone()))
        .map_err(|err| name_paths(&err.to_string(), &identity))?;
    let identity = BootIdentity {
        agent: AGENT.to_owned(),
        model: MODEL.to_owned(),
        root_window_id: state.root_window().to_string(),
        window_id: state.window_id().to_string(),
        previous_window_id: state.previous_window_id.clone(),
    };
    let sections = BootSections::new(
        &snapshot,
        &identity,
        &bindings(),
        settings.settings.boot_max_chars,
    );
    Ok((sections, settings.warnings))
}

/// `text` with every path under the notes root named as the model knows it:
/// a note's address (`@project/a.md`), a home's label (`@project`), else
/// "the notes root". The model never needs the root's absolute path, and a
/// boot failure goes into its context.
pub fn name_paths(text: &str, identity: &NotesIdentity) -> String {
    let root = identity.home();
    let mut named: Vec<(String, String)> = Home::own(identity)
        .iter()
        .filter_map(|home| Some((home, home.dir(root, identity).ok()?)))
        .flat_map(|(home, dir)| {
            let dir = dir.display().to_string();
            [
                (format!("{dir}/"), home.rendered_prefix(identity)),
                (dir, home.label(identity)),
            ]
        })
        .collect();
    let root = root.display().to_string();
    named.push((format!("{root}/"), "the notes root: ".to_owned()));
    named.push((root, "the notes root".to_owned()));
    // Longest first, so a home wins over the root it lies in.
    named.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
    let mut text = text.to_owned();
    for (path, name) in named {
        if !path.is_empty() && path != "/" {
            text = replace_whole(&text, &path, &name);
        }
    }
    text
}

/// Replaces `path` where it is a whole path: not when it is only the start
/// of a longer name (`/n/root` in `/n/rooted`).
fn replace_whole(text: &str, path: &str, name: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(path) {
        let after = &rest[at + path.len()..];
        let name_char = |c: char| c.is_alphanumeric() || matches!(c, '-' | '_');
        let mut next = after.chars();
        // A dot goes on a name only when a name character follows it; else
        // it ends a sentence.
        let continues = match next.next() {
            Some('.') => next.next().is_some_and(name_char),
            Some(c) => name_char(c),
            None => false,
        };
        let whole = path.ends_with('/') || !continues;
        out.push_str(&rest[..at]);
        out.push_str(if whole { name } else { path });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The fallback the model gets when the boot failed.
pub fn fallback(error: &str) -> String {
    format!("# notesoup\n{error}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_paths_in_messages_become_addresses() {
        let identity = NotesIdentity::new(
            std::path::Path::new("/n/root"),
            "s1",
            "p-12345678",
            AGENT,
            MODEL,
        )
        .unwrap();
        for (text, named) in [
            (
                "io_error: read /n/root/project/p-12345678/a/b.md: Permission denied",
                "io_error: read @project/a/b.md: Permission denied",
            ),
            ("list /n/root/pi/session/s1/x.md", "list x.md"),
            ("open /n/root/agents/claude/d.md", "open @self/d.md"),
            ("open /n/root/models/claude: gone", "open @model: gone"),
            ("read /n/root/human", "read @human"),
            (
                "/n/root is not a directory",
                "the notes root is not a directory",
            ),
            ("/n/root/dreams/x", "the notes root: dreams/x"),
            ("/n/rooted/x stays", "/n/rooted/x stays"),
            ("/n/root/humane.md", "the notes root: humane.md"),
            (
                "/n/root. Twice: /n/root",
                "the notes root. Twice: the notes root",
            ),
        ] {
            assert_eq!(name_paths(text, &identity), named);
        }
    }
}
