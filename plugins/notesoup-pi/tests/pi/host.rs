//! The host boundary types speak Pi's JSON, and `PiHost`'s read-only session
//! access equals Pi's on a real session file.

use std::path::{Path, PathBuf};

use notesoup_pi::host::{
    BoundaryResult, BoundaryState, ContextUsage, CustomMessageDraft, HeldEntries, HostError,
    HostSettings, InputResult, ModelInfo, NotifyLevel, PiApiLevel, PiExtension, PiHost,
    SendOptions, SessionBoundaryDraft, ToolInvocation, TurnEndEvent,
};
use notesoup_pi::json::to_js_string;
use notesoup_pi::projection::Projection;
use notesoup_pi::session::{Content, ContextReplacement, Entry, Extra, SessionFile, SessionHeader};
use serde_json::{Value, json};

fn check_json<T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(
    value: T,
    expect: &str,
) {
    assert_eq!(to_js_string(&value).unwrap(), expect);
    assert_eq!(
        serde_json::from_str::<T>(expect).unwrap(),
        value,
        "round trip"
    );
}

#[test]
fn boundary_drafts_use_pi_shapes() {
    check_json(
        SessionBoundaryDraft::retain_none_checkpoint(),
        r#"{"type":"compaction","summary":"","firstKeptEntryId":null}"#,
    );
    check_json(
        SessionBoundaryDraft::Custom {
            custom_type: "notesoup/reset-marker".into(),
            data: Some(json!({"windowId": "w", "origin": "normal"})),
        },
        r#"{"type":"custom","customType":"notesoup/reset-marker","data":{"windowId":"w","origin":"normal"}}"#,
    );
    check_json(
        SessionBoundaryDraft::CustomMessage {
            custom_type: "notesoup/boot".into(),
            content: Content::Text("boot".into()),
            display: false,
            details: Some(json!({"windowId": "w"})),
        },
        r#"{"type":"custom_message","customType":"notesoup/boot","content":"boot","display":false,"details":{"windowId":"w"}}"#,
    );
    check_json(
        SessionBoundaryDraft::ContextEdit {
            target_id: "e1".into(),
            replacement: None,
        },
        r#"{"type":"context_edit","targetId":"e1","replacement":null}"#,
    );
    check_json(
        SessionBoundaryDraft::ContextEdit {
            target_id: "e1".into(),
            replacement: Some(ContextReplacement {
                content: Content::Text("x".into()),
                extra: Extra::new(),
            }),
        },
        r#"{"type":"context_edit","targetId":"e1","replacement":{"content":"x"}}"#,
    );
    check_json(
        BoundaryResult {
            entries: Some(vec![]),
            continue_run: Some(true),
        },
        r#"{"entries":[],"continue":true}"#,
    );
    check_json(BoundaryResult::keep(), "{}");
    check_json(InputResult::Continue, r#"{"action":"continue"}"#);
    check_json(
        InputResult::Transform {
            text: "t".into(),
            images: None,
        },
        r#"{"action":"transform","text":"t"}"#,
    );
}

#[test]
fn turn_end_reads_old_and_new_payloads() {
    let message = json!({"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1});
    let old: TurnEndEvent =
        serde_json::from_value(json!({"turnIndex": 0, "message": message, "toolResults": []}))
            .unwrap();
    assert!(old.boundary.is_none(), "v0.58 has no boundary state");
    let new: TurnEndEvent = serde_json::from_value(json!({
        "turnIndex": 1, "message": message, "toolResults": [], "messageEntryId": "e9", "toolResultEntryIds": [],
        "entries": [{"type": "custom", "customType": "x"}], "continue": false, "outcome": "completed",
        "context": {"contextEntries": [], "contextMessages": [], "llmMessages": [], "pendingMessages": [], "canContinue": true}
    }))
    .unwrap();
    let state: &BoundaryState = new.boundary.as_ref().unwrap();
    assert_eq!(state.entries.len(), 1);
    assert!(state.context.can_continue);
    assert_eq!(new.message_entry_id.as_deref(), Some("e9"));
}

#[test]
fn api_levels_gate_the_boundary() {
    assert_eq!(PiApiLevel::from_version("1.6.0"), Some(PiApiLevel::V0_87));
    assert!(!PiApiLevel::V0_58.has_context_with_system());
}

/// A read-only host over a session file: enough to check the defaults.
struct FileHost {
    file: SessionFile,
    leaf: Option<String>,
    path: PathBuf,
    notices: Vec<(String, NotifyLevel)>,
}

impl PiHost for FileHost {
    fn api_level(&self) -> PiApiLevel {
        PiApiLevel::V0_87
    }
    fn pi_version(&self) -> &str {
        "1.6.0"
    }
    fn append_entry(
        &mut self,
        _custom_type: &str,
        _data: Option<Value>,
    ) -> Result<String, HostError> {
        Err(HostError::Rejected {
            message: "read-only".into(),
        })
    }
    fn send_message(
        &mut self,
        _message: CustomMessageDraft,
        _options: SendOptions,
    ) -> Result<(), HostError> {
        Err(HostError::Rejected {
            message: "read-only".into(),
        })
    }
    fn notify(&mut self, message: &str, level: NotifyLevel) {
        self.notices.push((message.to_owned(), level));
    }
    fn abort(&mut self) {}
    fn is_idle(&self) -> bool {
        true
    }
    fn signal_aborted(&self) -> bool {
        false
    }
    fn has_pending_messages(&self) -> bool {
        false
    }
    fn context_usage(&self) -> Option<ContextUsage> {
        None
    }
    fn model(&self) -> Option<ModelInfo> {
        None
    }
    fn settings(&self) -> Result<HostSettings, HostError> {
        Ok(HostSettings::default())
    }
    fn is_project_trusted(&self) -> bool {
        false
    }
    fn session_id(&self) -> &str {
        &self.file.header().unwrap().id
    }
    fn header(&self) -> Option<&SessionHeader> {
        self.file.header()
    }
    fn cwd(&self) -> &Path {
        Path::new("/work/project")
    }
    fn session_file(&self) -> Option<&Path> {
        Some(&self.path)
    }
    fn entries(&self) -> Vec<&Entry> {
        self.held().all()
    }
    fn leaf_id(&self) -> Option<&str> {
        self.leaf.as_deref()
    }
    fn entry(&self, id: &str) -> Option<&Entry> {
        self.held().entry(id)
    }
    fn branch(&self, from: Option<&str>) -> Vec<&Entry> {
        self.held().branch(from)
    }
    fn build_projection(&self) -> Projection<'_> {
        self.held().projection()
    }
}

impl FileHost {
    fn held(&self) -> HeldEntries<'_> {
        HeldEntries {
            entries: self.file.entries(),
            leaf: self.leaf.as_deref(),
        }
    }
}

struct Silent;
impl PiExtension for Silent {}

#[test]
fn host_defaults_read_the_session_like_pi() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/branches.jsonl");
    let file = SessionFile::read(&path).unwrap();
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(path.with_file_name("branches.expected.json")).unwrap(),
    )
    .unwrap();
    let leaf = expected["fileLeafId"].as_str().map(str::to_owned);
    let mut host = FileHost {
        file,
        leaf,
        path,
        notices: Vec::new(),
    };
    let dumped = &expected["leaves"][0];
    let branch: Vec<&str> = host.branch(None).iter().map(|e| e.id()).collect();
    let expect_branch: Vec<&str> = dumped["branch"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(branch, expect_branch);
    let projection = host.build_projection();
    assert_eq!(
        to_js_string(&projection.messages).unwrap(),
        to_js_string(&dumped["projection"]["messages"]).unwrap()
    );
    assert!(host.entry("no-such-id").is_none());
    assert_eq!(
        host.entry(expect_branch[0]).map(Entry::id),
        Some(expect_branch[0])
    );

    // The neutral extension changes nothing and refuses unknown tools.
    let mut extension = Silent;
    let result = extension.execute_tool(
        &mut host,
        &ToolInvocation {
            tool_call_id: "c".into(),
            name: "nope".into(),
            params: json!({}),
        },
    );
    assert_eq!(result.is_error, Some(true));
    assert!(extension.context(&mut host).is_empty());
    // An extension that does not say otherwise gets every event, on-demand
    // ones included.
    for event in notesoup_pi::bridge::FORWARDED_EVENTS {
        assert!(extension.needs(event), "{event}");
    }
    // And every turn's end, whatever its tokens.
    assert_eq!(extension.turn_end_at(), None);
    assert!(
        host.append_entry("x", None)
            .is_err_and(|err| err.code() == "host_rejected")
    );
    host.notify("hello", NotifyLevel::Info);
    assert_eq!(host.notices.len(), 1);
}
