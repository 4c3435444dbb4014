//! Claude Code transcripts (`~/.claude/projects/<slug>/<session>.jsonl`).

pub mod row;
pub mod scan;
pub mod tail;
