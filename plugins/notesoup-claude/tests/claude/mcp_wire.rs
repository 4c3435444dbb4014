//! The MCP wire conversation, pinned byte for byte: what `notesoup mcp` (and
//! `notesoup dream-tools`) answer to every line of sessions in both protocol
//! eras: the stateless 2026-07-28 revision as Claude Code 2.1.332 speaks it,
//! the `initialize` handshake of each earlier revision, a client that does
//! neither, lifecycle mixes, `_meta` in every shape, unknown and
//! unimplemented methods, and the structured results
//! `NOTESOUP_MCP_STRUCTURED` turns on.
//!
//! The server's version and the sandbox's paths are redacted; each
//! `tools/list` is checked tool by tool against core's table (byte for byte)
//! and shown by tool name.

use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::support::Sandbox;

/// A request line.
fn req(id: Value, method: &str, params: Option<Value>) -> String {
    let mut line = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if let Some(params) = params {
        line["params"] = params;
    }
    line.to_string()
}

/// A notification line.
fn note(method: &str) -> String {
    json!({"jsonrpc": "2.0", "method": method}).to_string()
}

/// The `_meta` Claude Code 2.1.332 sends, with `extra` keys set over it.
fn meta(extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1.332"},
        "io.modelcontextprotocol/clientCapabilities": {"roots": {"listChanged": true}, "elicitation": {"form": {}, "url": {}}}
    });
    if let (Some(meta), Value::Object(extra)) = (meta.as_object_mut(), extra) {
        meta.extend(extra);
    }
    meta
}

/// The handshake with `params`, then a tools/list.
fn initialize_then_list(params: Option<Value>) -> Vec<String> {
    vec![
        req(json!(0), "initialize", params),
        req(json!(1), "tools/list", None),
    ]
}

fn init(version: &str) -> Value {
    json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
}

fn with_meta(mut params: Value, meta: Value) -> Value {
    params["_meta"] = meta;
    params
}

fn list_call(meta: Value) -> Value {
    json!({"name": "notes_list", "arguments": {}, "_meta": meta})
}

/// The sessions of `notesoup mcp`, each in a server of its own.
fn sessions() -> Vec<(&'static str, Vec<String>)> {
    let m = || meta(json!({}));
    let version = |v: &str| meta(json!({"io.modelcontextprotocol/protocolVersion": v}));
    let only_version = |v: &str| json!({"_meta": {"io.modelcontextprotocol/protocolVersion": v}});
    vec![
        (
            "Claude Code 2.1.332: the stateless revision",
            vec![
                req(
                    json!("server-discover-probe-1"),
                    "server/discover",
                    Some(json!({"_meta": m()})),
                ),
                req(json!(1), "tools/list", Some(json!({"_meta": m()}))),
                req(
                    json!(2),
                    "tools/call",
                    Some(list_call(meta(
                        json!({"claudecode/toolUseId": "toolu_1", "progressToken": 2}),
                    ))),
                ),
                req(
                    json!(3),
                    "tools/call",
                    Some(
                        json!({"name": "notes_read", "arguments": {"address": "@project/none"}, "_meta": meta(json!({"claudecode/toolUseId": "toolu_2"}))}),
                    ),
                ),
                req(
                    json!(4),
                    "tools/call",
                    Some(json!({"name": "nope", "arguments": {}, "_meta": m()})),
                ),
                req(json!(5), "ping", Some(json!({"_meta": m()}))),
                req(json!(6), "ping", None),
                req(json!(7), "resources/list", Some(json!({"_meta": m()}))),
                req(json!(8), "prompts/list", Some(json!({"_meta": m()}))),
                req(
                    json!(9),
                    "logging/setLevel",
                    Some(json!({"level": "info", "_meta": m()})),
                ),
                req(
                    json!(10),
                    "completion/complete",
                    Some(json!({"_meta": m()})),
                ),
                req(
                    json!(11),
                    "tools/call",
                    Some(json!({"name": "notes_list", "_meta": m()})),
                ),
                req(
                    json!(12),
                    "tools/call",
                    Some(json!({"name": "notes_list", "arguments": null, "_meta": m()})),
                ),
                req(json!(13), "tools/list", None),
                req(json!(14), "tools/list", Some(only_version("2026-07-28"))),
                req(json!(15), "initialize", Some(init("2025-11-25"))),
                req(json!(16), "tools/list", Some(json!({"_meta": m()}))),
                req(json!(17), "no/such", Some(json!({"_meta": m()}))),
                req(json!(18), "server/discover", None),
                req(json!(19), "tools/call", Some(json!({"_meta": m()}))),
                req(
                    json!(20),
                    "tools/list",
                    Some(json!({"cursor": "x", "_meta": m()})),
                ),
                req(
                    json!(21),
                    "tools/call",
                    Some(
                        json!({"name": "notes_list", "arguments": {}, "task": {"ttl": 1}, "_meta": m()}),
                    ),
                ),
            ],
        ),
        (
            "the initialize handshake",
            vec![
                req(json!(0), "initialize", Some(init("2025-11-25"))),
                note("notifications/initialized"),
                req(json!(1), "tools/list", None),
                req(
                    json!(2),
                    "tools/call",
                    Some(json!({"name": "notes_list", "arguments": {}})),
                ),
                req(
                    json!(3),
                    "tools/call",
                    Some(json!({"name": "notes_read", "arguments": {"address": "@project/x"}})),
                ),
                req(json!(4), "ping", None),
                req(json!(5), "resources/list", None),
                req(json!(6), "logging/setLevel", Some(json!({"level": "info"}))),
                req(json!(7), "initialize", Some(init("2025-11-25"))),
                req(json!(8), "server/discover", Some(json!({"_meta": m()}))),
                req(json!(9), "tools/list", Some(json!({"_meta": m()}))),
                req(json!(10), "tools/list", Some(only_version("2026-07-28"))),
                req(json!(11), "tools/list", Some(only_version("2025-06-18"))),
                req(json!(12), "tools/call", Some(json!({"name": 5}))),
                req(
                    json!(13),
                    "tools/call",
                    Some(json!({"name": "notes_list", "arguments": []})),
                ),
                req(
                    json!(14),
                    "tools/call",
                    Some(json!({"name": "notes_list", "arguments": 5})),
                ),
                req(
                    json!(15),
                    "tools/call",
                    Some(json!({"name": "", "arguments": {}})),
                ),
                req(
                    json!(16),
                    "tools/call",
                    Some(
                        json!({"name": "notes_list", "arguments": {}, "_meta": {"progressToken": "x"}}),
                    ),
                ),
                req(
                    json!(17),
                    "tools/call",
                    Some(json!({"name": "notes_list", "arguments": {}, "_meta": 5})),
                ),
                req(
                    json!(18),
                    "tools/call",
                    Some(list_call(only_version("2025-06-18")["_meta"].clone())),
                ),
                req(
                    json!(19),
                    "tools/call",
                    Some(list_call(only_version("2026-07-28")["_meta"].clone())),
                ),
                req(
                    json!(20),
                    "completion/complete",
                    Some(
                        json!({"ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a", "value": "b"}}),
                    ),
                ),
                req(json!(21), "prompts/get", Some(json!({"name": "x"}))),
                req(json!(22), "no/such", None),
                req(json!(23), "server/discover", None),
                req(json!(24), "tools/list", Some(json!({"cursor": "abc"}))),
                req(json!(25), "subscriptions/listen", Some(json!({}))),
                req(json!("s"), "tools/list", Some(json!({"_meta": 5}))),
                req(
                    json!(1.5),
                    "tools/call",
                    Some(json!({"name": "notes_list", "arguments": {}})),
                ),
            ],
        ),
        (
            "initialize 2024-11-05",
            initialize_then_list(Some(init("2024-11-05"))),
        ),
        (
            "initialize 2025-03-26",
            vec![
                req(json!(0), "initialize", Some(init("2025-03-26"))),
                req(
                    json!(1),
                    "tools/call",
                    Some(json!({"name": "notes_list", "arguments": {}})),
                ),
            ],
        ),
        (
            "initialize 2025-06-18",
            initialize_then_list(Some(init("2025-06-18"))),
        ),
        (
            "initialize naming the stateless revision",
            initialize_then_list(Some(init("2026-07-28"))),
        ),
        (
            "initialize naming a revision nobody knows",
            initialize_then_list(Some(init("1999-01-01"))),
        ),
        ("initialize with no params", initialize_then_list(None)),
        (
            "initialize with empty params",
            initialize_then_list(Some(json!({}))),
        ),
        (
            "initialize with a client name only",
            initialize_then_list(Some(
                json!({"protocolVersion": "2025-11-25", "clientInfo": {"name": "x"}}),
            )),
        ),
        (
            "initialize with a protocol version that is not a string",
            initialize_then_list(Some(json!({"protocolVersion": 5}))),
        ),
        (
            "initialize with extra fields and the stateless _meta",
            initialize_then_list(Some(with_meta(
                json!({"protocolVersion": "2025-11-25", "capabilities": {"roots": {"listChanged": true}, "sampling": {}}, "clientInfo": {"name": "t", "version": "1"}, "extra": 1}),
                m(),
            ))),
        ),
        (
            "initialize twice, the second naming another revision",
            vec![
                req(json!(0), "initialize", Some(init("2025-11-25"))),
                req(json!(1), "initialize", Some(init("2024-11-05"))),
                req(json!(2), "tools/list", None),
            ],
        ),
        (
            "neither a handshake nor the stateless _meta",
            vec![
                req(json!(1), "tools/list", None),
                req(
                    json!(2),
                    "tools/call",
                    Some(
                        json!({"name": "notes_list", "arguments": {}, "_meta": {"claudecode/toolUseId": "t"}}),
                    ),
                ),
                req(json!(3), "initialize", Some(init("2025-11-25"))),
                req(json!(4), "tools/list", Some(json!({"_meta": m()}))),
            ],
        ),
        (
            "ping and server/discover choose no lifecycle",
            vec![
                req(json!(1), "ping", None),
                req(json!(2), "server/discover", None),
                req(
                    json!(3),
                    "server/discover",
                    Some(only_version("2026-07-28")),
                ),
                req(json!(4), "server/discover", Some(json!({"_meta": m()}))),
                req(
                    json!(5),
                    "server/discover",
                    Some(json!({"_meta": version("2025-06-18")})),
                ),
                req(json!(6), "tools/list", None),
            ],
        ),
        (
            "the stateless _meta naming an earlier revision",
            vec![
                req(
                    json!(1),
                    "tools/list",
                    Some(json!({"_meta": version("2025-06-18")})),
                ),
                req(
                    json!(2),
                    "tools/call",
                    Some(list_call(version("2025-06-18"))),
                ),
                req(json!(3), "ping", None),
                req(json!(4), "tools/list", None),
                req(json!(5), "resources/list", Some(json!({"_meta": m()}))),
            ],
        ),
        (
            "the stateless _meta without clientInfo",
            vec![
                req(
                    json!(1),
                    "tools/list",
                    Some(
                        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}),
                    ),
                ),
                req(json!(2), "tools/list", Some(only_version("2026-07-28"))),
                req(json!(3), "tools/list", None),
            ],
        ),
        (
            "stateless, then requests without _meta",
            vec![
                req(json!(1), "tools/list", Some(json!({"_meta": m()}))),
                req(json!(2), "tools/list", None),
                req(
                    json!(3),
                    "tools/call",
                    Some(json!({"name": "notes_list", "arguments": {}})),
                ),
                req(json!(4), "ping", None),
                req(json!(5), "initialize", Some(init("2025-11-25"))),
                req(json!(6), "tools/list", None),
                req(json!(7), "server/discover", Some(json!({"_meta": m()}))),
            ],
        ),
        (
            "_meta in odd shapes",
            vec![
                req(
                    json!(1),
                    "tools/list",
                    Some(json!({"_meta": meta(json!({"io.modelcontextprotocol/clientInfo": 5}))})),
                ),
                req(
                    json!(2),
                    "tools/list",
                    Some(
                        json!({"_meta": meta(json!({"io.modelcontextprotocol/clientCapabilities": 5}))}),
                    ),
                ),
                req(
                    json!(3),
                    "tools/list",
                    Some(
                        json!({"_meta": meta(json!({"io.modelcontextprotocol/protocolVersion": 5}))}),
                    ),
                ),
                req(
                    json!(4),
                    "tools/call",
                    Some(list_call(meta(json!({"claudecode/toolUseId": 5})))),
                ),
            ],
        ),
        (
            "clientCapabilities that are not an object, first",
            vec![
                req(
                    json!(1),
                    "tools/list",
                    Some(
                        json!({"_meta": meta(json!({"io.modelcontextprotocol/clientCapabilities": 5}))}),
                    ),
                ),
                req(json!(2), "tools/list", None),
            ],
        ),
        (
            "unsupported protocol versions",
            vec![
                req(json!(1), "tools/list", Some(only_version("2099-01-01"))),
                req(
                    json!(2),
                    "server/discover",
                    Some(json!({"_meta": version("2099-01-01")})),
                ),
                req(
                    json!(3),
                    "initialize",
                    Some(with_meta(
                        init("2025-11-25"),
                        json!({"io.modelcontextprotocol/protocolVersion": "2099-01-01"}),
                    )),
                ),
                req(json!(4), "ping", Some(only_version("2099-01-01"))),
            ],
        ),
        (
            "server/discover twice, then the handshake",
            vec![
                req(json!(1), "server/discover", Some(json!({"_meta": m()}))),
                req(json!(2), "server/discover", Some(json!({"_meta": m()}))),
                req(json!(3), "initialize", Some(init("2025-11-25"))),
                req(json!(4), "tools/list", None),
            ],
        ),
        (
            "notifications before anything",
            vec![
                note("notifications/initialized"),
                note("notifications/cancelled"),
                req(json!(1), "tools/list", None),
            ],
        ),
    ]
}

/// One server's answers to `lines`, each line followed by what came back
/// up to the next, redacted.
fn conversation(sb: &Sandbox, args: &[&str], lines: &[String]) -> String {
    let input: String = lines.iter().map(|line| format!("{line}\n")).collect();
    let output = sb.run(args, input.as_bytes());
    assert!(output.status.success(), "{output:?}");
    let root = sb.home.parent().unwrap().to_string_lossy().into_owned();
    let server = format!(
        r#"{{"name":"notesoup","version":"{}"}}"#,
        env!("CARGO_PKG_VERSION")
    );
    let mut shown = String::new();
    for line in lines {
        shown.push_str(&format!("> {line}\n"));
    }
    for reply in String::from_utf8(output.stdout).unwrap().lines() {
        let reply = reply
            .replace(&root, "<sandbox>")
            .replace(&server, r#"{"name":"notesoup","version":"<version>"}"#);
        shown.push_str(&format!("< {}\n", tools_by_name(&reply, args, sb)));
    }
    shown
}

/// `reply` with its tool list (the last member of a `tools/list` result)
/// shown by name, once every tool in it is checked against the table.
fn tools_by_name(reply: &str, args: &[&str], sb: &Sandbox) -> String {
    let Some(start) = reply
        .find(r#""tools":["#)
        .map(|at| at + r#""tools":"#.len())
    else {
        return reply.to_owned();
    };
    let end = reply.len() - "}}".len();
    let tools: Vec<Box<RawValue>> = serde_json::from_str(&reply[start..end]).unwrap();
    let expected = expected_tools(args, sb);
    assert_eq!(tools.len(), expected.len(), "{reply}");
    let mut names = Vec::new();
    for (tool, expected) in tools.iter().zip(&expected) {
        assert_eq!(tool.get(), expected.to_string());
        names.push(expected["name"].as_str().unwrap().to_owned());
    }
    format!("{}[{}]}}}}", &reply[..start], names.join(","))
}

/// Each listed tool as it must be written: core's table, the skill named as
/// Claude names it, the read-only hint, and the output schema when
/// structured results are on.
fn expected_tools(args: &[&str], sb: &Sandbox) -> Vec<Value> {
    if args[0] == "dream-tools" {
        return notesoup_core::dream::dream_tool_table()
            .into_iter()
            .map(|tool| {
                json!({"name": tool.name, "description": tool.description,
                    "inputSchema": tool.input_schema,
                    "annotations": {"readOnlyHint": !tool.sequential}})
            })
            .collect();
    }
    let structured = sb
        .env
        .iter()
        .any(|(key, _)| key == "NOTESOUP_MCP_STRUCTURED");
    notesoup_core::tools::tools_for(false)
        .map(|tool| {
            let mut listed = json!({"name": tool.name,
                "description": tool.description.replace("/skill:memory", "the notesoup:memory skill"),
                "inputSchema": tool.input_schema});
            if structured {
                listed["outputSchema"] = tool.output_schema.clone().unwrap();
            }
            listed["annotations"] = json!({"readOnlyHint": tool.read_only});
            listed
        })
        .collect()
}

#[test]
fn the_wire_conversation_is_pinned() {
    let mut shown = String::new();
    for (name, lines) in sessions() {
        let sb = Sandbox::new();
        shown.push_str(&format!(
            "=== {name}\n{}",
            conversation(&sb, &["mcp"], &lines)
        ));
    }
    for (name, lines) in sessions().into_iter().take(2) {
        let mut sb = Sandbox::new();
        sb.set_env("NOTESOUP_MCP_STRUCTURED", "1");
        shown.push_str(&format!(
            "=== structured: {name}\n{}",
            conversation(&sb, &["mcp"], &lines)
        ));
    }
    let sb = Sandbox::new();
    let home = sb.notes.to_string_lossy().into_owned();
    let dream = vec![
        req(json!(0), "initialize", Some(init("2025-11-25"))),
        req(json!(1), "tools/list", None),
        req(
            json!(2),
            "tools/call",
            Some(json!({"name": "ls", "arguments": {"path": "."}})),
        ),
        req(
            json!(3),
            "tools/call",
            Some(json!({"name": "read", "arguments": {"path": "nope.md"}})),
        ),
        req(
            json!(4),
            "tools/call",
            Some(json!({"name": "zz", "arguments": {}})),
        ),
        req(
            json!(5),
            "tools/list",
            Some(json!({"_meta": meta(json!({}))})),
        ),
    ];
    shown.push_str(&format!(
        "=== dream-tools\n{}",
        conversation(&sb, &["dream-tools", "--notes-home", &home], &dream)
    ));
    insta::assert_snapshot!(shown);
}
