//! The dreamer's credential guard: the file as it would be written and its
//! path are judged, not the text an edit adds; a refused path is never
//! repeated, in the refusal or in the report.

use notesoup_core::dream::{DreamTool, DreamTools, DreamWrite, TextEdit, render_report};

use super::support::{put, tree_hash};

/// A synthetic AWS access key id (the shape only; no such key exists).
fn aws_key() -> String {
    format!("AKIA{}", "Y34FZKBOKMUTVV7A")
}

fn home() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = std::fs::canonicalize(dir.path()).expect("real home");
    put(
        &home,
        "human/keys.md",
        "---\norigin: user\n---\n\nkey: first and second\n",
    );
    (dir, home)
}

/// Two edits, each harmless, that join into a key: refused, nothing
/// written (they used to pass, each new text checked alone).
#[test]
fn edits_that_assemble_a_key_are_refused() {
    let (_dir, home) = home();
    let tools = DreamTools::new(&home);
    let before = tree_hash(&home);
    let key = aws_key();
    let (head, tail) = key.split_at(4);
    let refused = tools
        .edit(
            "human/keys.md",
            &[
                TextEdit {
                    old_text: "first".into(),
                    new_text: head.into(),
                },
                TextEdit {
                    old_text: " and second".into(),
                    new_text: tail.into(),
                },
            ],
        )
        .expect_err("a key assembled");
    assert_eq!(refused.code(), "secret_detected");
    assert_eq!(
        refused.to_string(),
        "human/keys.md: line 5 holds a credential (AWS access key); the dream never copies one. Leave it where it is and report it"
    );
    assert_eq!(tree_hash(&home), before);
}

/// A path holding a credential is refused by write and edit alike, without
/// the path in the message, and recorded withheld.
#[test]
fn a_path_holding_a_credential_is_refused_and_never_repeated() {
    let (_dir, home) = home();
    let key = aws_key();
    let path = format!("human/{key}.md");
    put(&home, &path, "# Key\n");
    let tools = DreamTools::new(&home);
    let before = tree_hash(&home);
    let message = "the path holds a credential (AWS access key); the dream never writes one, not even as a name. Leave it where it is and report it without quoting it";
    for refused in [
        tools
            .write(&format!("human/notes/{key}.md"), "# Notes\n")
            .expect_err("a key in a folder"),
        tools.write(&path, "# Key\n").expect_err("a key as a name"),
        tools
            .edit(
                &path,
                &[TextEdit {
                    old_text: "Key".into(),
                    new_text: "Deploy".into(),
                }],
            )
            .expect_err("a key as a name"),
    ] {
        assert_eq!(refused.code(), "secret_detected");
        assert_eq!(refused.to_string(), message);
    }
    assert_eq!(tree_hash(&home), before);

    let recorded =
        DreamWrite::from_tool_event("write", &serde_json::json!({"path": path, "content": "x"}));
    assert_eq!(
        recorded,
        Some(DreamWrite {
            tool: DreamTool::Write,
            path: "(a path holding a credential (AWS access key), withheld)".into(),
        })
    );
}

/// The report is committed to the audit repository: a line of the
/// dreamer's report quoting a credential is withheld, a private key block
/// whole.
#[test]
fn the_report_withholds_quoted_credentials() {
    let key = aws_key();
    let body = format!(
        "Tidied the notes.\nhuman/keys.md holds {key}; left it there.\n\
         -----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5tFBNXTJ\n-----END EC PRIVATE KEY-----\nDone."
    );
    let report = render_report("2026-01-01T00-00-00Z", false, &body, &[]);
    assert_eq!(
        report,
        "# Dream 2026-01-01T00-00-00Z\n\nTidied the notes.\n\
         (withheld: a line holding a credential (AWS access key))\n\
         (withheld: a line holding a credential (private key))\nDone.\n\n- no changes\n"
    );
}
