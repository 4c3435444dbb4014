//! What one tool is: the constant every tool's file declares ([`Tool`]),
//! and the words a host may put into its description ([`HostWording`]).
//! Everything hosts register (the table, the JSON Schemas, the generated
//! files, the boot's tool names) is derived from these constants.

use schemars::JsonSchema;
use serde_json::Value;

use super::ToolOutput;
use super::context::ToolContext;
use super::schema::schema_of;

/// Which family a tool belongs to: what it needs from its host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolFamily {
    /// The notes tools, over the caller's [`crate::notes::NoteStore`].
    Notes,
    /// The history tools, over the calling session's decoded
    /// [`crate::history::History`].
    History,
    /// `get_context_remaining` and `wipe_memory`, over a
    /// [`super::BudgetHost`].
    Budget,
}

impl ToolFamily {
    /// The family's tools as one glob over their names (`notes_*`), as the
    /// boot speaks of them; `None` for the budget tools, which it names one
    /// by one.
    pub fn glob(self) -> Option<&'static str> {
        match self {
            Self::Notes => Some("notes_*"),
            Self::History => Some("history_*"),
            Self::Budget => None,
        }
    }
}

/// The slot in a description where the shared sentence on note addresses
/// goes ([`ADDRESSES_SENTENCE`]).
const ADDRESSES_SLOT: &str = "{addresses}";
/// The slot in a description where the host names its memory skill
/// ([`HostWording::memory_skill`]).
const MEMORY_SKILL_SLOT: &str = "{memory_skill}";

/// The sentence every notes tool description ends with, through its
/// `{addresses}` slot; it names the memory skill through the
/// `{memory_skill}` slot.
pub(crate) const ADDRESSES_SENTENCE: &str = "Addresses: `<path>` with no @ for this session; @project/, @human/, @self/, @model/ for durable homes (see {memory_skill}). Never pass them to filesystem tools.";

/// A host's own words in the tool descriptions. The table, the schemas and
/// the generated files carry [`HostWording::DEFAULT`]; a host that names
/// things otherwise renders its descriptions with [`Tool::describe`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostWording<'a> {
    /// How the model reaches the memory skill.
    pub memory_skill: &'a str,
}

impl HostWording<'static> {
    /// Pi's words, which dsh shares: the skill as `/skill:memory`.
    pub const DEFAULT: Self = Self {
        memory_skill: "/skill:memory",
    };
}

/// How a tool runs: its arguments as the host received them, over the
/// host's [`ToolContext`].
pub(crate) type RunTool = fn(&mut dyn ToolContext, Value) -> ToolOutput;

/// One tool, declared once as a constant in its own file under `tools/`
/// and registered in its family's list.
#[derive(Debug, Clone, Copy)]
pub struct Tool {
    /// The name the model calls.
    pub name: &'static str,
    /// What it needs from its host.
    pub family: ToolFamily,
    /// The model-facing description, with slots (`{addresses}`,
    /// `{memory_skill}`) that [`Tool::describe`] fills.
    pub description: &'static str,
    /// The tool changes nothing (hosts may mark it read-only).
    pub read_only: bool,
    /// Calls must run one at a time, in order (the writing tools).
    pub sequential: bool,
    /// Generates the JSON Schema of the parameters.
    pub(crate) parameters: fn() -> Value,
    /// Generates the JSON Schema of a successful result's structured
    /// content (`None` for the budget tools, which answer with plain JSON
    /// text).
    pub(crate) result: Option<fn() -> Value>,
    /// The handler.
    pub(crate) run: RunTool,
}

impl Tool {
    /// A tool that reads: parameters `P`, a structured result `R`, calls
    /// run side by side. Each tool's file states only what is its own.
    pub(crate) const fn reading<P: JsonSchema, R: JsonSchema>(
        name: &'static str,
        family: ToolFamily,
        description: &'static str,
        run: RunTool,
    ) -> Self {
        Self {
            name,
            family,
            description,
            read_only: true,
            sequential: false,
            parameters: schema_of::<P>,
            result: Some(schema_of::<R>),
            run,
        }
    }

    /// A budget tool: no parameters, a plain JSON answer, reading.
    pub(crate) const fn budget(
        name: &'static str,
        description: &'static str,
        parameters: fn() -> Value,
        run: RunTool,
    ) -> Self {
        Self {
            name,
            family: ToolFamily::Budget,
            description,
            read_only: true,
            sequential: false,
            parameters,
            result: None,
            run,
        }
    }

    /// The same tool as one that changes things: not read-only, and its
    /// calls run one at a time, in order.
    pub(crate) const fn writing(self) -> Self {
        Self {
            read_only: false,
            sequential: true,
            ..self
        }
    }

    /// The description in `wording`.
    pub fn describe(&self, wording: &HostWording<'_>) -> String {
        self.description
            .replace(ADDRESSES_SLOT, ADDRESSES_SENTENCE)
            .replace(MEMORY_SKILL_SLOT, wording.memory_skill)
    }
}
