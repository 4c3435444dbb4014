//! `notesoup mcp`: the stdio MCP server.

pub mod protocol;
