//! `notesoup mcp`: the stdio MCP server.

pub mod caller;
pub mod dream_tools;
pub mod protocol;
pub mod sdk;
pub mod tools;
