//! The credential guard runs on every note write, over the whole note as it
//! will be written: a typical note, the largest note the store accepts, and
//! hostile single lines built to make a scanner backtrack or rescan.
//!
//! Run with `cargo bench -p notesoup-core --bench secrets`.

use std::sync::OnceLock;

use notesoup_core::notes::{NoteStore, find_secret};

/// Ordinary note text: prose, a code block, hashes, ids and URLs, the
/// look-alikes the guard must read past without refusing.
const PARAGRAPH: &str = "# Checkout service\n\n\
The cart total is computed server-side since commit 9fceb02d0ae598e95dc970b74767f19372d61af8; \
the session id 0197a1b2-3c4d-7e8f-9a0b-1c2d3e4f5a6b lives in the cookie.\n\
- password policy: 12 characters and a digit (see https://wiki.example.org/security/passwords)\n\
- token_url: https://auth.example.com/oauth/token\n\
- colours: #1f2937 #f59e0b, integrity sha512-Q2sYkV9fT3mXz5wJ8rB0nL4pC7dA1eH6gK2iM9oR3uS5vY8xZ0aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1wX2yZ3A==\n\
```rust\nlet store = NoteStore::new(identity).with_secret_guard(settings.secret_guard);\n\
let key = std::env::var(\"OPENAI_API_KEY\")?;\n```\n\
The deploy key is in 1Password under 'shop/deploy'; rotate it every 90 days.\n\n";

fn repeat_to(unit: &str, bytes: usize) -> String {
    unit.repeat(bytes / unit.len() + 1)
}

fn typical() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| repeat_to(PARAGRAPH, 4_000))
}

fn largest() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| {
        let mut text = repeat_to(PARAGRAPH, NoteStore::MAX_NOTE_BYTES - PARAGRAPH.len());
        // The paragraph is ASCII, so any byte is a character boundary.
        text.truncate(NoteStore::MAX_NOTE_BYTES - 1);
        text
    })
}

/// One 1 MB line of a repeated unit: every position is a candidate start.
fn hostile(unit: &str) -> String {
    let mut text = repeat_to(unit, NoteStore::MAX_NOTE_BYTES - unit.len());
    text.truncate(NoteStore::MAX_NOTE_BYTES - unit.len());
    text
}

#[divan::bench]
fn typical_note_4kb() -> bool {
    find_secret(divan::black_box(typical())).is_some()
}

#[divan::bench(sample_count = 20)]
fn largest_note_1mb() -> bool {
    find_secret(divan::black_box(largest())).is_some()
}

#[divan::bench(sample_count = 20, args = ["password=", "a:", "-----BEGIN ", "eyJ.", "eyJa-", "sk-", "ya29.", "pypi-AgEIcHlwaS5vcmc-", "x://a:b", "AKIA"])]
fn hostile_line_1mb(bencher: divan::Bencher<'_, '_>, unit: &str) {
    let text = hostile(unit);
    bencher.bench(|| find_secret(divan::black_box(&text)).is_some());
}

fn main() {
    divan::main();
}
