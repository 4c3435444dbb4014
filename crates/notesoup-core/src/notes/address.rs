//! Addresses (`a/b`, `@project/a`, `@self/a`, `@agents/x/a`, …), the homes
//! they name, their rendered and concrete forms, and glob patterns over them.

use std::path::{Path, PathBuf};

use super::error::NoteError;
use super::identity::{NotesIdentity, Scope, is_slug};
use super::segment::{MAX_SEGMENT_BYTES, escape_forbidden, is_forbidden_char, is_git_segment};
use crate::wire::RefusalCode;

const LEGAL_PREFIXES: &str = "invalid note address: legal prefixes are @project/, @human/, @self/, and @model/; bare names are this session";

/// A concrete home: the directory a note lives in. Agent and model homes
/// carry their slug; whether one is the caller's own is decided against a
/// `NotesIdentity`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Home {
    /// `<root>/pi/session/<sessionId>/`.
    Session,
    /// `<root>/project/<projectKey>/`.
    Project,
    /// `<root>/human/`.
    Human,
    /// `<root>/agents/<slug>/`.
    Agent(String),
    /// `<root>/models/<slug>/`.
    Model(String),
}

impl Home {
    /// The scope of this home.
    pub(crate) fn scope(&self) -> Scope {
        match self {
            Self::Session => Scope::Session,
            Self::Project => Scope::Project,
            Self::Human => Scope::Human,
            Self::Agent(_) => Scope::Agent,
            Self::Model(_) => Scope::Model,
        }
    }

    /// Whether this home belongs to `identity` (every home except a foreign
    /// agent or model). Own homes are the writable ones.
    pub fn is_own(&self, identity: &NotesIdentity) -> bool {
        match self {
            Self::Agent(slug) => slug == identity.agent(),
            Self::Model(slug) => slug == identity.model(),
            Self::Session | Self::Project | Self::Human => true,
        }
    }

    /// The home's directory under `root`; the session home of an identity
    /// without a session is refused with `no_session`.
    pub fn dir(&self, root: &Path, identity: &NotesIdentity) -> Result<PathBuf, NoteError> {
        Ok(root.join(self.rel_dir(identity)?))
    }

    /// The home's directory relative to the root (`human`,
    /// `pi/session/<id>`, …); the session home of an identity without a
    /// session is refused with `no_session`.
    pub(crate) fn rel_dir(&self, identity: &NotesIdentity) -> Result<PathBuf, NoteError> {
        let parts: [&str; 3] = match self {
            Self::Session => match identity.session_id() {
                Some(session) => ["pi", "session", session],
                None => return Err(NoteError::no_session()),
            },
            Self::Project => ["project", identity.project_key(), ""],
            Self::Human => ["human", "", ""],
            Self::Agent(slug) => ["agents", slug, ""],
            Self::Model(slug) => ["models", slug, ""],
        };
        Ok(parts.iter().filter(|part| !part.is_empty()).collect())
    }

    /// The address prefix as shown to the caller: empty for the session,
    /// `@self/` and `@model/` for own homes, `@agents/<slug>/` and
    /// `@models/<slug>/` for foreign ones.
    pub fn rendered_prefix(&self, identity: &NotesIdentity) -> String {
        match self {
            Self::Agent(_) if self.is_own(identity) => "@self/".to_owned(),
            Self::Model(_) if self.is_own(identity) => "@model/".to_owned(),
            _ => self.concrete_prefix(),
        }
    }

    /// The address prefix in concrete form, the form glob patterns match:
    /// `@agents/<slug>/` and `@models/<slug>/` even for own homes.
    pub fn concrete_prefix(&self) -> String {
        match self {
            Self::Session => String::new(),
            Self::Project => "@project/".to_owned(),
            Self::Human => "@human/".to_owned(),
            Self::Agent(slug) => format!("@agents/{slug}/"),
            Self::Model(slug) => format!("@models/{slug}/"),
        }
    }

    /// The home's name in status reports (`homes_unavailable`): `session`,
    /// `@project`, `@human`, `@self`, `@model`, `@agents/<slug>`, `@models/<slug>`.
    pub fn label(&self, identity: &NotesIdentity) -> String {
        match self {
            Self::Session => "session".to_owned(),
            _ => {
                let mut prefix = self.rendered_prefix(identity);
                prefix.pop();
                prefix
            }
        }
    }

    /// The caller's own homes, in boot order: five, or the four durable
    /// ones for an identity without a session.
    pub fn own(identity: &NotesIdentity) -> Vec<Home> {
        let session = identity.session_id().map(|_| Home::Session);
        session
            .into_iter()
            .chain([
                Home::Project,
                Home::Human,
                Home::Agent(identity.agent().to_owned()),
                Home::Model(identity.model().to_owned()),
            ])
            .collect()
    }

    /// The `invalid_scope` refusal for writing into a foreign home.
    pub(crate) fn not_yours(&self) -> NoteError {
        let mut home = self.concrete_prefix();
        home.pop();
        NoteError::new(
            RefusalCode::InvalidScope,
            format!(
                "{home}/ is not your home: writable homes are this session, @project/, @human/, @self/, and the current @model/ home"
            ),
        )
    }
}

/// A parsed note address: a home and a relative file path that always ends
/// in `.md` (so `a/b` and `a/b.md` are the same note).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Address {
    home: Home,
    path: String,
}

impl Address {
    /// Parses an address. A bare path names a session note (refused with
    /// `no_session` when the identity has none); `@self/` and `@model/`
    /// resolve to the identity's agent and model homes.
    pub fn parse(input: &str, identity: &NotesIdentity) -> Result<Address, NoteError> {
        let Some(rest) = input.strip_prefix('@') else {
            let address = Address::new(Home::Session, input)?;
            if identity.session_id().is_none() {
                return Err(NoteError::no_session());
            }
            return Ok(address);
        };
        let (head, tail) = rest.split_once('/').unwrap_or((rest, ""));
        let (home, path) = match head {
            "project" => (Home::Project, tail),
            "human" => (Home::Human, tail),
            "self" => (Home::Agent(identity.agent().to_owned()), tail),
            "model" => (Home::Model(identity.model().to_owned()), tail),
            "agents" | "models" => {
                let (slug, path) = tail.split_once('/').unwrap_or((tail, ""));
                if !is_slug(slug) {
                    return Err(invalid_address(&format!(
                        "@{head}/<slug>/ needs a canonical lowercase slug, got {slug:?}"
                    )));
                }
                let home = if head == "agents" {
                    Home::Agent(slug.to_owned())
                } else {
                    Home::Model(slug.to_owned())
                };
                (home, path)
            }
            _ => {
                return Err(NoteError::new(RefusalCode::InvalidAddress, LEGAL_PREFIXES));
            }
        };
        Address::new(home, path)
    }

    /// An address in `home` for the virtual path `path`, validated, with
    /// `.md` appended unless present.
    pub fn new(home: Home, path: &str) -> Result<Address, NoteError> {
        check_virtual_path(path)?;
        Ok(Address::with_md(home, path))
    }

    /// An address for a note a listing found on disk: the structural rules
    /// hold (nothing leads out of the home) but a name no address could hold
    /// is kept, and rendered escaped.
    pub(crate) fn on_disk(home: Home, path: &str) -> Result<Address, NoteError> {
        check_structure(path)?;
        Ok(Address::with_md(home, path))
    }

    fn with_md(home: Home, path: &str) -> Address {
        let path = if path.ends_with(".md") {
            path.to_owned()
        } else {
            format!("{path}.md")
        };
        Address { home, path }
    }

    /// The home the note lives in.
    pub fn home(&self) -> &Home {
        &self.home
    }

    /// The note's path relative to its home, ending in `.md`.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The address as shown to the caller (`@self/…` and `@model/…` for own
    /// homes).
    pub fn render(&self, identity: &NotesIdentity) -> String {
        format!(
            "{}{}",
            self.home.rendered_prefix(identity),
            escape_forbidden(&self.path)
        )
    }

    /// The address in concrete form (`@agents/<slug>/…` even for the own
    /// agent), the form glob patterns match.
    pub fn concrete(&self) -> String {
        format!("{}{}", self.home.concrete_prefix(), self.path)
    }

    /// Whether `identity` may write this note.
    pub fn is_writable(&self, identity: &NotesIdentity) -> bool {
        self.home.is_own(identity)
    }
}

fn invalid_address(detail: &str) -> NoteError {
    NoteError::new(
        RefusalCode::InvalidAddress,
        format!("invalid note address: {detail}"),
    )
}

/// The virtual path rules: non-empty; no NUL, `\` or `@`; no leading `/`;
/// no empty, `.` or `..` segments; no control, separator or bidirectional
/// characters; no `.git` segment or look-alike ([`is_git_segment`], with or
/// without `.md`); and no segment longer than [`MAX_SEGMENT_BYTES`]
/// (`too_large`).
pub(crate) fn check_virtual_path(path: &str) -> Result<(), NoteError> {
    check_structure(path)?;
    check_hygiene(path)
}

/// The rules that keep a path inside its home: non-empty; no NUL; no
/// leading `/`; no empty, `.` or `..` segments; no `.git` segment or
/// look-alike.
fn check_structure(path: &str) -> Result<(), NoteError> {
    if path.is_empty() {
        return Err(invalid_address("the path is empty"));
    }
    if path.contains('\0') {
        return Err(invalid_address("the path may not contain NUL"));
    }
    if path.starts_with('/') {
        return Err(invalid_address("the path may not start with /"));
    }
    if path
        .split('/')
        .any(|segment| segment.is_empty() || segment == "." || segment == "..")
    {
        return Err(invalid_address(
            "the path may not contain empty, . or .. segments",
        ));
    }
    let last = path.rsplit('/').next().unwrap_or(path);
    if path.split('/').any(is_git_segment) || last.strip_suffix(".md").is_some_and(is_git_segment) {
        return Err(invalid_address(
            "the path may not contain a .git segment or a name Git takes for one (.git. or .git with trailing spaces, git~1, .git with ignorable characters): Git's own directory is not a note",
        ));
    }
    Ok(())
}

/// The rules of an address's own syntax and of a printable, writable name:
/// no `\` or `@`; no control, separator or bidirectional characters; no
/// name over [`MAX_SEGMENT_BYTES`].
fn check_hygiene(path: &str) -> Result<(), NoteError> {
    if path.contains('\\') {
        return Err(invalid_address("the path may not contain \\ (use /)"));
    }
    if path.contains('@') {
        return Err(invalid_address("the path part may not contain @"));
    }
    if let Some(c) = path.chars().find(|&c| is_forbidden_char(c)) {
        return Err(invalid_address(&format!(
            "the path may not contain control, line-separator or bidirectional characters (found U+{:04X})",
            u32::from(c)
        )));
    }
    let (dirs, file) = path.rsplit_once('/').unwrap_or(("", path));
    let file_len = file.len() + if file.ends_with(".md") { 0 } else { 3 };
    let longest_dir = dirs.split('/').map(str::len).max().unwrap_or(0);
    let len = file_len.max(longest_dir);
    if len > MAX_SEGMENT_BYTES {
        let what = if file_len >= longest_dir {
            "the note's file name (with .md)"
        } else {
            "a folder name in the note path"
        };
        return Err(NoteError::new(
            RefusalCode::TooLarge,
            format!("{what} is {len} UTF-8 bytes; the limit is {MAX_SEGMENT_BYTES} bytes"),
        ));
    }
    Ok(())
}

/// Which homes a pattern's head lets a listing traverse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HomeSelection {
    /// No `@` head: the caller's five own homes.
    Own,
    /// One concrete home.
    One(Home),
    /// Every directory under `<root>/agents/` (the head's name is a glob).
    AllAgents,
    /// Every directory under `<root>/models/` (the head's name is a glob).
    AllModels,
    /// An unknown head: no home at all.
    Nothing,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Literal(char),
    /// `*`: any run of characters other than `/`.
    Star,
    /// `**`: any run of characters.
    AnyRun,
    /// `**/`, entry state: may match nothing (zero segments) or start a run.
    SegmentsEntry,
    /// `**/`, inside the run: any characters up to and including a `/`.
    SegmentsInner,
    /// `?`: one character other than `/`.
    One,
}

/// A glob pattern over concrete addresses: `*` within a segment, `**` across
/// segments (`**/` also matches zero segments), `?` one character other than
/// `/`, anchored at both ends. `@self/` and `@model/` heads are rewritten to
/// the concrete `@agents/<agent>/` and `@models/<model>/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NotePattern {
    tokens: Vec<Token>,
    /// The same pattern with `.md` appended, for a pattern that names a note
    /// the way an address does (`@human/prefs` matches `@human/prefs.md`).
    with_md: Option<Vec<Token>>,
    homes: HomeSelection,
}

impl NotePattern {
    /// Parses a pattern; `None` for an empty pattern (which means "no
    /// pattern"). NUL or `\` is `invalid_pattern`.
    pub(crate) fn parse(
        pattern: &str,
        identity: &NotesIdentity,
    ) -> Result<Option<NotePattern>, NoteError> {
        if pattern.is_empty() {
            return Ok(None);
        }
        if pattern.contains(['\0', '\\']) {
            return Err(NoteError::new(
                RefusalCode::InvalidPattern,
                "invalid pattern: it may not contain NUL or \\",
            ));
        }
        let concrete = concrete_pattern(pattern, identity);
        let homes = select_homes(&concrete);
        // A pattern ending in a wildcard already reaches `.md`; one ending
        // in `.md` names the file.
        let with_md = (!concrete.ends_with(".md") && !concrete.ends_with(['*', '/']))
            .then(|| tokenize(&format!("{concrete}.md")));
        Ok(Some(NotePattern {
            tokens: tokenize(&concrete),
            with_md,
            homes,
        }))
    }

    /// The homes this pattern's head lets a listing traverse.
    pub(crate) fn homes(&self) -> &HomeSelection {
        &self.homes
    }

    /// Whether the concrete address `address` matches, anchored at both ends.
    pub(crate) fn matches(&self, address: &str) -> bool {
        matches_tokens(&self.tokens, address)
            || self
                .with_md
                .as_deref()
                .is_some_and(|tokens| matches_tokens(tokens, address))
    }
}

/// Whether `address` matches `tokens`, anchored at both ends.
fn matches_tokens(tokens: &[Token], address: &str) -> bool {
    let states = tokens.len() + 1;
    let mut current = vec![false; states];
    let mut next = vec![false; states];
    current[0] = true;
    close(tokens, &mut current);
    for c in address.chars() {
        next.iter_mut().for_each(|state| *state = false);
        let mut alive = false;
        for (index, token) in tokens.iter().enumerate() {
            if !current[index] {
                continue;
            }
            // The states this character leads to: stay here, the next
            // state, or (for `**/`) past the inner state.
            let (stay, advance, leap) = match *token {
                Token::Literal(literal) => (false, literal == c, false),
                Token::Star => (c != '/', false, false),
                Token::AnyRun => (true, false, false),
                Token::SegmentsEntry => (false, true, c == '/'),
                Token::SegmentsInner => (true, c == '/', false),
                Token::One => (false, c != '/', false),
            };
            for (reached, target) in [(stay, index), (advance, index + 1), (leap, index + 2)] {
                if reached {
                    next[target] = true;
                    alive = true;
                }
            }
        }
        if !alive {
            return false;
        }
        close(tokens, &mut next);
        std::mem::swap(&mut current, &mut next);
    }
    current[tokens.len()]
}

/// Adds the states reachable without consuming a character: every `*`, `**`
/// and `**/` may match nothing. Edges only point forward, so one pass
/// suffices.
fn close(tokens: &[Token], states: &mut [bool]) {
    for (index, token) in tokens.iter().enumerate() {
        if !states[index] {
            continue;
        }
        match token {
            Token::Star | Token::AnyRun => states[index + 1] = true,
            Token::SegmentsEntry => states[index + 2] = true,
            _ => {}
        }
    }
}

fn concrete_pattern(pattern: &str, identity: &NotesIdentity) -> String {
    for (head, namespace, slug) in [
        ("@self", "@agents", identity.agent()),
        ("@model", "@models", identity.model()),
    ] {
        if let Some(rest) = pattern.strip_prefix(head)
            && (rest.is_empty() || rest.starts_with('/'))
        {
            return format!("{namespace}/{slug}{rest}");
        }
    }
    pattern.to_owned()
}

fn select_homes(concrete: &str) -> HomeSelection {
    if !concrete.starts_with('@') {
        return HomeSelection::Own;
    }
    let mut segments = concrete.split('/');
    let head = segments.next().unwrap_or_default();
    let name = segments.next().unwrap_or_default();
    let is_glob = name.contains(['*', '?']);
    match head {
        "@project" => HomeSelection::One(Home::Project),
        "@human" => HomeSelection::One(Home::Human),
        "@agents" if is_glob => HomeSelection::AllAgents,
        "@models" if is_glob => HomeSelection::AllModels,
        "@agents" if is_slug(name) => HomeSelection::One(Home::Agent(name.to_owned())),
        "@models" if is_slug(name) => HomeSelection::One(Home::Model(name.to_owned())),
        _ => HomeSelection::Nothing,
    }
}

fn tokenize(pattern: &str) -> Vec<Token> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut tokens = Vec::with_capacity(chars.len());
    let mut index = 0;
    while index < chars.len() {
        let token = match chars[index] {
            '*' if chars.get(index + 1) == Some(&'*') => {
                if chars.get(index + 2) == Some(&'/') {
                    index += 3;
                    tokens.push(Token::SegmentsEntry);
                    tokens.push(Token::SegmentsInner);
                    continue;
                } else {
                    index += 1;
                    Token::AnyRun
                }
            }
            '*' => Token::Star,
            '?' => Token::One,
            literal => Token::Literal(literal),
        };
        tokens.push(token);
        index += 1;
    }
    tokens
}
