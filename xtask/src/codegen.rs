//! `cargo xtask codegen`: the TypeScript declarations and JSON Schemas hosts
//! build against, written to the committed `generated/` folder.
//!
//! - `generated/notesoup.d.ts`: every `#[typeshare]` type in notesoup-core,
//!   parsed from core's sources with typeshare-core.
//! - `generated/notesoup-pi-bridge.d.ts`: the `#[typeshare]` types of the
//!   protocol between `notesoup-pi serve` and the Pi package's shim, parsed
//!   from `plugins/notesoup-pi/src/bridge` (sources only: xtask does not
//!   depend on the plugin). The shim imports them, so `tsc --noEmit` checks
//!   it against the Rust side.
//! - `generated/notesoup-dsh-sidecar.d.ts`: the `#[typeshare]` types of the
//!   protocol between the dsh bundle and `notesoup-dsh serve`, parsed from
//!   `plugins/notesoup-dsh/src`. The bundle stays plain JavaScript: its JSDoc
//!   imports these types and `tsc --checkJs` (notesoup-dsh's
//!   `bundle_type_checks` test) checks it against the Rust side.
//! - `generated/schemas/<name>.json`: one JSON Schema per entry of
//!   [`schemas`].
//!
//! The output is deterministic (sources and schemas in sorted order, no
//! version stamps), so `generated_files_are_fresh` can regenerate in memory and
//! compare.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use notesoup_core::boot::BootIdentity;
use notesoup_core::boot::ToolBindings;
use notesoup_core::budget::{BudgetStage, ContextRemaining};
use notesoup_core::settings::SettingsRecord;
use notesoup_core::tools;
use schemars::{JsonSchema, schema_for};
use typeshare_core::context::{ParseContext, ParseFileContext};
use typeshare_core::language::{CrateName, Language, SINGLE_FILE_CRATE_NAME, TypeScript};
use typeshare_core::parser::{ParsedData, parse};
use typeshare_core::reconcile::reconcile_aliases;

use crate::workspace::workspace_root;

/// The folder, relative to the workspace root, that holds the output.
pub const OUTPUT_DIR: &str = "generated";

/// The TypeScript declarations file inside [`OUTPUT_DIR`].
const DECLARATIONS: &str = "notesoup.d.ts";

/// The Pi bridge protocol's declarations inside [`OUTPUT_DIR`].
const PI_BRIDGE: &str = "notesoup-pi-bridge.d.ts";

/// The dsh sidecar protocol's declarations inside [`OUTPUT_DIR`].
const DSH_SIDECAR: &str = "notesoup-dsh-sidecar.d.ts";

/// The schemas folder inside [`OUTPUT_DIR`].
const SCHEMAS_DIR: &str = "schemas";

/// Every JSON Schema the codegen writes, by file stem (relative to
/// `schemas/`). Adding a schema is one line here; every tool core registers
/// comes from its table (`tools::tool_table()`) as `tools/<name>`.
fn schemas() -> Vec<(String, serde_json::Value)> {
    let wire = [
        schema::<ToolBindings>("tool-bindings"),
        schema::<BootIdentity>("boot-identity"),
        schema::<BudgetStage>("budget-stage"),
        schema::<ContextRemaining>("context-remaining"),
        schema::<SettingsRecord>("settings-record"),
    ];
    let tools = tools::tool_table()
        .iter()
        .map(|tool| (format!("tools/{}", tool.name), tool.input_schema.clone()));
    wire.into_iter().chain(tools).collect()
}

fn schema<T: JsonSchema>(name: &str) -> (String, serde_json::Value) {
    (name.to_owned(), schema_for!(T).to_value())
}

/// Every generated file, by path relative to [`OUTPUT_DIR`].
pub fn generate() -> Result<BTreeMap<PathBuf, String>> {
    let root = workspace_root();
    let mut files = BTreeMap::new();
    // Each declaration file: its name, the Rust sources it is read from, and
    // what those sources are, for the file's header.
    for (file, sources, what) in [
        (DECLARATIONS, "crates/notesoup-core/src", "notesoup-core"),
        (
            PI_BRIDGE,
            "plugins/notesoup-pi/src/bridge",
            "notesoup-pi's bridge protocol",
        ),
        (
            DSH_SIDECAR,
            "plugins/notesoup-dsh/src",
            "notesoup-dsh's sidecar protocol",
        ),
    ] {
        files.insert(PathBuf::from(file), typescript(&root.join(sources), what)?);
    }
    for (name, schema) in schemas() {
        let mut text = serde_json::to_string_pretty(&schema)?;
        text.push('\n');
        files.insert(Path::new(SCHEMAS_DIR).join(format!("{name}.json")), text);
    }
    Ok(files)
}

/// The TypeScript declarations of every `#[typeshare]` item under `src`;
/// `from` names the source in the header.
fn typescript(src: &Path, from: &str) -> Result<String> {
    let context = ParseContext::default();
    let mut parsed = ParsedData::new(SINGLE_FILE_CRATE_NAME, DECLARATIONS.to_owned(), false);
    for path in rust_sources(src)? {
        let source_code =
            fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let file = ParseFileContext {
            source_code,
            crate_name: SINGLE_FILE_CRATE_NAME,
            file_name: DECLARATIONS.to_owned(),
            file_path: path.clone(),
        };
        let data = parse(&context, file).map_err(|err| {
            anyhow::anyhow!("typeshare could not parse {}: {err}", path.display())
        })?;
        if let Some(data) = data {
            parsed += data;
        }
    }
    if !parsed.errors.is_empty() {
        let errors: Vec<String> = parsed
            .errors
            .iter()
            .map(|e| format!("{}: {}", e.file_name, e.error))
            .collect();
        bail!("typeshare refused some items:\n{}", errors.join("\n"));
    }
    // Generation order follows dependencies, then input order: sort the input
    // so the output never depends on the order files were read in.
    parsed
        .structs
        .sort_by(|a, b| a.id.original.cmp(&b.id.original));
    parsed
        .enums
        .sort_by(|a, b| a.shared().id.original.cmp(&b.shared().id.original));
    parsed
        .aliases
        .sort_by(|a, b| a.id.original.cmp(&b.id.original));
    parsed
        .consts
        .sort_by(|a, b| a.id.original.cmp(&b.id.original));

    let mut crates = BTreeMap::from([(SINGLE_FILE_CRATE_NAME, parsed)]);
    reconcile_aliases(&mut crates);
    let all_types: HashMap<CrateName, HashSet<String>> = crates
        .iter()
        .map(|(name, data)| (name.clone(), data.type_names.clone()))
        .collect();
    let parsed = crates
        .remove(&SINGLE_FILE_CRATE_NAME)
        .context("typeshare lost the parsed types")?;

    // typeshare refuses 64-bit integers; core marks such fields
    // `#[typeshare(serialized_as = "U53")]` (a JavaScript safe integer).
    let mut language = TypeScript {
        no_version_header: true,
        ..TypeScript::default()
    };
    let mut out =
        format!("// Generated by `cargo xtask codegen` from {from}. Do not edit.\n\n").into_bytes();
    language
        .generate_types(&mut out, &all_types, parsed)
        .context("typeshare could not write TypeScript")?;
    let text = String::from_utf8(out).context("typeshare wrote invalid UTF-8")?;
    // typeshare leaves trailing blanks on empty comment lines, and copies a
    // doc comment's `*/` (a glob's `**/`) as is, which would end the comment.
    let mut in_comment = false;
    let mut tidy: String = text
        .lines()
        .map(|l| format!("{}\n", comment_safe(l.trim_end(), &mut in_comment)))
        .collect();
    let end = tidy.trim_end().len();
    tidy.truncate(end);
    tidy.push('\n');
    Ok(tidy)
}

/// `line` with every `*/` inside a doc comment's text written `*\/`;
/// `in_comment` says whether `line` continues a `/** … */` opened before.
fn comment_safe(line: &str, in_comment: &mut bool) -> String {
    let indent = line.len() - line.trim_start().len();
    let (lead, body) = line.split_at(indent);
    let (open, text, close) = if *in_comment {
        if body == "*/" {
            *in_comment = false;
            return line.to_owned();
        }
        // ` * text`: the text after the leading star.
        let star = usize::from(body.starts_with('*'));
        (&body[..star], &body[star..], "")
    } else if let Some(rest) = body.strip_prefix("/**") {
        match rest.strip_suffix("*/") {
            // `/** text */` on one line.
            Some(text) => ("/**", text, "*/"),
            None => {
                *in_comment = true;
                ("/**", rest, "")
            }
        }
    } else {
        return line.to_owned();
    };
    format!("{lead}{open}{}{close}", text.replace("*/", "*\\/"))
}

/// The `.rs` files under `dir`, sorted.
fn rust_sources(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found = files_under(dir)?;
    found.retain(|path| path.extension().is_some_and(|ext| ext == "rs"));
    found.sort();
    Ok(found)
}

/// The files under `generated/` now, by relative path.
fn committed(output: &Path) -> Result<BTreeMap<PathBuf, String>> {
    let mut files = BTreeMap::new();
    if !output.exists() {
        return Ok(files);
    }
    for path in files_under(output)? {
        let text =
            fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let relative = path.strip_prefix(output).unwrap_or(&path).to_path_buf();
        files.insert(relative, text);
    }
    Ok(files)
}

/// Every file below `dir`, at any depth, in no particular order.
fn files_under(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).with_context(|| format!("listing {}", dir.display()))? {
            let path = entry?.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                found.push(path);
            }
        }
    }
    Ok(found)
}

/// What differs between the generated and the committed files: one line per
/// file that is missing, stale or left over.
pub fn differences() -> Result<Vec<String>> {
    let fresh = generate()?;
    let old = committed(&workspace_root().join(OUTPUT_DIR))?;
    let mut found = Vec::new();
    for (path, text) in &fresh {
        match old.get(path) {
            None => found.push(format!("{OUTPUT_DIR}/{} is missing", path.display())),
            Some(committed) if committed != text => {
                found.push(format!("{OUTPUT_DIR}/{} is stale", path.display()));
            }
            Some(_) => {}
        }
    }
    for path in old.keys().filter(|p| !fresh.contains_key(*p)) {
        found.push(format!("{OUTPUT_DIR}/{} is left over", path.display()));
    }
    Ok(found)
}

/// `cargo xtask codegen [--check]`: writes the files, or with `--check` only
/// reports what is out of date.
pub fn run(args: &[String]) -> Result<()> {
    match args {
        [] => write(),
        [flag] if flag == "--check" => {
            let found = differences()?;
            if found.is_empty() {
                eprintln!("codegen: {OUTPUT_DIR}/ is up to date");
                return Ok(());
            }
            bail!(
                "generated files are out of date: run cargo xtask codegen\n{}",
                found.join("\n")
            )
        }
        _ => bail!("usage: cargo xtask codegen [--check]"),
    }
}

/// Writes every generated file and removes left-over ones.
fn write() -> Result<()> {
    let output = workspace_root().join(OUTPUT_DIR);
    let fresh = generate()?;
    for path in committed(&output)?.keys() {
        if !fresh.contains_key(path) {
            fs::remove_file(output.join(path))
                .with_context(|| format!("removing {}", path.display()))?;
        }
    }
    for (path, text) in &fresh {
        let target = output.join(path);
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        }
        fs::write(&target, text).with_context(|| format!("writing {}", target.display()))?;
    }
    eprintln!("codegen: wrote {} files to {OUTPUT_DIR}/", fresh.len());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed declarations and schemas match the code.
    #[test]
    fn generated_files_are_fresh() {
        let found = differences().expect("codegen could run");
        assert!(
            found.is_empty(),
            "generated files are out of date: run cargo xtask codegen\n{}",
            found.join("\n")
        );
    }

    #[test]
    fn generation_is_deterministic() {
        assert_eq!(
            generate().expect("first run"),
            generate().expect("second run")
        );
    }

    #[test]
    fn a_doc_comment_cannot_end_early() {
        let mut in_comment = false;
        let lines = [
            "/** A glob: \"**/*.md\". */",
            "export interface A {",
            "\t/**",
            "\t * e.g. \"@project/**\" or \"**/*.md\".",
            "\t */",
            "\tpattern?: string; // */ stays",
            "}",
        ]
        .map(|line| comment_safe(line, &mut in_comment));
        assert_eq!(
            lines,
            [
                "/** A glob: \"**\\/*.md\". */",
                "export interface A {",
                "\t/**",
                "\t * e.g. \"@project/**\" or \"**\\/*.md\".",
                "\t */",
                "\tpattern?: string; // */ stays",
                "}",
            ]
        );
        assert!(!in_comment);
    }

    #[test]
    fn every_typeshare_item_is_declared() {
        let mut annotated = 0;
        for path in
            rust_sources(&workspace_root().join("crates/notesoup-core/src")).expect("sources")
        {
            let text = fs::read_to_string(path).expect("readable source");
            // Item attributes start at column 0; field attributes are indented.
            annotated += text
                .lines()
                .filter(|l| l.starts_with("#[typeshare"))
                .count();
        }
        let files = generate().expect("codegen could run");
        let declarations = &files[Path::new(DECLARATIONS)];
        let declared = declarations
            .lines()
            .filter(|l| {
                l.starts_with("export interface ")
                    || l.starts_with("export enum ")
                    || l.starts_with("export type ")
            })
            .count();
        assert!(annotated > 0);
        assert_eq!(declared, annotated, "{declarations}");
    }

    #[test]
    fn every_tool_has_a_strict_parameter_schema() {
        let files = generate().expect("codegen could run");
        let tools = tools::tool_table();
        assert!(!tools.is_empty());
        for tool in tools {
            let path = Path::new(SCHEMAS_DIR).join(format!("tools/{}.json", tool.name));
            let schema: serde_json::Value =
                serde_json::from_str(&files[&path]).expect("schema is JSON");
            assert_eq!(schema, tool.input_schema, "{}", tool.name);
            assert_eq!(
                schema["additionalProperties"],
                serde_json::Value::Bool(false),
                "{}",
                tool.name
            );
        }
    }
}
