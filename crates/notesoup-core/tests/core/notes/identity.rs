//! NotesIdentity validation, the environment helpers and project keys.

use std::path::{Path, PathBuf};

use notesoup_core::notes::{NotesIdentity, project_key};
use notesoup_test_support::files::put;

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |key| pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
}

#[test]
fn identity_validation_messages() {
    let check = |home: &str, session: &str, project: &str, agent: &str, model: &str| {
        NotesIdentity::new(home, session, project, agent, model)
            .map(|_| ())
            .map_err(|e| e.to_string())
    };
    assert_eq!(check("/n", "s", "p-1", "a", "m"), Ok(()));
    assert_eq!(check("/n", "s", &"p".repeat(255), "a", "m"), Ok(()));
    for (args, message) in [
        (
            ["", "s", "p", "a", "m"],
            "notes context home must be a non-empty string",
        ),
        (
            ["/n", "", "p", "a", "m"],
            "notes context sessionId must be a non-empty string",
        ),
        (
            ["/n", "s", "", "a", "m"],
            "notes context projectKey must be a non-empty string",
        ),
        (
            ["/n", "s", "p", "", "m"],
            "notes context agent must be a non-empty string",
        ),
        (
            ["/n", "s", "p", "a", ""],
            "notes context model must be a non-empty string",
        ),
        (
            ["/n", "git~1", "p", "a", "m"],
            "notes context sessionId must be a single path segment of at most 255 bytes: not ., .., .git or a name Git takes for .git (.git., git~1, …), and without \\, /, NUL, :, control, line-separator or bidirectional characters",
        ),
        (
            ["/n", "s", ".git. ", "a", "m"],
            "notes context projectKey must be a single path segment of at most 255 bytes: not ., .., .git or a name Git takes for .git (.git., git~1, …), and without \\, /, NUL, :, control, line-separator or bidirectional characters",
        ),
        (
            ["/n", "..", "p", "a", "m"],
            "notes context sessionId must be a single path segment of at most 255 bytes: not ., .., .git or a name Git takes for .git (.git., git~1, …), and without \\, /, NUL, :, control, line-separator or bidirectional characters",
        ),
        (
            ["/n", "s", ".", "a", "m"],
            "notes context projectKey must be a single path segment of at most 255 bytes: not ., .., .git or a name Git takes for .git (.git., git~1, …), and without \\, /, NUL, :, control, line-separator or bidirectional characters",
        ),
        (
            ["/n", "a/b", "p", "a", "m"],
            "notes context sessionId must be a single path segment of at most 255 bytes: not ., .., .git or a name Git takes for .git (.git., git~1, …), and without \\, /, NUL, :, control, line-separator or bidirectional characters",
        ),
        (
            ["/n", "a\\b", "p", "a", "m"],
            "notes context sessionId must be a single path segment of at most 255 bytes: not ., .., .git or a name Git takes for .git (.git., git~1, …), and without \\, /, NUL, :, control, line-separator or bidirectional characters",
        ),
        (
            ["/n", "a:b", "p", "a", "m"],
            "notes context sessionId must be a single path segment of at most 255 bytes: not ., .., .git or a name Git takes for .git (.git., git~1, …), and without \\, /, NUL, :, control, line-separator or bidirectional characters",
        ),
        (
            ["/n", "s", "p\0", "a", "m"],
            "notes context projectKey must be a single path segment of at most 255 bytes: not ., .., .git or a name Git takes for .git (.git., git~1, …), and without \\, /, NUL, :, control, line-separator or bidirectional characters",
        ),
        (
            ["/n", ".GIT", "p", "a", "m"],
            "notes context sessionId must be a single path segment of at most 255 bytes: not ., .., .git or a name Git takes for .git (.git., git~1, …), and without \\, /, NUL, :, control, line-separator or bidirectional characters",
        ),
        (
            ["/n", "s\n1", "p", "a", "m"],
            "notes context sessionId must be a single path segment of at most 255 bytes: not ., .., .git or a name Git takes for .git (.git., git~1, …), and without \\, /, NUL, :, control, line-separator or bidirectional characters",
        ),
        (
            ["/n", "s", "p\u{202e}", "a", "m"],
            "notes context projectKey must be a single path segment of at most 255 bytes: not ., .., .git or a name Git takes for .git (.git., git~1, …), and without \\, /, NUL, :, control, line-separator or bidirectional characters",
        ),
        (
            ["/n", "s", &"p".repeat(256), "a", "m"],
            "notes context projectKey must be a single path segment of at most 255 bytes: not ., .., .git or a name Git takes for .git (.git., git~1, …), and without \\, /, NUL, :, control, line-separator or bidirectional characters",
        ),
        (
            ["/n", "s", "p", "Alice", "m"],
            "notes context agent must be a canonical lowercase slug (^[a-z0-9]+(?:-[a-z0-9]+)*$)",
        ),
        (
            ["/n", "s", "p", "a", "gpt-"],
            "notes context model must be a canonical lowercase slug (^[a-z0-9]+(?:-[a-z0-9]+)*$)",
        ),
    ] {
        let [home, session, project, agent, model] = args;
        assert_eq!(
            check(home, session, project, agent, model),
            Err(message.to_owned()),
            "{args:?}"
        );
    }
    let error = NotesIdentity::new("/n", "s", "p", "a", "M").expect_err("bad model");
    assert_eq!(error.identity_field(), Some("model"));
    assert_eq!(
        error.code(),
        notesoup_core::tools::RefusalCode::InvalidArguments
    );
}

#[test]
fn identity_is_absolute_and_retargets_the_model() {
    let identity = NotesIdentity::new("/n/./x/../y", "s", "p", "a", "m").expect("valid");
    assert_eq!(identity.home(), Path::new("/n/y"));
    let relative = NotesIdentity::new("rel", "s", "p", "a", "m").expect("valid");
    assert!(relative.home().is_absolute());
    let switched = identity.with_model("o3").expect("valid");
    assert_eq!(
        (switched.model(), switched.agent(), switched.session_id()),
        ("o3", "a", Some("s"))
    );
    assert!(identity.with_model("O3").is_err());
}

#[test]
fn default_root_from_the_environment() {
    assert_eq!(
        NotesIdentity::default_root(env(&[
            ("PI_NOTES_HOME", "/data/notes"),
            ("HOME", "/home/u")
        ])),
        Some(PathBuf::from("/data/notes"))
    );
    assert_eq!(
        NotesIdentity::default_root(env(&[("PI_NOTES_HOME", ""), ("HOME", "/home/u")])),
        Some(PathBuf::from("/home/u/.agents/notes"))
    );
    assert_eq!(
        NotesIdentity::default_root(env(&[("USERPROFILE", "/users/u")])),
        Some(PathBuf::from("/users/u/.agents/notes"))
    );
    assert_eq!(
        NotesIdentity::default_root(env(&[("HOME", "/home/u"), ("USERPROFILE", "/users/u")])),
        Some(PathBuf::from("/home/u/.agents/notes"))
    );
    assert_eq!(NotesIdentity::default_root(env(&[])), None);
    let relative =
        NotesIdentity::default_root(env(&[("PI_NOTES_HOME", "rel/notes")])).expect("root");
    assert!(relative.is_absolute() && relative.ends_with("rel/notes"));
}

#[test]
fn agent_and_model_slugs() {
    assert_eq!(NotesIdentity::agent_slug(env(&[])), "anonymous");
    assert_eq!(
        NotesIdentity::agent_slug(env(&[("PI_NOTES_AGENT", "Code Reviewer")])),
        "code-reviewer"
    );
    assert_eq!(
        NotesIdentity::agent_slug(env(&[("PI_NOTES_AGENT", "")])),
        "root"
    );
    assert_eq!(NotesIdentity::model_slug(None), "default");
    assert_eq!(NotesIdentity::model_slug(Some("")), "default");
    assert_eq!(
        NotesIdentity::model_slug(Some("anthropic/claude-sonnet-4.5")),
        "claude-sonnet-4-5"
    );
    assert_eq!(
        NotesIdentity::model_slug(Some("openrouter/openai/GPT-4o")),
        "gpt-4o"
    );
    assert_eq!(NotesIdentity::model_slug(Some("claude")), "claude");
}

fn key_of(path: &Path) -> String {
    let text = path.to_str().expect("utf-8 path");
    use sha1::Digest as _;
    let digest: String = sha1::Sha1::digest(text.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let base = path.file_name().and_then(|n| n.to_str()).expect("name");
    format!("{base}-{}", &digest[..8])
}

#[test]
fn project_keys_walk_up_to_the_git_root() {
    let dir = tempfile::tempdir().expect("temp");
    let main = dir.path().join("main");
    std::fs::create_dir_all(main.join(".git/worktrees/feature")).expect("git dir");
    std::fs::create_dir_all(main.join("src/deep")).expect("src");
    assert_eq!(project_key(&main.join("src/deep")), key_of(&main));
    assert_eq!(project_key(&main), key_of(&main));

    let linked = dir.path().join("feature");
    std::fs::create_dir_all(linked.join("sub")).expect("linked");
    let gitdir = main.join(".git/worktrees/feature");
    std::fs::write(
        linked.join(".git"),
        format!("gitdir: {}\n", gitdir.display()),
    )
    .expect(".git file");
    assert_eq!(
        project_key(&linked.join("sub")),
        key_of(&main),
        "a linked worktree shares the main key"
    );

    let relative = dir.path().join("relative");
    put(
        &relative.join(".git"),
        "gitdir: ../main/.git/worktrees/feature\n",
    );
    assert_eq!(project_key(&relative), key_of(&main));

    let submodule = main.join("vendor/lib");
    put(&submodule.join(".git"), "gitdir: ../../.git/modules/lib\n");
    assert_eq!(
        project_key(&submodule),
        key_of(&submodule),
        "any other .git file is its own root"
    );

    let plain = dir.path().join("plain/dir");
    std::fs::create_dir_all(&plain).expect("plain");
    assert_eq!(
        project_key(&plain),
        key_of(&plain),
        "no git root: cwd itself"
    );
}

#[test]
fn project_keys_of_unprintable_or_long_folder_names_are_legal_segments() {
    let dir = tempfile::tempdir().expect("temp");
    for (name, base) in [
        ("a\nb", "a_b"),
        ("rlo\u{202e}x", "rlo_x"),
        ("c:d", "c_d"),
        ("plain name", "plain name"),
    ] {
        let key = project_key(&dir.path().join(name));
        assert_eq!(&key[..key.len() - 9], base, "{name:?}");
        NotesIdentity::new("/n", "s", &key, "a", "m").expect(&key);
    }
    let long = "é".repeat(150);
    let key = project_key(&dir.path().join(&long));
    assert_eq!(key.len(), 200 + 9);
    NotesIdentity::new("/n", "s", &key, "a", "m").expect("a long name is cut");
}
