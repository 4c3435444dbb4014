//! A tool's words in this command line's words. The MCP and sidecar tools
//! speak to the agent in their parameters' names (`offset_chars=N`, `pass
//! replace_all`, `{"before":N}`, edits counted from 0); a person types
//! flags, and counts the `--old`/`--new` pairs from 1.
//!
//! Only the tool's own lines are rewritten: a refusal's message, and in a
//! result the hint lines whole (a footer, a continuation, a neighbourhood),
//! never a line of a note or an event, so text the agent or a person wrote
//! is printed as it is.

use notesoup_core::tools::ToolOutput;
use serde_json::{Map, Value};

/// The text a command prints for `output`: a refusal as `error: <code>:
/// <message>` in the command line's words, a result with its hint lines as
/// the flags to type.
pub(crate) fn cli_text(output: &ToolOutput) -> String {
    if output.is_error {
        refusal_text(output)
    } else {
        cli_hints(&output.text)
    }
}

/// A refusal from its wire form `{error, code, details?}`: the message in
/// this command line's words, and only the details it does not already say
/// (the edit's index and the line numbers are in the message).
fn refusal_text(output: &ToolOutput) -> String {
    let Ok(Value::Object(wire)) = serde_json::from_str::<Value>(output.json.as_str()) else {
        return cli_words(&output.text);
    };
    let (Some(message), Some(code)) = (
        wire.get("error").and_then(Value::as_str),
        wire.get("code").and_then(Value::as_str),
    ) else {
        return cli_words(&output.text);
    };
    let mut text = format!("error: {code}: {}", cli_words(message));
    if let Some(Value::Object(details)) = wire.get("details") {
        let rest: Map<String, Value> = details
            .iter()
            .filter(|(key, _)| {
                !matches!(
                    key.as_str(),
                    "edit_index" | "line_numbers" | "line_numbers_total"
                )
            })
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        if !rest.is_empty() {
            text.push(' ');
            text.push_str(&Value::Object(rest).to_string());
        }
    }
    text
}

/// A tool's message in this command line's words: its parameters as the
/// flags that set them, and the edits counted from 1 as the `--old`/`--new`
/// pairs are.
pub(crate) fn cli_words(message: &str) -> String {
    let mut text = renumber_edits(message);
    for (tool, flag) in [
        ("pass replace_all", "pass --all"),
        ("pass wastebasket", "pass --wastebasket"),
        ("rename_to resolves to", "the new address resolves to"),
        ("rename_to target", "the new address"),
        ("max_matches_per_file", "--max-matches-per-file"),
        ("offset_chars", "--offset"),
        ("limit_chars", "--limit"),
        ("oldText", "--old"),
        ("newText", "--new"),
    ] {
        text = text.replace(tool, flag);
    }
    text
}

/// `edit N` (counted from 0) as `edit N+1`.
fn renumber_edits(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find("edit ") {
        let after = &rest[at + "edit ".len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let word_start = at == 0 || !rest.as_bytes()[at - 1].is_ascii_alphanumeric();
        out.push_str(&rest[..at + "edit ".len()]);
        match after[..digits].parse::<u64>() {
            Ok(index) if word_start => out.push_str(&(index + 1).to_string()),
            _ => out.push_str(&after[..digits]),
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

/// A result's hint lines as the flags to type: `Use offset_chars=N` (the
/// last line) becomes `Use --offset N`, a search match's `line L at
/// offset_chars N:` `line L (--offset N):`, `→ older: {"before":N}` becomes `→
/// older: --before N`, an expand or neighbourhood hint its `history list`
/// flags, "narrow with pattern" "narrow with --pattern", "pass wastebasket"
/// "pass --wastebasket".
pub(crate) fn cli_hints(text: &str) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let last = lines.len() - 1;
    let mut out = String::with_capacity(text.len());
    for (index, line) in lines.iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        match hint_line(line, index == last) {
            Some(hint) => out.push_str(&hint),
            None => out.push_str(line),
        }
    }
    out
}

/// `line` in flags, when it is one of the tools' hint lines.
fn hint_line(line: &str, last: bool) -> Option<String> {
    // A search match: `  line N at offset_chars M: <the note's line>`.
    if let Some(rest) = line.strip_prefix("  line ")
        && let Some((line_number, rest)) = rest.split_once(" at offset_chars ")
        && let Some((offset, text)) = rest.split_once(": ")
        && is_number(line_number)
        && is_number(offset)
    {
        return Some(format!("  line {line_number} (--offset {offset}): {text}"));
    }
    if let Some(count) = line.strip_suffix(" omitted; narrow with pattern")
        && count_of(count, "more matching note")
    {
        return Some(format!("{count} omitted; narrow with --pattern"));
    }
    if let Some(count) = line.strip_suffix(" hidden; pass wastebasket to list them")
        && count_of(count, "crumpled note")
    {
        return Some(format!("{count} hidden; pass --wastebasket to list them"));
    }
    if last
        && line.starts_with('[')
        && line.ends_with(" to continue.]")
        && let Some(at) = line.find("Use offset_chars=")
    {
        let rest = &line[at + "Use offset_chars=".len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            return Some(format!(
                "{}Use --offset {}{}",
                &line[..at],
                &rest[..digits],
                &rest[digits..]
            ));
        }
    }
    if let Some(call) = line.strip_prefix("neighborhood → history_list(")
        && let Some(json) = call.strip_suffix(')')
    {
        return Some(format!(
            "neighborhood → history list {}",
            history_flags(json)?
        ));
    }
    let indent = &line[..line.len() - line.trim_start().len()];
    let parts: Vec<&str> = line.trim_start().split(" | ").collect();
    if !parts.iter().all(|part| part.starts_with("→ ")) {
        return None;
    }
    let mut hints = Vec::with_capacity(parts.len());
    for part in parts {
        let (arrow, json) = part.split_once(": ")?;
        let flags = history_flags(json)?;
        hints.push(match arrow {
            "→ expand" => format!("{arrow}: history list {flags}"),
            _ => format!("{arrow}: {flags}"),
        });
    }
    Some(format!("{indent}{}", hints.join(" | ")))
}

/// `N <one>` or `N <one>s`.
fn count_of(text: &str, one: &str) -> bool {
    text.split_once(' ').is_some_and(|(count, noun)| {
        is_number(count) && (noun == one || noun.strip_prefix(one) == Some("s"))
    })
}

fn is_number(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit())
}

/// A history hint's JSON (`{"after":3,"before":9,"roles":[…]}`) as `history
/// list` flags.
fn history_flags(json: &str) -> Option<String> {
    let Ok(Value::Object(hint)) = serde_json::from_str::<Value>(json) else {
        return None;
    };
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
    (!flags.is_empty()).then(|| flags.join(" "))
}

#[cfg(test)]
mod tests {
    use notesoup_core::tools::{Refusal, RefusalCode, ToolOutput};
    use serde_json::json;

    use super::{cli_hints, cli_text, cli_words};

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
            cli_hints("→ older: {\"before\":16} | → newer: {\"after\":40}"),
            "→ older: --before 16 | → newer: --after 40"
        );
        assert_eq!(
            cli_hints("\t→ expand: {\"after\":3,\"before\":9,\"roles\":[\"tool\",\"context\"]}"),
            "\t→ expand: history list --after 3 --before 9 --role tool,context"
        );
        assert_eq!(
            cli_hints(
                "seq 8 | window w | user\nneighborhood → history_list({\"after\":0,\"before\":18})\n\nhi"
            ),
            "seq 8 | window w | user\nneighborhood → history list --after 0 --before 18\n\nhi"
        );
        assert_eq!(
            cli_hints(
                "2 notes\n2 more matching notes omitted; narrow with pattern\n1 crumpled note hidden; pass wastebasket to list them"
            ),
            "2 notes\n2 more matching notes omitted; narrow with --pattern\n1 crumpled note hidden; pass --wastebasket to list them"
        );
        assert_eq!(cli_hints("→ older: not json"), "→ older: not json");
        assert_eq!(
            cli_hints(
                "1 file\n- @human/a.md | updated T | 1 match\n  line 3 at offset_chars 40: at offset_chars 2: x"
            ),
            "1 file\n- @human/a.md | updated T | 1 match\n  line 3 (--offset 40): at offset_chars 2: x"
        );
    }

    #[test]
    fn a_note_s_own_lines_are_never_rewritten() {
        let body = "Use offset_chars=5 to continue.\n→ older: {\"before\":1}x\nI said: narrow with pattern\n[x. Use offset_chars=3 to continue.]\nend";
        assert_eq!(cli_hints(body), body);
        // Lines shaped like the hints, but with words where their numbers go.
        let body = "  line three at offset_chars 4: x\n  line 3 at offset_chars : x\nsome more matching notes omitted; narrow with pattern\n2 more matching notesy omitted; narrow with pattern\n[x. Use offset_chars= to continue.]";
        assert_eq!(cli_hints(body), body);
    }

    #[test]
    fn a_refusal_keeps_only_the_details_its_message_does_not_say() {
        let refusal = |details| {
            cli_text(&ToolOutput::refusal(
                &Refusal::new(RefusalCode::AmbiguousEdit, "edit 0: oldText occurs 2 times")
                    .with_details(details),
            ))
        };
        assert_eq!(
            refusal(json!({"edit_index": 0, "line_numbers": [2, 4], "line_numbers_total": 2})),
            "error: ambiguous_edit: edit 1: --old occurs 2 times"
        );
        assert_eq!(
            refusal(json!({"edit_index": 0, "occurrences": 2})),
            "error: ambiguous_edit: edit 1: --old occurs 2 times {\"occurrences\":2}"
        );
    }

    #[test]
    fn a_refusal_speaks_in_flags_and_counts_edits_from_one() {
        assert_eq!(
            cli_words(
                "edit 0: oldText occurs 2 times (lines 3, 5); add surrounding text to make it unique or pass replace_all"
            ),
            "edit 1: --old occurs 2 times (lines 3, 5); add surrounding text to make it unique or pass --all"
        );
        assert_eq!(
            cli_words("the body would hold a credential (from edit 9's newText)"),
            "the body would hold a credential (from edit 10's --new)"
        );
        assert_eq!(
            cli_words("rename_to target is a live note; crumple it first"),
            "the new address is a live note; crumple it first"
        );
        assert_eq!(
            cli_words("max_matches_per_file must be at least 1; credit 3"),
            "--max-matches-per-file must be at least 1; credit 3"
        );
    }
}
