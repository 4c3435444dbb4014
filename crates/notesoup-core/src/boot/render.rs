//! The pure boot renderer: snapshot, identity and tool bindings in, text out.
//! No I/O and no clock: relative times are measured from the snapshot's
//! `opened_at`.

use std::fmt::Write as _;

use jiff::Timestamp;

use crate::notes::Scope;
use crate::wire::ToolBindings;

use super::BootIdentity;
use super::snapshot::{BootSnapshot, FreshPage, HomeShelf, MapPage};
use super::text::{identity_block, protocol_block};

/// MAP bodies longer than this many code points are cut in the boot.
pub const MAP_BOOT_MAX_CHARS: usize = 4096;

/// At most this many fresh pages per shelf.
pub const SHELF_FRESH_LIMIT: usize = 3;

/// Page titles longer than this many code points are cut and end with `…`.
pub const TITLE_MAX_CHARS: usize = 40;

/// Shown instead of shelves when no home has anything to show.
pub const BLANK_SLATE: &str =
    "None yet. A blank slate is a fine place to start — just don't finish there.";

/// The whole boot: identity block, protocol block and notes shelves, joined
/// by blank lines.
pub fn render_boot(
    snapshot: &BootSnapshot,
    identity: &BootIdentity,
    bindings: &ToolBindings,
) -> String {
    let mut text = identity_block(identity);
    text.push_str("\n\n");
    text.push_str(&protocol_block(bindings));
    text.push_str("\n\n");
    render_shelves(&mut text, snapshot, identity, bindings);
    text
}

/// The shelf label of a home, as the boot shows it.
fn shelf_label(scope: Scope, identity: &BootIdentity) -> String {
    match scope {
        Scope::Session => "THIS SESSION · bare paths".to_owned(),
        Scope::Project => "THIS PROJECT · @project".to_owned(),
        Scope::Agent => format!("YOU · @self → @agents/{}", identity.agent),
        Scope::Model => format!("YOUR MODEL · @model → @models/{}", identity.model),
        Scope::Human => "THE HUMAN · @human".to_owned(),
    }
}

/// Shelves appear in this order, which differs from the load order.
const SHELF_ORDER: [Scope; 5] = [
    Scope::Session,
    Scope::Project,
    Scope::Agent,
    Scope::Model,
    Scope::Human,
];

fn render_shelves(
    out: &mut String,
    snapshot: &BootSnapshot,
    identity: &BootIdentity,
    bindings: &ToolBindings,
) {
    push_heading(out, "YOUR NOTES");
    let mut shelves = Vec::new();
    for scope in SHELF_ORDER {
        let body = match snapshot.home(scope) {
            Some(HomeShelf::Unavailable) => format!(
                "  This drawer wouldn't open — ask {} to try again.",
                bindings.notes_list
            ),
            Some(HomeShelf::Loaded { map, fresh }) => {
                match shelf_body(map.as_ref(), fresh, snapshot.opened_at) {
                    Some(body) => body,
                    None => continue,
                }
            }
            None => continue,
        };
        let mut shelf = String::new();
        push_heading(&mut shelf, &shelf_label(scope, identity));
        shelf.push('\n');
        shelf.push_str(&body);
        shelves.push(shelf);
    }
    out.push_str("\n\n");
    if shelves.is_empty() {
        out.push_str(BLANK_SLATE);
    } else {
        out.push_str(&shelves.join("\n\n\n"));
    }
}

/// A label underlined with `─` to its length in code points (no trailing
/// newline).
fn push_heading(out: &mut String, label: &str) {
    out.push_str(label);
    out.push('\n');
    out.extend(std::iter::repeat_n('─', label.chars().count()));
}

/// The MAP and fresh pages of one shelf, or `None` when it has neither.
fn shelf_body(map: Option<&MapPage>, fresh: &[FreshPage], opened_at: Timestamp) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(map) = map.filter(|m| !m.body.trim().is_empty()) {
        parts.push(map_block(map));
    }
    if !fresh.is_empty() {
        let mut block = String::from("New pages");
        for page in fresh.iter().take(SHELF_FRESH_LIMIT) {
            block.push_str("\n  - ");
            if !page.title.is_empty() {
                block.push_str(&page.title);
                block.push_str(" — ");
            }
            let _ = write!(
                block,
                "{} · {}",
                page.address,
                relative_time(opened_at, page.updated_at)
            );
        }
        parts.push(block);
    }
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// `MAP — <address>` and the body indented two spaces, cut at
/// [`MAP_BOOT_MAX_CHARS`] code points with a line saying where the rest is.
fn map_block(map: &MapPage) -> String {
    let body = map.body.trim_matches(['\n', '\r']).trim_end();
    let (shown, cut) = match body.char_indices().nth(MAP_BOOT_MAX_CHARS) {
        Some((byte, _)) => (&body[..byte], true),
        None => (body, false),
    };
    let mut block = format!("MAP — {}", map.address);
    for line in shown.lines() {
        block.push('\n');
        if !line.trim().is_empty() {
            block.push_str("  ");
            block.push_str(line.trim_end());
        }
    }
    if cut {
        let _ = write!(
            block,
            "\n  [MAP cut at {MAP_BOOT_MAX_CHARS} chars — slim it down; full body at {}]",
            map.address
        );
    }
    block
}

/// `just now`, `Ns ago`, `Nm ago`, `Nh ago`, `Nd ago`, or `in N…` for a time
/// after `now` (whole units, rounded down).
pub fn relative_time(now: Timestamp, then: Timestamp) -> String {
    let millis = now.as_millisecond() - then.as_millisecond();
    let seconds = (millis / 1000).unsigned_abs();
    let amount = match seconds {
        0 => return "just now".to_owned(),
        s if s < 60 => format!("{s}s"),
        s if s < 3_600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3_600),
        s => format!("{}d", s / 86_400),
    };
    if millis < 0 {
        format!("in {amount}")
    } else {
        format!("{amount} ago")
    }
}

/// A page's title: its first markdown heading, else its first non-empty line,
/// cut to [`TITLE_MAX_CHARS`] code points plus `…`. Empty when the body has
/// no text. Headings inside fenced code blocks do not count.
pub fn page_title(body: &str) -> String {
    let raw = first_heading(body)
        .or_else(|| body.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("");
    match raw.char_indices().nth(TITLE_MAX_CHARS) {
        Some((byte, _)) => format!("{}…", &raw[..byte]),
        None => raw.to_owned(),
    }
}

/// The text of the first ATX heading (`# Title`, up to three spaces of
/// indent, closing `#`s dropped) outside fenced code.
fn first_heading(body: &str) -> Option<&str> {
    let mut fence: Option<&str> = None;
    for line in body.lines() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let trimmed = line.trim();
        if indent <= 3 {
            for marker in ["```", "~~~"] {
                if trimmed.starts_with(marker) {
                    fence = match fence {
                        None => Some(marker),
                        Some(open) if open == marker => None,
                        other => other,
                    };
                }
            }
        }
        if fence.is_some() || indent > 3 {
            continue;
        }
        let hashes = trimmed.len() - trimmed.trim_start_matches('#').len();
        if !(1..=6).contains(&hashes) {
            continue;
        }
        let rest = &trimmed[hashes..];
        if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
            continue;
        }
        let text = strip_closing_hashes(rest.trim());
        if !text.is_empty() {
            return Some(text);
        }
    }
    None
}

/// `Title ##` is `Title`, but `C#` stays `C#`: a closing sequence needs a
/// space before it.
fn strip_closing_hashes(text: &str) -> &str {
    let open = text.trim_end_matches('#');
    if open.is_empty() {
        open
    } else if open.ends_with([' ', '\t']) {
        open.trim_end()
    } else {
        text
    }
}
