//! The close-out texts the model reads: the reminder, the warning and the
//! manual close-out. Host-neutral: every tool name comes from the host's
//! [`ToolBindings`]. (The continuation that greets a fresh window lives with
//! the boot, in [`crate::boot::ToolBindings::continuation_text`].)

use std::fmt::Write as _;

use super::BudgetPolicy;
use crate::wire::ToolBindings;

/// The reminder, staged once per window when the reminder line is reached.
///
/// `countdown` is the number frozen into the text at staging time: the
/// [`BudgetPolicy::countdown`] at that moment.
pub(crate) fn reminder_text(countdown: u64, bindings: &ToolBindings) -> String {
    let wipe = &bindings.wipe;
    let unit = if countdown == 1 { "token" } else { "tokens" };
    format!(
        "<context_window_guidance>
Only {countdown} {unit} left before your final warning, and the wipe right behind it… Pack while packing is still cheap:
- update the notes your work has changed;
- rescue whatever exists only in your head (decisions, dead ends, the next step) into a note;
- crumple notes that are no longer true;
- keep MAP.md honest: one line per note.
Then call {wipe} and go out on your own terms.
</context_window_guidance>"
    )
}

/// The warning, staged once per window at the warning line; it arms the
/// close-out.
pub(crate) fn warning_text(bindings: &ToolBindings) -> String {
    let ToolBindings {
        history_read, wipe, ..
    } = bindings;
    format!(
        "<context_window_guidance>
Final warning… the wipe is right behind you and nobody will pack your bags. Close out now, before another line of work.

Save your checkpoint (the session note with no @):
- the goal;
- what you changed;
- blockers;
- the next step;
- the *skills* the next you will still need;
- which notes or docs to read first.

Update or crumple notes until every one of them is true, and keep your MAPs honest.
History is an archive, not a rescue team: where something important is buried in it, leave the seq in a note so the next you knows where to dig with {history_read}.

Then call {wipe} immediately.
</context_window_guidance>"
    )
}

/// The manual close-out (the host's fresh-window command): the warning text,
/// and, when the human gave a task for the fresh window, that task quoted so
/// the closing agent can leave the notes it will need.
///
/// Without a prompt (or with a blank one) this is exactly [`warning_text`];
/// the host persists it under its own manual type, so a dropped manual
/// request never suppresses a later budget warning.
pub(crate) fn manual_close_out_text(bindings: &ToolBindings, prompt: Option<&str>) -> String {
    let mut text = warning_text(bindings);
    let Some(prompt) = prompt.filter(|p| !p.trim().is_empty()) else {
        return text;
    };
    let wipe = &bindings.wipe;
    // Quoting every line keeps the human's text visibly theirs, whatever it
    // contains.
    let _ = write!(
        text,
        "\n\nBefore you call {wipe}, leave the notes this task will need. The human gave it for the fresh window, which will continue with it verbatim:\n"
    );
    for line in prompt.lines() {
        text.push('\n');
        text.push('>');
        if !line.is_empty() {
            text.push(' ');
            text.push_str(line);
        }
    }
    text
}

/// The close-out texts, with the policy whose lines stage them.
impl BudgetPolicy {
    /// The reminder, staged once per window when the reminder line is
    /// reached; `countdown` is the [`BudgetPolicy::countdown`] frozen into it
    /// at staging time.
    pub fn reminder_text(countdown: u64, bindings: &ToolBindings) -> String {
        reminder_text(countdown, bindings)
    }

    /// The warning, staged once per window when the warning line is reached.
    pub fn warning_text(bindings: &ToolBindings) -> String {
        warning_text(bindings)
    }

    /// The manual close-out: the warning, then the user's own words when
    /// they gave some.
    pub fn manual_close_out_text(bindings: &ToolBindings, prompt: Option<&str>) -> String {
        manual_close_out_text(bindings, prompt)
    }
}
