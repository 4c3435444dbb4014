//! `/notesoup` completes `on` and `off` in the real `pi` command: the
//! package installed with `notesoup-pi install`, Pi's own editor in a tmux
//! pane, keys typed as a user types them. No model is needed.

use super::support::{Pane, Pi, PiHome, assert_tmux};

/// Whether the pane has exactly this line (trailing blanks trimmed).
fn has_line(lines: &[&str], line: &str) -> bool {
    lines.contains(&line)
}

/// Enter runs the command the editor holds; notesoup's status says it is
/// `state` (`on` or `off`).
fn enter_turns(pane: &Pane, state: &str) {
    pane.keys(&["Enter"]);
    let status = format!("notesoup: {state} · v");
    pane.wait_for_lines(&format!("notesoup turned {state}"), |lines| {
        lines.iter().any(|l| l.trim_start().starts_with(&status))
    });
}

#[test]
fn the_notesoup_command_completes_on_and_off_in_pi_s_editor() {
    let pi = Pi::from_env();
    assert_tmux();
    let home = PiHome::new(&pi, "notesoup-pi-complete-");
    home.install();
    let pane = home.start_pi(format!("notesoup-pi-complete-{}", std::process::id()), "");
    pane.wait_for_lines("the notesoup extension loaded", |lines| {
        has_line(lines, "  notesoup.ts")
    });

    // After `/notesoup ` Pi lists both arguments, the first selected.
    pane.keys(&["-l", "/notesoup "]);
    pane.wait_for_lines("on and off offered", |lines| {
        has_line(lines, "→ on") && has_line(lines, "  off")
    });
    // A prefix narrows the list; Tab takes the completion, Enter runs it.
    pane.keys(&["-l", "of"]);
    pane.wait_for_lines("only off offered", |lines| {
        has_line(lines, "→ off") && !lines.iter().any(|l| l.ends_with(" on"))
    });
    pane.keys(&["Tab"]);
    pane.wait_for_lines("the editor completed to off", |lines| {
        lines.iter().any(|l| l.trim_end() == "/notesoup off") && !has_line(lines, "→ off")
    });
    enter_turns(&pane, "off");

    pane.keys(&["-l", "/notesoup o"]);
    pane.wait_for_lines("on and off offered for o", |lines| {
        has_line(lines, "→ on") && has_line(lines, "  off")
    });
    pane.keys(&["Tab"]);
    pane.wait_for_lines("the editor completed to on", |lines| {
        lines.iter().any(|l| l.trim_end() == "/notesoup on")
    });
    enter_turns(&pane, "on");

    // A command without arguments offers none.
    pane.keys(&["-l", "/fresh-window "]);
    pane.wait_for_lines("the editor holds /fresh-window", |lines| {
        lines.iter().any(|l| l.trim_end() == "/fresh-window")
    });
    let text = pane.text();
    assert!(!text.contains("→ on") && !text.contains("→ off"), "{text}");
    drop(pane);
}
