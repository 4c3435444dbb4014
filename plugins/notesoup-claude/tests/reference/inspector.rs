//! MCP conformance with a second independent client: the MCP Inspector's
//! command line (`mcp-inspector --cli`, npm `@modelcontextprotocol/inspector`
//! 2.12.0) lists the tools and calls each one, success and refusal, against
//! `notesoup mcp`.

use std::process::Output;

use notesoup_test_support::child::assert_succeeded;
use serde_json::{Value, json};

use crate::claude::parser_session;
use crate::hosts::mcp_inspector;
use crate::support::{Sandbox, notesoup_bin};

const S1: &str = "55555555-5555-4555-8555-555555555555";

/// `mcp-inspector --cli notesoup mcp <args>` in the sandbox.
fn inspect(sb: &Sandbox, args: &[&str]) -> Output {
    inspect_with(sb, &[], args)
}

/// [`inspect`] with `KEY=VALUE` pairs in the server's environment (the
/// Inspector hands the server only a default environment plus these).
fn inspect_with(sb: &Sandbox, env: &[&str], args: &[&str]) -> Output {
    let bin = notesoup_bin();
    let mut all = vec!["--cli"];
    for pair in env {
        all.extend(["-e", pair]);
    }
    all.extend([bin.to_str().unwrap(), "mcp"]);
    all.extend_from_slice(args);
    crate::claude::run(&mut sb.command(&mcp_inspector(), &all))
}

/// `tools/call` of `tool` with `args` (each `key=value`) through the
/// Inspector.
fn call(sb: &Sandbox, tool: &str, args: &[&str]) -> Output {
    let mut all = vec!["--method", "tools/call", "--tool-name", tool];
    for arg in args {
        all.push("--tool-arg");
        all.push(arg);
    }
    inspect(sb, &all)
}

/// The result of a call that must succeed.
fn called(sb: &Sandbox, tool: &str, args: &[&str]) -> Value {
    let output = call(sb, tool, args);
    assert_succeeded(&output, format_args!("{tool} {args:?}"));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The refusal code of a call that must be refused (the Inspector prints
/// the result, then fails).
fn refused(sb: &Sandbox, tool: &str, args: &[&str]) -> String {
    let output = call(sb, tool, args);
    assert!(!output.status.success(), "{tool} {args:?} was not refused");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let result: Value = serde_json::Deserializer::from_str(&stdout)
        .into_iter::<Value>()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(result["isError"], true, "{stdout}");
    let text = result["content"][0]["text"].as_str().unwrap();
    text.strip_prefix("error: ")
        .and_then(|rest| rest.split(':').next())
        .unwrap_or_else(|| panic!("not a coded refusal: {text}"))
        .to_owned()
}

fn text(result: &Value) -> &str {
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result.get("structuredContent"), None, "{result}");
    result["content"][0]["text"].as_str().unwrap()
}

#[test]
fn the_inspector_lists_and_calls_every_tool() {
    let _terminal = crate::hosts::shared();
    let sb = Sandbox::new();
    // A recorded session: the Inspector sends no tool-use id, so calls go
    // to the project's latest session.
    parser_session(&sb, S1);

    let listed = inspect(&sb, &["--method", "tools/list"]);
    assert!(listed.status.success());
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let tools = listed["tools"].as_array().unwrap();
    let expected: Vec<&str> = notesoup_core::tools::tools_for(false)
        .map(|tool| tool.name)
        .collect();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, expected);
    for (tool, spec) in tools.iter().zip(notesoup_core::tools::tools_for(false)) {
        assert_eq!(
            tool["description"],
            notesoup_claude::tools::claude_description(spec)
        );
        assert!(!tool["description"].as_str().unwrap().contains("/skill:"));
        assert_eq!(tool["inputSchema"], spec.input_schema);
        assert_eq!(tool["annotations"]["readOnlyHint"], spec.read_only);
        // Text only (see the `structured` tests for why).
        assert_eq!(tool.get("outputSchema"), None, "{tool}");
    }

    let written = called(
        &sb,
        "notes_write",
        &["address=checkpoint.md", "content=# Goal\nfix the parser"],
    );
    assert!(
        text(&written).starts_with("created checkpoint.md"),
        "{written}"
    );
    let updated = called(
        &sb,
        "notes_update",
        &[
            "address=checkpoint.md",
            r#"edits=[{"oldText":"fix the parser","newText":"parser fixed"}]"#,
        ],
    );
    assert!(text(&updated).contains("+2 parser fixed"), "{updated}");
    let read = called(&sb, "notes_read", &["address=checkpoint.md"]);
    assert!(text(&read).ends_with("parser fixed"), "{read}");
    let list = called(&sb, "notes_list", &[]);
    assert!(text(&list).starts_with("1 note"), "{list}");
    let search = called(&sb, "notes_search", &["query=PARSER"]);
    assert!(text(&search).starts_with("1 file"), "{search}");
    let windows = called(&sb, "history_windows", &[]);
    assert!(
        text(&windows).starts_with(&format!("session {S1}")),
        "{windows}"
    );
    let page = called(&sb, "history_list", &[]);
    assert!(text(&page).contains("fix the parser"), "{page}");
    let found = called(&sb, "history_search", &["query=parser"]);
    assert!(text(&found).contains("seq 3 | window"), "{found}");
    let event = called(&sb, "history_read", &["seq=2"]);
    assert!(text(&event).contains("fix the parser"), "{event}");

    assert_eq!(
        refused(&sb, "notes_read", &["address=@project/none.md"]),
        "not_found"
    );
    assert_eq!(
        refused(&sb, "notes_write", &["address=@human/../x.md", "content=x"]),
        "invalid_address"
    );
    assert_eq!(refused(&sb, "history_read", &["seq=999"]), "unknown_seq");
}

/// With `NOTESOUP_MCP_STRUCTURED=1` the Inspector lists core's output
/// schemas, and a success carries core's compact JSON next to the same
/// text; a refusal stays text only.
#[test]
fn the_inspector_sees_structured_results_when_asked_for() {
    let _terminal = crate::hosts::shared();
    let sb = Sandbox::new();
    let structured = ["NOTESOUP_MCP_STRUCTURED=1"];
    let listed = inspect_with(&sb, &structured, &["--method", "tools/list"]);
    assert!(listed.status.success());
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let tools = listed["tools"].as_array().unwrap();
    let specs: Vec<_> = notesoup_core::tools::tools_for(false).collect();
    assert_eq!(tools.len(), specs.len());
    for (tool, spec) in tools.iter().zip(&specs) {
        assert_eq!(Some(&tool["outputSchema"]), spec.output_schema.as_ref());
    }

    let call = |address: &str| {
        let output = inspect_with(
            &sb,
            &structured,
            &[
                "--method",
                "tools/call",
                "--tool-name",
                "notes_write",
                "--tool-arg",
                &format!("address={address}"),
                "--tool-arg",
                "content=# Goal\nfix the parser",
            ],
        );
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let result: Value = serde_json::Deserializer::from_str(&stdout)
            .into_iter::<Value>()
            .next()
            .unwrap()
            .unwrap();
        (output.status.success(), result)
    };
    let key = notesoup_core::notes::project_key(&sb.project);
    let (ok, written) = call("@project/goal.md");
    assert!(ok, "{written}");
    assert_eq!(written["isError"], false, "{written}");
    assert_eq!(
        written["content"],
        json!([{"type": "text", "text": format!("created @project/goal.md (project {key})")}])
    );
    assert_eq!(
        written["structuredContent"],
        json!({"address": "@project/goal.md", "project_key": key, "outcome": "created"})
    );
    let (ok, refused) = call("@human/../x.md");
    assert!(!ok, "{refused}");
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(refused.get("structuredContent"), None, "{refused}");
    assert!(
        refused["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("error: invalid_address: "),
        "{refused}"
    );
}
