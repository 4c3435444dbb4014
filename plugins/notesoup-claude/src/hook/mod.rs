//! `notesoup hook <event>`: Claude Code hook handlers.

pub mod io;
