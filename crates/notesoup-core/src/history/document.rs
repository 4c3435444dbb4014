//! Event documents: the one text per event that search matches, previews show
//! and `history_read` returns.

use std::fmt::Write;

use super::transcript::{NestedArguments, NestedCall, NestedCalls};

/// The document of a tool event:
/// `<name> <JSON arguments | (arguments not recorded)>`, then
/// `\n--- output ---\n<output>` when there is output, then
/// `\n--- nested calls (complete|incomplete, N recorded) ---` and one line per
/// nested call.
pub(crate) fn tool_document(
    name: &str,
    arguments: Option<&str>,
    output: String,
    nested: Option<&NestedCalls>,
) -> String {
    let arguments = arguments.unwrap_or("(arguments not recorded)");
    // The output's own allocation takes the head in front of it: a long
    // output is not copied into a second buffer.
    let mut document = output;
    let head = name.len() + 1 + arguments.len();
    if document.is_empty() {
        document.reserve_exact(head);
        document.push_str(name);
        document.push(' ');
        document.push_str(arguments);
    } else {
        document.reserve_exact(head + OUTPUT_RULE.len());
        let mut front = String::with_capacity(head + OUTPUT_RULE.len());
        front.push_str(name);
        front.push(' ');
        front.push_str(arguments);
        front.push_str(OUTPUT_RULE);
        document.insert_str(0, &front);
    }
    if let Some(nested) = nested {
        let completeness = if nested.complete {
            "complete"
        } else {
            "incomplete"
        };
        // Writing to a String cannot fail.
        let _ = write!(
            document,
            "\n--- nested calls ({completeness}, {} recorded) ---",
            nested.calls.len()
        );
        for call in &nested.calls {
            document.push('\n');
            push_nested_line(&mut document, call);
        }
    }
    document
}

/// What separates a tool document's head from its output.
const OUTPUT_RULE: &str = "\n--- output ---\n";

/// `- <name> [<status>] [Nms] [error: …] <args | (arguments omitted: N bytes)>`,
/// where the duration and the error appear only when recorded.
fn push_nested_line(document: &mut String, call: &NestedCall) {
    let _ = write!(document, "- {} [{}]", call.name, call.status);
    if let Some(duration) = call.duration_ms {
        let _ = write!(document, " {duration}ms");
    }
    if let Some(error) = &call.error {
        let _ = write!(document, " error: {error}");
    }
    match &call.arguments {
        NestedArguments::Recorded(arguments) => {
            document.push(' ');
            document.push_str(arguments);
        }
        NestedArguments::Omitted { bytes } => {
            let _ = write!(document, " (arguments omitted: {bytes} bytes)");
        }
        NestedArguments::NotRecorded => document.push_str(" (arguments not recorded)"),
    }
}
