//! `notesoup mcp` over real stdio: the handshake of both protocol eras, the
//! tool list, calls resolved to the calling session, refusals.

use std::io::Write;

use serde_json::{Value, json};

use crate::support::{McpServer, Sandbox, fake_token, mcp_call_row, tools_call, user_row};

const S1: &str = "44444444-4444-4444-8444-444444444444";

/// A running `notesoup mcp`.
struct Server(McpServer);

impl Server {
    fn start(sb: &Sandbox) -> Self {
        Self(McpServer::start(sb))
    }

    fn send(&mut self, message: &Value) {
        self.0.send(message);
    }

    fn request(&mut self, message: &Value) -> Value {
        self.0.request(message)
    }

    /// `tools/call` as Claude Code 2.1.332 sends it, with a progress token.
    fn call(&mut self, id: u64, name: &str, arguments: Value, tool_use_id: &str) -> Value {
        let mut request = tools_call(id, name, arguments, tool_use_id);
        request["params"]["_meta"]["progressToken"] = id.into();
        self.request(&request)["result"].clone()
    }

    /// A tools call that must succeed: its result.
    fn ok(&mut self, id: u64, name: &str, arguments: Value, tool_use_id: &str) -> Value {
        let result = self.call(id, name, arguments, tool_use_id);
        assert_eq!(result["isError"], false, "{name}: {result}");
        result
    }

    fn finish(self) {
        self.0.finish();
    }
}

fn text(result: &Value) -> &str {
    assert_eq!(result["content"].as_array().unwrap().len(), 1, "{result}");
    assert_eq!(result["content"][0]["type"], "text");
    assert!(result.get("structuredContent").is_none());
    result["content"][0]["text"].as_str().unwrap()
}

#[test]
fn both_eras_handshake_and_list_the_same_tools() {
    let sb = Sandbox::new();
    let mut server = Server::start(&sb);
    let discover = server.request(&json!({"jsonrpc":"2.0","id":"server-discover-probe-1","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"claude-code","version":"2.1.332"},"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"elicitation":{"form":{},"url":{}}}}}}));
    assert_eq!(discover["result"]["supportedVersions"][0], "2026-07-28");
    assert_eq!(
        discover["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "notesoup"
    );
    let init = server.request(&json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}));
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    server.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    let list = server.request(&json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}));
    let tools = list["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for expected in [
        "history_windows",
        "history_list",
        "history_search",
        "history_read",
    ] {
        assert!(names.contains(&expected), "{names:?}");
    }
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert_eq!(tool["inputSchema"]["additionalProperties"], false, "{tool}");
        assert!(tool.get("outputSchema").is_none());
        // This host's skill, never Pi's `/skill:` syntax.
        let description = tool["description"].as_str().unwrap();
        assert!(!description.contains("/skill:"), "{description}");
        if tool["name"].as_str().unwrap().starts_with("notes_") {
            assert!(description.contains("notesoup:memory"), "{description}");
        }
    }
    let unknown = server.request(&json!({"jsonrpc":"2.0","id":2,"method":"resources/list"}));
    assert_eq!(unknown["error"]["code"], -32601);
    let garbage = server.request(&json!("just a string"));
    assert_eq!(garbage["error"]["code"], -32600);
    server.finish();
}

#[test]
fn started_on_its_own_history_is_refused_clearly() {
    let sb = Sandbox::new();
    let mut server = Server::start(&sb);
    let result = server.call(1, "history_windows", json!({}), "toolu_x");
    assert_eq!(result["isError"], true);
    assert!(
        text(&result)
            .starts_with("error: no_session: no Claude Code session is known to notesoup here yet"),
        "{result}"
    );
    let unknown = server.request(&json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope","arguments":{}}}));
    assert_eq!(unknown["error"]["code"], -32602);
    server.finish();
}

#[test]
fn history_reads_the_calling_session() {
    let sb = Sandbox::new();
    sb.start_session(
        S1,
        &[
            user_row("u1", "h1", "find the parser bug"),
            mcp_call_row("a1", Some("u1"), "toolu_hist", "history_list"),
        ],
    );
    let mut server = Server::start(&sb);
    let windows = server.ok(1, "history_windows", json!({}), "toolu_hist");
    assert_eq!(
        text(&windows),
        format!("session {S1}\nwindow claude:{S1}:1 | seqs 1-4 | 3 events | open")
    );
    let search = server.call(
        2,
        "history_search",
        json!({"query": "PARSER"}),
        "toolu_hist",
    );
    assert!(
        text(&search).starts_with(&format!("seq 2 | window claude:{S1}:1 | user\n")),
        "{search}"
    );
    assert!(text(&search).ends_with("parser bug"), "{search}");
    let bad = server.call(3, "history_read", json!({"seq": "x"}), "toolu_hist");
    assert_eq!(bad["isError"], true);
    assert!(
        text(&bad).starts_with("error: invalid_arguments: "),
        "{bad}"
    );
    server.finish();
}

const S2: &str = "55555555-5555-4555-8555-555555555555";

/// Records a session whose transcript holds one prompt and one `tool_use`.
fn session_with_call(sb: &Sandbox, session: &str, prompt: &str, tool_use_id: &str) {
    sb.hook(
        "session-start",
        &sb.payload("SessionStart-startup", session),
    )
    .unwrap();
    sb.append_transcript(session, &[
        json!({"type":"user","uuid":"u1","parentUuid":null,"isSidechain":false,"message":{"role":"user","content":prompt}}).to_string(),
        mcp_call_row("a1", Some("u1"), tool_use_id, "history_list"),
    ]);
}

#[test]
fn each_call_resolves_its_own_session_with_the_latest_as_fallback() {
    let sb = Sandbox::new();
    session_with_call(&sb, S1, "prompt of session one", "toolu_one");
    session_with_call(&sb, S2, "prompt of session two", "toolu_two");
    let mut server = Server::start(&sb);
    let list = |server: &mut Server, id, tool_use_id| {
        let result = server.call(id, "history_list", json!({"roles": ["user"]}), tool_use_id);
        text(&result).to_owned()
    };
    assert!(list(&mut server, 1, "toolu_one").contains("prompt of session one"));
    assert!(list(&mut server, 2, "toolu_two").contains("prompt of session two"));
    // A tool_use row not on disk yet: the project's latest session answers.
    assert!(list(&mut server, 3, "toolu_unflushed").contains("prompt of session two"));
    server.finish();
}

#[test]
fn started_on_its_own_the_durable_homes_are_served() {
    let sb = Sandbox::new();
    let mut server = Server::start(&sb);
    let wrote = server.ok(
        1,
        "notes_write",
        json!({"address": "@project/decisions.md", "content": "# Decisions\nUse tabs."}),
        "toolu_a",
    );
    let key = notesoup_core::notes::project_key(&sb.project);
    assert_eq!(
        text(&wrote),
        format!("created @project/decisions.md (project {key})")
    );
    assert!(
        sb.notes
            .join("project")
            .join(&key)
            .join("decisions.md")
            .is_file()
    );
    let read = server.call(
        2,
        "notes_read",
        json!({"address": "@project/decisions"}),
        "toolu_b",
    );
    assert!(text(&read).ends_with("# Decisions\nUse tabs."), "{read}");
    for (id, name, arguments) in [
        (
            3,
            "notes_write",
            json!({"address": "checkpoint.md", "content": "x"}),
        ),
        (4, "notes_read", json!({"address": "checkpoint.md"})),
        (
            5,
            "notes_update",
            json!({"address": "@project/decisions.md", "rename_to": "moved.md"}),
        ),
    ] {
        let refused = server.call(id, name, arguments, "toolu_c");
        assert_eq!(refused["isError"], true, "{refused}");
        assert!(
            text(&refused).starts_with("error: no_session: no session yet"),
            "{refused}"
        );
    }
    let listed = server.call(6, "notes_list", json!({}), "toolu_d");
    assert_eq!(text(&listed).lines().next(), Some("1 note"), "{listed}");
    assert!(!sb.notes.join("pi").exists(), "no session home was touched");
    server.finish();
}

#[test]
fn session_notes_land_in_the_chain_s_notes_session() {
    let sb = Sandbox::new();
    session_with_call(&sb, S1, "first window", "toolu_one");
    // /clear hands the chain over to S2.
    sb.hook("session-end", &sb.payload("SessionEnd-clear", S1));
    sb.hook("session-start", &sb.payload("SessionStart-clear", S2))
        .unwrap();
    sb.append_transcript(S2, &[mcp_call_row("a9", None, "toolu_two", "notes_write")]);
    let mut server = Server::start(&sb);
    server.ok(
        1,
        "notes_write",
        json!({"address": "checkpoint.md", "content": "# Goal\nship it"}),
        "toolu_two",
    );
    let file = sb.notes.join("pi/session").join(S1).join("checkpoint.md");
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .ends_with("# Goal\nship it")
    );
    let updated = server.call(2, "notes_update", json!({"address": "checkpoint.md", "edits": [{"oldText": "ship it", "newText": "shipped"}]}), "toolu_two");
    assert!(
        text(&updated).starts_with("updated checkpoint.md"),
        "{updated}"
    );
    // Core renders the receipt's line diff (not the old `note body` kind).
    assert!(
        text(&updated).ends_with("diff:\n 1 # Goal\n-2 ship it\n+2 shipped"),
        "{updated}"
    );
    let found = server.call(3, "notes_search", json!({"query": "SHIPPED"}), "toolu_two");
    assert!(
        text(&found).starts_with("1 file\n- checkpoint.md"),
        "{found}"
    );
    let missing = server.call(4, "notes_read", json!({"address": "nope.md"}), "toolu_two");
    assert_eq!(text(&missing), "error: not_found: note not found");
    let foreign = server.call(
        5,
        "notes_write",
        json!({"address": "@agents/other/x.md", "content": "x"}),
        "toolu_two",
    );
    assert!(
        text(&foreign).starts_with("error: invalid_scope: "),
        "{foreign}"
    );
    server.finish();
}

/// The server keeps the decoded chain between calls; an appended, truncated
/// or replaced transcript is decoded again, so no stale seq is served.
#[test]
fn history_follows_a_transcript_that_grows_shrinks_or_is_replaced() {
    let sb = Sandbox::new();
    sb.start_session(S1, &[user_row("u1", "h1", "first prompt")]);
    let mut server = Server::start(&sb);
    let windows = |server: &mut Server, id: u64| {
        text(&server.call(id, "history_windows", json!({}), "toolu_none")).to_owned()
    };
    let one = format!("session {S1}\nwindow claude:{S1}:1 | seqs 1-2 | 2 events | open");
    assert_eq!(windows(&mut server, 1), one);
    assert_eq!(windows(&mut server, 2), one, "the cached decode");
    // Appended.
    sb.append_transcript(S1, &[user_row("u2", "u1", "second prompt")]);
    assert_eq!(
        windows(&mut server, 3),
        format!("session {S1}\nwindow claude:{S1}:1 | seqs 1-3 | 3 events | open")
    );
    let read = server.call(4, "history_read", json!({"seq": 3}), "toolu_none");
    assert!(text(&read).contains("second prompt"), "{read}");
    // Truncated back to the first two rows: seq 3 is gone.
    let path = sb.transcript(S1);
    let kept: String = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .take(2)
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&path)
        .unwrap()
        .write_all(kept.as_bytes())
        .unwrap();
    assert_eq!(windows(&mut server, 5), one);
    let gone = server.call(6, "history_read", json!({"seq": 3}), "toolu_none");
    assert_eq!(gone["isError"], true, "{gone}");
    // Replaced by another file of the same length: its text is served.
    let replaced = kept.replace("first prompt", "FIRST PROMPT");
    let fresh = path.with_extension("new");
    std::fs::write(&fresh, &replaced).unwrap();
    std::fs::rename(&fresh, &path).unwrap();
    let read = server.call(7, "history_read", json!({"seq": 2}), "toolu_none");
    assert!(text(&read).contains("FIRST PROMPT"), "{read}");
    server.finish();
}

/// One exchange as a long session writes it: a prompt, a `tool_use` and its
/// 2,000-byte result.
fn exchange_rows(i: usize) -> [String; 3] {
    let parent = match i {
        0 => Value::Null,
        _ => json!(format!("r{}", i - 1)),
    };
    [
        json!({"type":"user","uuid":format!("u{i}"),"parentUuid":parent,"isSidechain":false,
            "message":{"role":"user","content":format!("prompt number {i}")}})
        .to_string(),
        json!({"type":"assistant","uuid":format!("a{i}"),"parentUuid":format!("u{i}"),"isSidechain":false,
            "message":{"id":format!("m{i}"),"model":"claude-opus-5-5","role":"assistant","content":[
                {"type":"tool_use","id":format!("t{i}"),"name":"Bash","input":{"command":"ls"}}]}})
        .to_string(),
        json!({"type":"user","uuid":format!("r{i}"),"parentUuid":format!("a{i}"),"isSidechain":false,
            "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":format!("t{i}"),
                "content":"x".repeat(2_000),"is_error":false}]}})
        .to_string(),
    ]
}

/// The server's resident memory in KiB.
fn rss_kib(server: &Server) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.0.id())).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Memory stays bounded on a long transcript: after 1,000 calls of every
/// history tool and `notes_list`, with an exchange appended every tenth
/// call, the server's resident memory is at most twice what it was after
/// its first history call; and every append is served at once.
#[test]
fn memory_stays_bounded_over_a_thousand_calls_on_a_long_transcript() {
    const EXCHANGES: usize = 4_000; // about 10 MB
    let sb = Sandbox::new();
    sb.hook("session-start", &sb.payload("SessionStart-startup", S1))
        .unwrap();
    let rows: Vec<String> = (0..EXCHANGES).flat_map(exchange_rows).collect();
    sb.append_transcript(S1, &rows);
    assert!(std::fs::metadata(sb.transcript(S1)).unwrap().len() > 10_000_000);
    let mut server = Server::start(&sb);
    let mut exchanges = EXCHANGES;
    let tool_use = |exchanges: usize| format!("t{}", exchanges - 1);
    server.ok(1, "history_windows", json!({}), &tool_use(exchanges));
    let rss_first = rss_kib(&server);
    for call in 0..1_000u64 {
        if call % 10 == 9 {
            sb.append_transcript(S1, &exchange_rows(exchanges));
            exchanges += 1;
        }
        let newest = format!("prompt number {}", exchanges - 1);
        let (name, arguments) = match call % 5 {
            0 => ("history_list", json!({"limit": 3})),
            1 => ("history_search", json!({"query": newest})),
            2 => ("history_read", json!({"seq": 1 + 4 * (call % 1000)})),
            3 => ("notes_list", json!({})),
            _ => ("history_windows", json!({})),
        };
        let result = server.ok(call + 2, name, arguments, &tool_use(exchanges));
        if name == "history_search" {
            assert!(text(&result).ends_with(&newest), "{result}");
        }
    }
    let rss_after = rss_kib(&server);
    assert!(
        rss_after <= 2 * rss_first,
        "resident memory grew from {rss_first} KiB to {rss_after} KiB"
    );
    server.finish();
}

/// A running server serves unchanged note heads on change notification:
/// every change after a warm `notes_list` shows at the next call, among
/// them an edit in place to the same length within the same second.
#[test]
fn a_warm_notes_list_sees_every_change() {
    let sb = Sandbox::new();
    let key = notesoup_core::notes::project_key(&sb.project);
    let home = sb.notes.join("project").join(&key);
    std::fs::create_dir_all(home.join("topics")).unwrap();
    let note = |day: u8| {
        format!(
            "---\ncreatedAt: 2026-01-01T00:00:00.000+00:00\nupdatedAt: 2026-01-{day:02}T00:00:00.000+00:00\n---\n\nbody"
        )
    };
    std::fs::write(home.join("a.md"), note(2)).unwrap();
    std::fs::write(home.join("topics/b.md"), note(1)).unwrap();
    // Heads are kept (and watched) only once a note has not changed for 2 s.
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    let mut server = Server::start(&sb);
    let mut id = 0;
    let mut list = |server: &mut Server| {
        id += 1;
        let listed = server.call(id, "notes_list", json!({}), "toolu_list");
        text(&listed).to_owned()
    };
    let row = |path: &str, day: u8| {
        format!("- @project/{path} (project {key}) | updated 2026-01-{day:02}T00:00:00.000+00:00")
    };
    let page = |rows: &[String]| format!("{} notes\n{}", rows.len(), rows.join("\n"));
    let first = page(&[row("a.md", 2), row("topics/b.md", 1)]);
    assert_eq!(list(&mut server), first);
    assert_eq!(list(&mut server), first);
    std::fs::write(home.join("topics/b.md"), note(3)).unwrap();
    assert_eq!(
        list(&mut server),
        page(&[row("topics/b.md", 3), row("a.md", 2)]),
        "edited in place"
    );
    std::fs::rename(home.join("a.md"), home.join("topics/c.md")).unwrap();
    assert_eq!(
        list(&mut server),
        page(&[row("topics/b.md", 3), row("topics/c.md", 2)]),
        "moved"
    );
    let outside = sb.home.join("outside.md");
    std::fs::hard_link(home.join("topics/c.md"), &outside).unwrap();
    std::fs::write(&outside, note(4)).unwrap();
    assert_eq!(
        list(&mut server),
        page(&[row("topics/c.md", 4), row("topics/b.md", 3)]),
        "written through a hard link"
    );
    std::fs::remove_file(home.join("topics/b.md")).unwrap();
    assert_eq!(
        list(&mut server),
        page(&[row("topics/c.md", 4)]).replace("1 notes", "1 note"),
        "removed"
    );
    server.finish();
}

#[test]
fn a_tool_this_server_does_not_list_is_an_unknown_tool() {
    let sb = Sandbox::new();
    let mut server = Server::start(&sb);
    // The budget tools are core's but not Claude's: they are as unknown
    // here as a name core has no tool for.
    for (id, name) in [
        (1, "wipe_memory"),
        (2, "get_context_remaining"),
        (3, "nope"),
    ] {
        let answer = server.request(&json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":{}}}));
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        assert_eq!(
            answer["error"]["message"],
            format!("unknown tool: {name}"),
            "{answer}"
        );
    }
    server.finish();
}

/// A running server keeps the settings it read while neither settings file
/// changed, and reads them again once one did: the user's file turning the
/// credential guard on by an edit in place to the same length, and off by a
/// new file renamed over it, each seen at the next call, whether that call
/// comes at once or after the file settled.
#[test]
fn a_running_server_sees_every_settings_change() {
    let sb = Sandbox::new();
    let user = sb.home.join(".claude/notesoup.json");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    let off = r#"{"notesoup":{"secretGuard":false}}"#;
    let on = r#"{"notesoup":{"secretGuard":true }}"#;
    assert_eq!(off.len(), on.len());
    // Settings are kept only once their files have not changed for 2 s.
    let settle = || std::thread::sleep(std::time::Duration::from_millis(2_100));
    let replace = |text: &str| {
        let fresh = user.with_extension("new");
        std::fs::write(&fresh, text).unwrap();
        std::fs::rename(&fresh, &user).unwrap();
    };
    std::fs::write(&user, off).unwrap();
    settle();
    let mut server = Server::start(&sb);
    let content = format!("deploy token: {}\n", fake_token());
    let mut id = 0;
    let mut write = |server: &mut Server| {
        id += 1;
        let result = server.call(
            id,
            "notes_write",
            json!({"address": "@project/deploy.md", "content": content}),
            "toolu_w",
        );
        let written = result["isError"] == false;
        assert!(
            written || text(&result).starts_with("error: secret_detected: "),
            "{result}"
        );
        written
    };
    assert!(write(&mut server), "the user's settings turn the guard off");
    assert!(write(&mut server), "as kept");
    std::fs::write(&user, on).unwrap();
    settle();
    assert!(!write(&mut server), "edited in place: the guard is on");
    assert!(!write(&mut server), "as kept");
    replace(off);
    assert!(write(&mut server), "replaced: the guard is off at once");
    settle();
    assert!(write(&mut server), "as kept");
    replace(on);
    settle();
    assert!(!write(&mut server), "replaced and settled: the guard is on");
    server.finish();
}

/// After the session writes a note, the server keeps the next window's
/// boot ready: once the folder has settled it lists the home and keeps its
/// shelf, so the boot after `/clear` is served from it, nothing listed. A
/// server that ends before then keeps nothing.
#[test]
fn the_server_makes_the_next_boot_ready_after_a_write() {
    let sb = Sandbox::new();
    session_with_call(&sb, S1, "first window", "toolu_one");
    sb.append_transcript(S1, &[mcp_call_row("a9", None, "toolu_two", "notes_write")]);
    let mut server = Server::start(&sb);
    server.ok(
        1,
        "notes_write",
        json!({"address": "@project/gamma.md", "content": "# Gamma\nfresh"}),
        "toolu_two",
    );
    // No hook has run since the write: the server kept the shelf.
    let kept = sb
        .shelves_listing("gamma.md", std::time::Duration::from_secs(20))
        .expect("a shelf lists gamma.md");
    sb.hook("session-end", &sb.payload("SessionEnd-clear", S1));
    let boot = crate::support::context_of(
        &sb.hook("session-start", &sb.payload("SessionStart-clear", S2))
            .unwrap(),
        "SessionStart",
    );
    assert!(boot.contains("@project/gamma.md"), "{boot}");
    // Served from the kept shelf, nothing listed.
    sb.assert_shelves_as_kept(&kept);
    server.ok(
        2,
        "notes_write",
        json!({"address": "@project/delta.md", "content": "# Delta\nlater"}),
        "toolu_two",
    );
    server.finish();
    // Its JSON line names the notes (the folders' file ids follow it).
    let index =
        String::from_utf8_lossy(&std::fs::read(sb.kept_file("boot-shelves")).unwrap()).into_owned();
    assert!(
        index.contains("gamma.md") && !index.contains("delta.md"),
        "{index}"
    );
}
