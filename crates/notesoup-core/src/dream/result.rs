//! What a dreamer session returns: its report, the writes it recorded and
//! its error. Below the run, which asks a host's dreamer for it, and the
//! report, which renders it.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::surface;
use crate::notes::find_secret;

/// A tool that changes the home.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DreamTool {
    /// The jailed `write` tool.
    Write,
    /// The jailed `edit` tool.
    Edit,
    /// The `delete` tool (the wastebasket rule).
    Delete,
}

impl DreamTool {
    /// The tool's name: `write`, `edit` or `delete`.
    pub fn as_str(self) -> &'static str {
        match self {
            DreamTool::Write => surface::WRITE.name,
            DreamTool::Edit => surface::EDIT.name,
            DreamTool::Delete => surface::DELETE.name,
        }
    }

    /// The tool named `name`, if it is one that changes the home.
    pub fn from_name(name: &str) -> Option<DreamTool> {
        [DreamTool::Write, DreamTool::Edit, DreamTool::Delete]
            .into_iter()
            .find(|tool| tool.as_str() == name)
    }
}

impl fmt::Display for DreamTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One recorded write: every write, edit or delete tool event whose
/// arguments include a `path`, whether or not it succeeded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DreamWrite {
    /// Which tool.
    pub tool: DreamTool,
    /// The `path` argument as given.
    pub path: String,
}

impl DreamWrite {
    /// The write a dreamer's tool event records: one for every event named
    /// `write`, `edit` or `delete` whose arguments include a string `path`,
    /// whether or not the tool succeeded. A path holding a credential (a
    /// refused write) is withheld: the report is committed to the audit
    /// repository.
    pub fn from_tool_event(tool_name: &str, arguments: &serde_json::Value) -> Option<DreamWrite> {
        let tool = DreamTool::from_name(tool_name)?;
        let path = arguments.get("path")?.as_str()?;
        let path = match find_secret(path) {
            Some(found) => format!("(a path holding a credential ({}), withheld)", found.kind),
            None => path.to_owned(),
        };
        Some(DreamWrite { tool, path })
    }
}

/// What a dreamer session returns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DreamResult {
    /// The assistant's final message text.
    pub report: String,
    /// The recorded writes, in order.
    pub writes: Vec<DreamWrite>,
    /// Set when the run failed, e.g. `dreamer failed: <provider message>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl DreamResult {
    /// A failed run with no report and no writes (e.g. the session could not
    /// be created).
    pub fn failed(error: impl Into<String>) -> Self {
        DreamResult {
            error: Some(error.into()),
            ..DreamResult::default()
        }
    }
}
