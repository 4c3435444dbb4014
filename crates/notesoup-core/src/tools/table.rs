//! The one tool surface: every tool notesoup offers, as its families
//! register them, and the one router. Hosts list [`tools_for`] and hand
//! every call to [`call_tool`] (or [`call_offered_tool`]); they keep no
//! tool names, no argument peeking and no unknown-tool error of their own.

use std::sync::OnceLock;

use serde_json::Value;

use super::definition::{HostWording, Tool, ToolFamily};
use super::{Refusal, RefusalCode, ToolContext, ToolOutput, budget, history, notes};
use crate::wire::ToolBindings;

/// Each tool by name, for a host or command that names one (`Tool::NOTES_WRITE.name`).
impl Tool {
    /// `notes_write`.
    pub const NOTES_WRITE: Tool = notes::NOTES_WRITE;
    /// `notes_update`.
    pub const NOTES_UPDATE: Tool = notes::NOTES_UPDATE;
    /// `notes_read`.
    pub const NOTES_READ: Tool = notes::NOTES_READ;
    /// `notes_list`.
    pub const NOTES_LIST: Tool = notes::NOTES_LIST;
    /// `notes_search`.
    pub const NOTES_SEARCH: Tool = notes::NOTES_SEARCH;
    /// `history_windows`.
    pub const HISTORY_WINDOWS: Tool = history::HISTORY_WINDOWS;
    /// `history_list`.
    pub const HISTORY_LIST: Tool = history::HISTORY_LIST;
    /// `history_search`.
    pub const HISTORY_SEARCH: Tool = history::HISTORY_SEARCH;
    /// `history_read`.
    pub const HISTORY_READ: Tool = history::HISTORY_READ;
    /// `get_context_remaining`.
    pub const GET_CONTEXT_REMAINING: Tool = budget::GET_CONTEXT_REMAINING;
    /// `wipe_memory`.
    pub const WIPE_MEMORY: Tool = budget::WIPE_MEMORY;
}

/// Every family's list, in the order hosts list the tools: the notes tools,
/// the history tools, then the budget tools. A tool is registered in its
/// family's list, next to its `mod` line.
const FAMILIES: [&[&Tool]; 3] = [notes::TOOLS, history::TOOLS, budget::TOOLS];

/// Every tool, in the order hosts list them.
pub(crate) fn tool_definitions() -> impl Iterator<Item = &'static Tool> {
    FAMILIES.into_iter().flatten().copied()
}

/// One tool as every host registers it: its [`Tool`] with the description
/// and schemas rendered ([`HostWording::DEFAULT`]).
#[derive(Debug, Clone)]
pub struct ListedTool {
    /// The name the model calls.
    pub name: &'static str,
    /// The model-facing description.
    pub description: String,
    /// JSON Schema of the parameters.
    pub input_schema: Value,
    /// JSON Schema of a successful result's structured content (`None` for
    /// the budget tools, which answer with plain JSON text).
    pub output_schema: Option<Value>,
    /// The tool changes nothing (hosts may mark it read-only).
    pub read_only: bool,
    /// Calls must run one at a time, in order (the writing tools).
    pub sequential: bool,
    /// What it needs from its host.
    pub family: ToolFamily,
    tool: &'static Tool,
}

impl ListedTool {
    fn new(tool: &'static Tool) -> Self {
        Self {
            name: tool.name,
            description: tool.describe(&HostWording::DEFAULT),
            input_schema: (tool.parameters)(),
            output_schema: tool.result.map(|schema| schema()),
            read_only: tool.read_only,
            sequential: tool.sequential,
            family: tool.family,
            tool,
        }
    }

    /// The description in a host's own `wording`.
    pub fn describe(&self, wording: &HostWording<'_>) -> String {
        self.tool.describe(wording)
    }
}

/// Every tool in the order hosts list them, rendered. Built once per
/// process (the schemas are generated), then shared; routing a call never
/// builds it.
pub fn tool_table() -> &'static [ListedTool] {
    static TABLE: OnceLock<Vec<ListedTool>> = OnceLock::new();
    TABLE.get_or_init(|| tool_definitions().map(ListedTool::new).collect())
}

/// The tools a host offers: every tool, or without the budget family on a
/// host that keeps no budget.
pub fn tools_for(with_budget: bool) -> impl Iterator<Item = &'static ListedTool> {
    tool_table()
        .iter()
        .filter(move |tool| offered(tool.family, with_budget))
}

fn offered(family: ToolFamily, with_budget: bool) -> bool {
    with_budget || family != ToolFamily::Budget
}

/// Runs the tool `name` with `arguments` over `context`. An unknown name,
/// bad arguments, or a budget tool on a host without a budget are
/// refusals.
pub fn call_tool(context: &mut dyn ToolContext, name: &str, arguments: Value) -> ToolOutput {
    call_offered_tool(context, name, arguments, true).unwrap_or_else(|| {
        ToolOutput::refusal(&Refusal::new(
            RefusalCode::UnknownTool,
            format!("unknown tool {:?}", clip(name, 64)),
        ))
    })
}

/// Runs the tool `name` if it is one that [`tools_for`]`(with_budget)`
/// lists; `None` when it is not, for a host whose protocol answers an
/// unlisted name itself (MCP's invalid-params error).
pub(crate) fn call_offered_tool(
    context: &mut dyn ToolContext,
    name: &str,
    arguments: Value,
    with_budget: bool,
) -> Option<ToolOutput> {
    let tool = Tool::find(name).filter(|tool| offered(tool.family, with_budget))?;
    Some((tool.run)(context, arguments))
}

/// At most `max` characters of a name the caller sent, marked when cut.
fn clip(name: &str, max: usize) -> String {
    match name.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &name[..end]),
        None => name.to_owned(),
    }
}

impl ToolBindings {
    /// The plain tool names, as Pi and dsh register them.
    pub fn plain() -> Self {
        Self::named(str::to_owned)
    }

    /// The bindings of every tool, each name (or family glob) as the host's
    /// model calls it: `name` maps the plain one (Claude Code adds its MCP
    /// prefix).
    pub fn named(name: impl Fn(&str) -> String) -> Self {
        let family = |family: ToolFamily| name(family.glob().unwrap_or_default());
        Self {
            notes: family(ToolFamily::Notes),
            notes_list: name(notes::NOTES_LIST.name),
            history: family(ToolFamily::History),
            history_windows: name(history::HISTORY_WINDOWS.name),
            history_list: name(history::HISTORY_LIST.name),
            history_search: name(history::HISTORY_SEARCH.name),
            history_read: name(history::HISTORY_READ.name),
            remaining: name(budget::GET_CONTEXT_REMAINING.name),
            wipe: name(budget::WIPE_MEMORY.name),
        }
    }
}

impl Tool {
    /// The tool called `name`, if notesoup offers one.
    pub fn find(name: &str) -> Option<&'static Tool> {
        tool_definitions().find(|tool| tool.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_tool_matches_its_glob() {
        for tool in tool_definitions() {
            if let Some(glob) = tool.family.glob() {
                let prefix = glob.trim_end_matches('*');
                assert!(tool.name.starts_with(prefix), "{}", tool.name);
            }
        }
        let names: Vec<&str> = tool_definitions().map(|tool| tool.name).collect();
        for (index, name) in names.iter().enumerate() {
            assert!(!names[index + 1..].contains(name), "{name} twice");
        }
    }
}
