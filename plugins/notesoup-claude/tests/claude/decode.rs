//! Transcript decoding into core's history model, on transcripts recorded
//! from Claude Code 2.1.332.

use notesoup_claude::transcript::decode::{ChainFile, decode_chain};
use notesoup_core::history::History;

use crate::support::fixture;

fn chain() -> Vec<ChainFile> {
    vec![
        ChainFile {
            session_id: "2c88be00-64c2-49db-aa00-cdfa8f4d4619".into(),
            path: fixture("compact-then-clear.jsonl"),
        },
        ChainFile {
            session_id: "879e5b81-3142-4963-b711-b989adef8479".into(),
            path: fixture("after-clear.jsonl"),
        },
    ]
}

#[test]
fn dump() {
    let transcript = decode_chain("2c88be00-64c2-49db-aa00-cdfa8f4d4619", &chain()).unwrap();
    println!("{transcript:#?}");
    let history = History::new(transcript).unwrap();
    for e in history.events() {
        println!(
            "{} w{} {:?} {:?}",
            e.seq,
            e.window,
            e.role,
            &e.document.chars().take(80).collect::<String>()
        );
    }
    panic!();
}
