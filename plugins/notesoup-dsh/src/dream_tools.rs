//! The dreamer's tools on dsh: core's jailed write, edit and wastebasket-rule
//! delete, and its read-only read, ls, find and grep, served as JSON lines
//! by `notesoup-dsh dream-tools --notes-home HOME` to the bundle's
//! `notesoup/dsh/dream` row inside the headless dsh `dream` starts.
//!
//! The protocol is core's: [`notesoup_core::dream::serve_dream_tools`].

use notesoup_core::dream::dream_tool_table;

use crate::tools::ToolManifest;

/// The dream tools as the bundle registers them: core's table.
pub fn manifest() -> Vec<ToolManifest> {
    dream_tool_table()
        .into_iter()
        .map(|tool| ToolManifest {
            name: tool.name.to_owned(),
            description: tool.description.to_owned(),
            parameters: tool.input_schema,
            sequential: tool.sequential,
        })
        .collect()
}

/// Serves dream-tool requests until the input ends: core's JSON-lines
/// protocol ([`notesoup_core::dream::serve_dream_tools`]).
pub use notesoup_core::dream::serve_dream_tools as serve;

#[cfg(test)]
mod tests {
    use super::*;
    use notesoup_core::dream::DreamTools;
    use serde_json::Value;

    #[test]
    fn the_manifest_names_every_tool_once_and_writes_go_alone() {
        let names: Vec<String> = manifest().into_iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            ["read", "grep", "find", "ls", "write", "edit", "delete"]
        );
        for tool in manifest() {
            let writes = ["write", "edit", "delete"].contains(&tool.name.as_str());
            assert_eq!(tool.sequential, writes, "{}", tool.name);
        }
    }

    #[test]
    fn lines_are_answered_in_order_and_the_jail_refuses() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("notes");
        std::fs::create_dir_all(home.join("human")).expect("mkdir");
        let tools = DreamTools::new(&home);
        let input = [
            r#"{"id":1,"op":"dream.tool","params":{"name":"write","arguments":{"path":"human/a.md","content":"hi"}}}"#,
            r#"{"id":2,"op":"dream.tool","params":{"name":"write","arguments":{"path":"../escape.md","content":"x"}}}"#,
            r#"{"id":3,"op":"dream.tool","params":{"name":"bash","arguments":{}}}"#,
            "not json",
            r#"{"id":5,"op":"dream.tool","params":{"name":"ls"}}"#,
        ]
        .join("\n");
        let mut out = Vec::new();
        serve(&tools, input.as_bytes(), &mut out).expect("serve");
        let answers: Vec<Value> = String::from_utf8(out)
            .expect("utf-8")
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect();
        assert_eq!(answers.len(), 5);
        assert_eq!(answers[0]["result"]["is_error"], false);
        assert_eq!(answers[1]["result"]["is_error"], true, "{}", answers[1]);
        assert!(!dir.path().join("escape.md").exists());
        assert_eq!(answers[2]["error"]["code"], "bad_request");
        assert_eq!(answers[3]["id"], 0);
        assert_eq!(answers[4]["result"]["text"], "human/");
    }
}
