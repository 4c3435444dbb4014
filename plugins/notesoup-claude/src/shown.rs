//! How an answer repeats a piece of what it was given (a method, a tool
//! name, a protocol version, a path): at most [`SHOWN_CHARS`] characters,
//! so a megabyte of input costs a short reply.

/// The longest piece of an input an answer repeats, in chars.
pub const SHOWN_CHARS: usize = 120;

/// `text` as an answer repeats it: whole up to [`SHOWN_CHARS`] chars, else
/// cut there and marked with its length in bytes.
pub fn shown(text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((at, _)) => format!("{}… ({} bytes)", &text[..at], text.len()),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_at_a_char_and_says_its_length() {
        assert_eq!(shown("short"), "short");
        let long = "é".repeat(SHOWN_CHARS + 1);
        assert_eq!(
            shown(&long),
            format!("{}… ({} bytes)", "é".repeat(SHOWN_CHARS), long.len())
        );
    }
}
