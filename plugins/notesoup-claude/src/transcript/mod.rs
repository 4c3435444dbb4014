//! Claude Code transcripts (`~/.claude/projects/<slug>/<session>.jsonl`).

pub mod decode;
pub mod fnv;
pub mod incremental;
mod relink;
pub mod row;
pub mod scan;
pub mod tail;
