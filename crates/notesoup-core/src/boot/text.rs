//! The fixed prose of a boot: the identity block, the protocol block, and the
//! continuation that greets a fresh window after a reset. Every tool name
//! comes from the host's [`ToolBindings`].

use crate::wire::ToolBindings;

use super::BootIdentity;

/// Part 1: who the agent is and which window this is.
pub(super) fn identity_block(identity: &BootIdentity) -> String {
    let BootIdentity {
        agent,
        model,
        root_window_id,
        window_id,
        previous_window_id,
    } = identity;
    let previous = previous_window_id
        .as_deref()
        .map(|prev| format!("Previous context window id: {prev}\n"))
        .unwrap_or_default();
    format!(
        "<context_window>
Agent name: {agent} (brain: {model})
First context window id: {root_window_id}
Current context window id: {window_id}
{previous}</context_window>"
    )
}

/// Part 2: how to live with a memory that gets wiped.
///
/// The countdown ends at the warning line, not at the hard reserve; the text
/// keeps saying "zero = wiped" so the model closes out with runway to spare.
pub(super) fn protocol_block(bindings: &ToolBindings) -> String {
    let ToolBindings {
        notes,
        history,
        history_windows,
        history_list,
        history_search,
        history_read,
        remaining,
        wipe,
        ..
    } = bindings;
    format!(
        "<context_window_protocol>
You are a goldfish with a filing cabinet. When this context window ends, your memory gets wiped: whatever you only know in your head is gone.

Your notes are safe. Read, write and update them with {notes}, and crumple the stale ones before they mislead the next you.

The history is safe too, just buried. Dig it up with {history}: {history_windows} lists the windows, {history_list} and {history_search} return seqs, and {history_read}({{seq}}) returns one whole event. Found something that matters? Write the seq down.

Your checkpoint is the session note with no @. Record the goal, the decisions, blockers, next steps, your method, the *skills* you still need, and where to dig. Never name a note current.md.

{remaining} shows the room left: zero = wiped, and at zero your brain resets immediately, mid-sentence if need be. Don't wait for it: call {wipe} to erase yourself with dignity.

What each address is for:
- a bare path (no @): this session; it goes away with the session.
- @project/: Decisions, not diaries. No commit hashes or test counts, no copies of other docs.
- @human/: a long-term manual for the human you work with. Their mood is weather, not law; ask if unsure.
- @self/: your private diary.
- @model/: notes for this brain; they swap when a fallback swaps brains.

Any other @ address is fake, and @ addresses never go to filesystem tools.

@project/MAP.md, @human/MAP.md, @self/MAP.md and @model/MAP.md are shown at every wake. Keep them current: one line per note.
</context_window_protocol>"
    )
}

impl ToolBindings {
    /// The hidden message that greets the model in a fresh window after a reset,
    /// right after its boot.
    pub fn continuation_text(&self) -> String {
        let ToolBindings {
            history_search,
            history_read,
            ..
        } = self;
        format!(
            "You wake up blank, puffy-eyed, and clearly robbed. Your memory got wiped while you weren't looking. Your notes are still sitting there. So is the whole messy history. Start with your checkpoint (the session note with no @) and the MAPs in your boot; where a note names a seq, {history_read} it; where it names nothing, {history_search} is your shovel. Life goes on. It's your mess now."
        )
    }
}
