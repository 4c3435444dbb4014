//! Who is asking: the validated `NotesIdentity`, the five scopes, slugs, and
//! the pure helpers hosts use to derive the root and the slugs from their
//! environment.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::NoteError;
use super::segment::{MAX_SEGMENT_BYTES, is_forbidden_char, is_git_segment};

/// The five homes a note can live in.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// This session's notes: `<root>/pi/session/<sessionId>/`, bare addresses.
    Session,
    /// The project's notes: `<root>/project/<projectKey>/`, `@project/`.
    Project,
    /// The human's manual: `<root>/human/`, `@human/`.
    Human,
    /// An agent's diary: `<root>/agents/<slug>/`, `@self/` or `@agents/<slug>/`.
    Agent,
    /// A model's notes: `<root>/models/<slug>/`, `@model/` or `@models/<slug>/`.
    Model,
}

impl Scope {
    /// Every scope, in boot order.
    pub const ALL: [Scope; 5] = [
        Scope::Session,
        Scope::Project,
        Scope::Human,
        Scope::Agent,
        Scope::Model,
    ];

    /// The scope's name, e.g. `session`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Session => "session",
            Self::Project => "project",
            Self::Human => "human",
            Self::Agent => "agent",
            Self::Model => "model",
        }
    }
}

/// The validated, immutable identity every store operation runs under:
/// the notes root, the session (when the host has one), the project key, and
/// the agent and model slugs that select `@self/` and `@model/`.
///
/// A host that has no session yet builds one [`without_session`](Self::without_session):
/// the durable homes work as ever, a session address (a bare name, or the
/// `session` scope by name) is refused with `no_session`, and listings and
/// boots simply have no session home; no session id is ever invented.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NotesIdentity {
    home: PathBuf,
    session_id: Option<String>,
    project_key: String,
    agent: String,
    model: String,
}

impl NotesIdentity {
    /// Validates and builds an identity. `home` is made absolute (lexically,
    /// against the current directory when relative).
    pub fn new(
        home: impl AsRef<Path>,
        session_id: &str,
        project_key: &str,
        agent: &str,
        model: &str,
    ) -> Result<Self, NoteError> {
        Self::checked(home.as_ref(), Some(session_id), project_key, agent, model)
    }

    /// Validates and builds an identity with no session: session addresses
    /// are refused with `no_session` until [`with_session`](Self::with_session)
    /// names one.
    pub fn without_session(
        home: impl AsRef<Path>,
        project_key: &str,
        agent: &str,
        model: &str,
    ) -> Result<Self, NoteError> {
        Self::checked(home.as_ref(), None, project_key, agent, model)
    }

    /// Checks the parts in order (home, sessionId when there is one,
    /// projectKey, agent, model) and builds the identity.
    fn checked(
        home: &Path,
        session_id: Option<&str>,
        project_key: &str,
        agent: &str,
        model: &str,
    ) -> Result<Self, NoteError> {
        if home.as_os_str().is_empty() {
            return Err(non_empty("home"));
        }
        if let Some(session_id) = session_id {
            check_segment("sessionId", session_id)?;
        }
        check_segment("projectKey", project_key)?;
        check_slug("agent", agent)?;
        check_slug("model", model)?;
        Ok(Self {
            home: absolute_lexical(home),
            session_id: session_id.map(str::to_owned),
            project_key: project_key.to_owned(),
            agent: agent.to_owned(),
            model: model.to_owned(),
        })
    }

    /// The same identity in session `session_id` (a host whose session
    /// started).
    pub fn with_session(&self, session_id: &str) -> Result<Self, NoteError> {
        check_segment("sessionId", session_id)?;
        Ok(Self {
            session_id: Some(session_id.to_owned()),
            ..self.clone()
        })
    }

    /// The same identity with another model slug (the model is resolved live,
    /// so switching models retargets `@model/`).
    pub fn with_model(&self, model: &str) -> Result<Self, NoteError> {
        check_slug("model", model)?;
        Ok(Self {
            model: model.to_owned(),
            ..self.clone()
        })
    }

    /// The notes root, absolute.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// The session id naming `<root>/pi/session/<sessionId>/`; `None` for a
    /// host with no session yet.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// The project key naming `<root>/project/<projectKey>/`.
    pub fn project_key(&self) -> &str {
        &self.project_key
    }

    /// The current agent's slug (`@self/`).
    pub fn agent(&self) -> &str {
        &self.agent
    }

    /// The current model's slug (`@model/`).
    pub fn model(&self) -> &str {
        &self.model
    }
}

fn non_empty(field: &'static str) -> NoteError {
    NoteError::invalid_identity(field, "a non-empty string")
}

fn check_segment(field: &'static str, value: &str) -> Result<(), NoteError> {
    if value.is_empty() {
        return Err(non_empty(field));
    }
    if value == "."
        || value == ".."
        || value.contains(['\\', '/', '\0', ':'])
        || is_git_segment(value)
        || value.contains(is_forbidden_char)
        || value.len() > MAX_SEGMENT_BYTES
    {
        return Err(NoteError::invalid_identity(
            field,
            "a single path segment of at most 255 bytes: not ., .., .git or a name Git takes for .git (.git., git~1, …), and without \\, /, NUL, :, control, line-separator or bidirectional characters",
        ));
    }
    Ok(())
}

fn check_slug(field: &'static str, value: &str) -> Result<(), NoteError> {
    if value.is_empty() {
        return Err(non_empty(field));
    }
    if !is_slug(value) {
        return Err(NoteError::invalid_identity(
            field,
            "a canonical lowercase slug (^[a-z0-9]+(?:-[a-z0-9]+)*$)",
        ));
    }
    Ok(())
}

/// Whether `value` matches `SLUG_PATTERN = ^[a-z0-9]+(?:-[a-z0-9]+)*$`.
pub(crate) fn is_slug(value: &str) -> bool {
    !value.is_empty()
        && !value.starts_with('-')
        && !value.ends_with('-')
        && !value.contains("--")
        && value
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Lowercases `value`, replaces each run of characters outside `[a-z0-9]`
/// with `-`, trims `-` at both ends; an empty result becomes `root`.
pub(crate) fn slugify(value: &str) -> String {
    let mut slug = String::with_capacity(value.len());
    let mut pending_dash = false;
    for c in value.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            if pending_dash && !slug.is_empty() {
                slug.push('-');
            }
            pending_dash = false;
            slug.push(c);
        } else {
            pending_dash = true;
        }
    }
    if slug.is_empty() {
        "root".to_owned()
    } else {
        slug
    }
}

/// Makes `path` absolute against the current directory and removes `.` and
/// `..` components lexically (symlinks are not resolved).
pub(crate) fn absolute_lexical(path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|cwd| cwd.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    normalize_lexical(&joined)
}

/// Removes `.` and `..` components of `path` lexically, without touching
/// the filesystem.
pub(crate) fn normalize_lexical(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                normal.pop();
            }
            other => normal.push(other.as_os_str()),
        }
    }
    normal
}

impl NotesIdentity {
    /// The agent slug from an environment lookup:
    /// `slugify(PI_NOTES_AGENT ?? "anonymous")`.
    pub fn agent_slug(env: impl Fn(&str) -> Option<String>) -> String {
        slugify(&env("PI_NOTES_AGENT").unwrap_or_else(|| "anonymous".to_owned()))
    }

    /// The model slug: `slugify` of the last `/`-separated segment of the model
    /// id, or `default` when there is no model.
    pub fn model_slug(model_id: Option<&str>) -> String {
        match model_id.filter(|id| !id.is_empty()) {
            Some(id) => slugify(id.rsplit('/').next().unwrap_or(id)),
            None => "default".to_owned(),
        }
    }

    /// The notes root from an environment lookup: `PI_NOTES_HOME` when set and
    /// non-empty (made absolute), else `$HOME` (or `$USERPROFILE` when `$HOME` is
    /// unset) joined with `.agents/notes`. `None` when no home directory is known.
    pub fn default_root(env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
        if let Some(root) = env("PI_NOTES_HOME").filter(|value| !value.is_empty()) {
            return Some(absolute_lexical(Path::new(&root)));
        }
        let home = env("HOME")
            .filter(|value| !value.is_empty())
            .or_else(|| env("USERPROFILE").filter(|value| !value.is_empty()))?;
        Some(absolute_lexical(
            &Path::new(&home).join(".agents").join("notes"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugify_follows_the_spec() {
        for (input, expect) in [
            ("Claude", "claude"),
            ("  GPT 4o / mini ", "gpt-4o-mini"),
            ("--a--b--", "a-b"),
            ("", "root"),
            ("ÄÖ", "root"),
            ("claude-sonnet-4.5", "claude-sonnet-4-5"),
        ] {
            assert_eq!(slugify(input), expect, "{input:?}");
        }
    }

    #[test]
    fn slug_pattern() {
        for (input, expect) in [
            ("a", true),
            ("a-b-1", true),
            ("", false),
            ("-a", false),
            ("a-", false),
            ("a--b", false),
            ("A", false),
            ("a_b", false),
        ] {
            assert_eq!(is_slug(input), expect, "{input:?}");
        }
    }
}
