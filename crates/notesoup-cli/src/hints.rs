//! A tool's continuation hints in this command line's words: the MCP and
//! sidecar tools keep core's wording (`offset_chars=N`, `{"before":N}`),
//! which a person types as flags.

use serde_json::Value;

/// The tools' continuation hints as the flags to type: `offset_chars=N`
/// becomes `--offset N`, `→ older: {"before":N}` becomes `→ older: --before
/// N`, an expand hint its `history list` flags, "narrow with pattern"
/// becomes "narrow with --pattern". The MCP tools keep their own wording.
pub(crate) fn cli_hints(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (index, line) in text.split('\n').enumerate() {
        if index > 0 {
            out.push('\n');
        }
        out.push_str(&cli_hint_line(line));
    }
    out
}

fn cli_hint_line(line: &str) -> String {
    let mut line = line.replace("narrow with pattern", "narrow with --pattern");
    if let Some(at) = line.find("Use offset_chars=") {
        let rest = &line[at + "Use offset_chars=".len()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if !digits.is_empty() {
            let after = &rest[digits.len()..];
            line = format!("{}Use --offset {digits}{after}", &line[..at]);
        }
    }
    for (arrow, key, flag) in [
        ("→ older: ", "before", "--before"),
        ("→ newer: ", "after", "--after"),
    ] {
        if let Some(at) = line.find(arrow) {
            let json = &line[at + arrow.len()..];
            if let Ok(Value::Object(hint)) = serde_json::from_str::<Value>(json)
                && let Some(seq) = hint.get(key).and_then(Value::as_u64)
            {
                line = format!("{}{arrow}{flag} {seq}", &line[..at]);
            }
        }
    }
    let arrow = "→ expand: ";
    if let Some(at) = line.find(arrow)
        && let Ok(Value::Object(hint)) = serde_json::from_str::<Value>(&line[at + arrow.len()..])
    {
        let mut flags = Vec::new();
        for key in ["after", "before"] {
            if let Some(seq) = hint.get(key).and_then(Value::as_u64) {
                flags.push(format!("--{key} {seq}"));
            }
        }
        if let Some(Value::Array(roles)) = hint.get("roles") {
            let roles: Vec<&str> = roles.iter().filter_map(Value::as_str).collect();
            flags.push(format!("--role {}", roles.join(",")));
        }
        line = format!("{}{arrow}history list {}", &line[..at], flags.join(" "));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::cli_hints;

    #[test]
    fn continuation_hints_read_as_flags() {
        assert_eq!(
            cli_hints("body\n\n[1200 more characters. Use offset_chars=12000 to continue.]"),
            "body\n\n[1200 more characters. Use --offset 12000 to continue.]"
        );
        assert_eq!(
            cli_hints("→ older: {\"before\":16}"),
            "→ older: --before 16"
        );
        assert_eq!(cli_hints("→ newer: {\"after\":40}"), "→ newer: --after 40");
        assert_eq!(
            cli_hints("\t→ expand: {\"after\":3,\"before\":9,\"roles\":[\"tool\",\"context\"]}"),
            "\t→ expand: history list --after 3 --before 9 --role tool,context"
        );
        assert_eq!(
            cli_hints("2 more matching notes omitted; narrow with pattern"),
            "2 more matching notes omitted; narrow with --pattern"
        );
        assert_eq!(cli_hints("→ older: not json"), "→ older: not json");
    }
}
