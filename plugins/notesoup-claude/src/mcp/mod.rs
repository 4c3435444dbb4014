//! `notesoup mcp`: the stdio MCP server.

pub mod caller;
pub mod protocol;
pub mod tools;
