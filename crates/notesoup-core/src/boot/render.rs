//! The pure boot renderer: snapshot, identity and tool bindings in, text out.
//! No I/O and no clock: relative times are measured from the snapshot's
//! `opened_at`.

use std::fmt::Write as _;

use jiff::Timestamp;

use crate::notes::Scope;
use crate::wire::ToolBindings;

use super::BootIdentity;
use super::shelf::{FreshPage, HomeShelf, MapPage, SHELF_FRESH_LIMIT};
use super::snapshot::BootSnapshot;
use super::text::{identity_block, protocol_block};

/// MAP bodies longer than this many code points are cut in the boot.
pub(crate) const MAP_BOOT_MAX_CHARS: usize = 4096;

/// Shown instead of shelves when no home has anything to show.
pub(crate) const BLANK_SLATE: &str =
    "None yet. A blank slate is a fine place to start — just don't finish there.";

/// The default bound of a whole boot, in characters (code points). Claude
/// Code delivers hook context of this size whole, and replaces much larger
/// context with a short preview.
pub(crate) const DEFAULT_BOOT_MAX_CHARS: usize = 10_000;

/// The smallest bound a host may set: the identity and protocol blocks and a
/// cut line per shelf always fit in it.
pub(crate) const MIN_BOOT_MAX_CHARS: usize = 4_000;

#[cfg(test)]
/// The whole boot, within [`DEFAULT_BOOT_MAX_CHARS`].
pub(crate) fn render_boot(
    snapshot: &BootSnapshot,
    identity: &BootIdentity,
    bindings: &ToolBindings,
) -> String {
    BootSections::new(snapshot, identity, bindings, DEFAULT_BOOT_MAX_CHARS).join()
}

/// The whole boot within `max_chars` ([`BootSections::new`], joined).
#[cfg(test)]
pub(crate) fn render_boot_within(
    snapshot: &BootSnapshot,
    identity: &BootIdentity,
    bindings: &ToolBindings,
    max_chars: usize,
) -> String {
    BootSections::new(snapshot, identity, bindings, max_chars).join()
}

/// A rendered boot in its sections, for size reports (`boot --stats`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootSections {
    /// `<context_window>…</context_window>`.
    pub identity: String,
    /// `<context_window_protocol>…</context_window_protocol>`.
    pub protocol: String,
    /// The `YOUR NOTES` heading, or the blank-slate line with it.
    pub notes_heading: String,
    /// Each shown shelf, in boot order, as fitted.
    pub(crate) shelves: Vec<(Scope, String)>,
}

impl BootSections {
    /// The boot text.
    pub fn join(&self) -> String {
        let mut text = String::with_capacity(DEFAULT_BOOT_MAX_CHARS * 4);
        text.push_str(&self.identity);
        text.push_str("\n\n");
        text.push_str(&self.protocol);
        text.push_str("\n\n");
        text.push_str(&self.notes_heading);
        for (index, (_, shelf)) in self.shelves.iter().enumerate() {
            text.push_str(if index == 0 { "\n\n" } else { "\n\n\n" });
            text.push_str(shelf);
        }
        text
    }

    /// Each section's name and size in characters, in boot order.
    pub fn sizes(&self) -> Vec<(String, usize)> {
        let mut sizes = vec![
            ("identity".to_owned(), chars(&self.identity)),
            ("protocol".to_owned(), chars(&self.protocol)),
            ("notes heading".to_owned(), chars(&self.notes_heading)),
        ];
        for (scope, shelf) in &self.shelves {
            sizes.push((format!("shelf {}", scope.as_str()), chars(shelf)));
        }
        sizes
    }
}

fn chars(text: &str) -> usize {
    text.chars().count()
}

/// Gives each shelf an equal share of `budget`, the smaller shelves whole
/// and their unused share to the rest; a shelf over its share is cut.
fn fit_shelves(
    shelves: Vec<(Scope, String)>,
    budget: usize,
    bindings: &ToolBindings,
    max_chars: usize,
) -> Vec<(Scope, String)> {
    let sizes: Vec<usize> = shelves.iter().map(|(_, shelf)| chars(shelf)).collect();
    if sizes.iter().sum::<usize>() <= budget {
        return shelves;
    }
    let mut order: Vec<usize> = (0..shelves.len()).collect();
    order.sort_by_key(|&index| sizes[index]);
    let mut shares = vec![0; shelves.len()];
    let mut left = budget;
    for (rank, &index) in order.iter().enumerate() {
        let share = left / (order.len() - rank);
        shares[index] = sizes[index].min(share);
        left -= shares[index];
    }
    shelves
        .into_iter()
        .zip(shares)
        .map(|((scope, shelf), share)| {
            let fitted = cut_shelf(&shelf, share, scope, bindings, max_chars);
            (scope, fitted)
        })
        .collect()
}

/// `shelf` whole when it fits `share` characters, else its lines up to the
/// last that fits, then a line saying how to read the rest.
fn cut_shelf(
    shelf: &str,
    share: usize,
    scope: Scope,
    bindings: &ToolBindings,
    max_chars: usize,
) -> String {
    if chars(shelf) <= share {
        return shelf.to_owned();
    }
    let home = match scope {
        Scope::Session => "this session's notes",
        Scope::Project => "@project/",
        Scope::Human => "@human/",
        Scope::Agent => "@self/",
        Scope::Model => "@model/",
    };
    let pointer = format!(
        "  [cut to fit the boot's {max_chars}-character bound; the rest: {} on {home}, then read what it names]",
        bindings.notes_list
    );
    // The fresh pages are the newest facts: the MAP above them is cut first.
    if let Some((top, rest)) = shelf.split_once(FRESH_BLOCK) {
        let fresh_cost = chars(FRESH_BLOCK) + chars(rest);
        if let Some(room) = share.checked_sub(fresh_cost + chars(&pointer) + 1) {
            let mut kept = leading_lines(top, room);
            kept.push_str(&pointer);
            kept.push_str(FRESH_BLOCK);
            kept.push_str(rest);
            return kept;
        }
    }
    let mut kept = leading_lines(shelf, share.saturating_sub(chars(&pointer) + 1));
    kept.push_str(&pointer);
    kept
}

/// Where a shelf's fresh pages begin after its MAP.
const FRESH_BLOCK: &str = "\n\nNew pages\n";

/// The whole lines of `text` (each with its newline) that fit in `room`
/// characters.
fn leading_lines(text: &str, room: usize) -> String {
    let mut kept = String::new();
    let mut used = 0;
    for line in text.lines() {
        let cost = chars(line) + 1;
        if used + cost > room {
            break;
        }
        kept.push_str(line);
        kept.push('\n');
        used += cost;
    }
    kept
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

/// Each shelf with something to show, in boot order, whole.
fn render_shelves(
    snapshot: &BootSnapshot,
    identity: &BootIdentity,
    bindings: &ToolBindings,
) -> Vec<(Scope, String)> {
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
        shelves.push((scope, shelf));
    }
    shelves
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
pub(crate) fn relative_time(now: Timestamp, then: Timestamp) -> String {
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

impl BootSections {
    /// The boot (identity block, protocol block and notes shelves, joined
    /// by blank lines by [`Self::join`]) in its sections, fitted to at most
    /// `max_chars` code points (raised to `MIN_BOOT_MAX_CHARS`). Shelves
    /// that do not fit share what is left: the smaller ones whole, the
    /// larger ones cut at a line with a pointer to the tool call that lists
    /// the rest.
    pub fn new(
        snapshot: &BootSnapshot,
        identity: &BootIdentity,
        bindings: &ToolBindings,
        max_chars: usize,
    ) -> BootSections {
        let max_chars = max_chars.max(MIN_BOOT_MAX_CHARS);
        let identity_text = identity_block(identity);
        let protocol = protocol_block(bindings);
        let mut notes_heading = String::new();
        push_heading(&mut notes_heading, "YOUR NOTES");
        let shelves = render_shelves(snapshot, identity, bindings);
        if shelves.is_empty() {
            notes_heading.push_str("\n\n");
            notes_heading.push_str(BLANK_SLATE);
        }
        // Separators, as `join` writes them: two blank-line joins, then two
        // newlines before the first shelf and three before each other.
        let fixed = chars(&identity_text) + chars(&protocol) + chars(&notes_heading) + 4;
        let separators = (shelves.len() * 3).saturating_sub(1);
        let budget = max_chars.saturating_sub(fixed + separators);
        let shelves = fit_shelves(shelves, budget, bindings, max_chars);
        BootSections {
            identity: identity_text,
            protocol,
            notes_heading,
            shelves,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cut shelf keeps its fresh pages, the pointer and as many whole
    /// lines of its MAP as fit beside them: here the first line, not the
    /// empty one after it.
    #[test]
    fn a_cut_keeps_the_map_lines_that_fit_beside_the_fresh_pages() {
        let bindings = ToolBindings::plain();
        let top = format!("A\n\n{}", "B".repeat(200));
        let rest = "  - x · @project/x.md · 1h ago";
        let shelf = format!("{top}{FRESH_BLOCK}{rest}");
        let cut = |share| cut_shelf(&shelf, share, Scope::Project, &bindings, 4_000);
        // With no room, the pointer alone.
        let pointer = cut(0);
        assert!(pointer.starts_with("  [cut to fit the boot's 4000-character bound"));
        let share = chars(FRESH_BLOCK) + chars(rest) + chars(&pointer) + 1 + 2;
        assert_eq!(cut(share), format!("A\n{pointer}{FRESH_BLOCK}{rest}"));
    }
}
