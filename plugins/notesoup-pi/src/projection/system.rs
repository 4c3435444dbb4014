//! Replaying system messages (pi-ai `getCurrentSystemMessage`).

use serde_json::{Map, Value};

use crate::json::js_object_order;
use crate::session::{AgentMessage, Content, Extra, SystemLayout, SystemMessage, ToolDeclaration};

/// pi-ai `getCurrentSystemMessage`: every system message replayed into one
/// holding the current prompt and tools. Later `content` is appended (joined
/// with a blank line), `sections` are patched by name (`null` deletes), tools
/// are added and removed by name. `None` when there is no system message and
/// no tool.
pub fn current_system_message<'m>(
    messages: impl IntoIterator<Item = &'m AgentMessage>,
) -> Option<SystemMessage> {
    let mut content: Vec<String> = Vec::new();
    let mut sections: Map<String, Value> = Map::new();
    let mut tools: Vec<(String, ToolDeclaration)> = Vec::new();
    let mut timestamp: Option<i64> = None;
    for message in messages {
        let AgentMessage::System(system) = message else {
            continue;
        };
        timestamp.get_or_insert(system.timestamp);
        let text = system.content.text("\n");
        if !text.is_empty() {
            content.push(text);
        }
        for (name, value) in system.sections.iter().flatten() {
            if value.is_null() {
                // JavaScript's Map.delete: a later set re-adds at the end.
                sections.shift_remove(name);
            } else {
                sections.insert(name.clone(), value.clone());
            }
        }
        for removed in system.tools_removed.iter().flatten() {
            tools.retain(|(name, _)| *name != removed.name);
        }
        for added in system.tools_added.iter().flatten() {
            // JavaScript's Map.set keeps the position of an existing key.
            match tools.iter_mut().find(|(name, _)| *name == added.name) {
                Some(slot) => slot.1 = added.clone(),
                None => tools.push((added.name.clone(), added.clone())),
            }
        }
    }
    if timestamp.is_none() && tools.is_empty() {
        return None;
    }
    Some(SystemMessage {
        content: Content::Text(content.join("\n\n")),
        // `Object.fromEntries` puts integer-like names first.
        sections: (!sections.is_empty()).then(|| js_object_order(sections)),
        tools_added: (!tools.is_empty()).then(|| tools.into_iter().map(|(_, tool)| tool).collect()),
        tools_removed: None,
        timestamp: timestamp.unwrap_or(0),
        layout: SystemLayout::ToolsBeforeTimestamp,
        extra: Extra::new(),
    })
}

/// pi-ai `getSystemMessageText`: the content followed by the non-null
/// section values, empty parts dropped, joined with a blank line.
pub fn system_message_text(message: &SystemMessage) -> String {
    let mut parts = vec![message.content.text("\n")];
    for value in message.sections.iter().flat_map(Map::values) {
        if let Value::String(text) = value {
            parts.push(text.clone());
        }
    }
    parts.retain(|part| !part.is_empty());
    parts.join("\n\n")
}
