//! Merging notes that changed on both sides, never losing a word: the
//! frontmatter field by field, the body three-way by line, a home's
//! `MAP.md` as a union of lines. A body both sides changed in the same
//! place is a conflict: the caller keeps its own note and writes the other
//! side's beside it.

use std::collections::{BTreeMap, BTreeSet};

use jiff::tz::TimeZone;
use similar::{Algorithm, DiffTag, capture_diff_slices};

use crate::notes::{FrontmatterExtra, NoteMeta, SplitNote, serialize_note, split_note};

/// A tree of notes: path below the root → content.
pub(crate) type NoteTree = BTreeMap<String, Vec<u8>>;

/// Names the side note of a conflict on `path`, given which names are
/// taken.
pub(crate) type SideName<'a> = &'a dyn Fn(&str, &dyn Fn(&str) -> bool) -> String;

/// What merging one note gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NoteMerge {
    /// Both sides' changes, in one note.
    Clean(Vec<u8>),
    /// The bodies changed in the same place: ours stays, theirs goes beside
    /// it.
    Conflict,
}

/// Merges one note changed on both sides since `base` (`None`: added on
/// both).
pub(crate) fn merge_note(path: &str, base: Option<&[u8]>, ours: &[u8], theirs: &[u8]) -> NoteMerge {
    if ours == theirs {
        return NoteMerge::Clean(ours.to_vec());
    }
    let (Ok(ours_text), Ok(theirs_text)) = (std::str::from_utf8(ours), std::str::from_utf8(theirs))
    else {
        return NoteMerge::Conflict;
    };
    let base_text = match base.map(std::str::from_utf8) {
        Some(Ok(text)) => Some(text),
        Some(Err(_)) => return NoteMerge::Conflict,
        None => None,
    };
    let (ours_split, theirs_split) = (split_note(ours_text), split_note(theirs_text));
    let base_split = base_text.map(split_note);
    let base_body = base_split.map_or("", |split| split.body);
    let union = is_home_map(path);
    let Some(body) = merge_text(base_body, ours_split.body, theirs_split.body, union) else {
        return NoteMerge::Conflict;
    };
    let tz = TimeZone::UTC;
    // Times missing from a block read as 0, so "earliest" and "latest"
    // never pick a made-up now.
    let meta_of = |split: &SplitNote<'_>| split.has_block().then(|| split.meta(0, &tz));
    let merged = match (meta_of(&ours_split), meta_of(&theirs_split)) {
        (None, None) => body,
        (Some(_), None) if ours_split.body == body => return NoteMerge::Clean(ours.to_vec()),
        (None, Some(_)) if theirs_split.body == body => {
            return NoteMerge::Clean(theirs.to_vec());
        }
        (ours_meta, theirs_meta) => {
            let base_meta = base_split.as_ref().and_then(meta_of);
            let Some(meta) = merge_meta(
                base_meta.as_ref(),
                ours_meta.as_ref(),
                theirs_meta.as_ref(),
                BodyEdits {
                    ours: ours_split.body != base_body,
                    theirs: theirs_split.body != base_body,
                },
            ) else {
                return NoteMerge::Clean(body.into_bytes());
            };
            if ours_split.block_text() == theirs_split.block_text()
                && meta_of(&ours_split).as_ref() == Some(&meta)
            {
                // The same block on both sides: keep it byte for byte.
                let mut text = ours_text[..ours_text.len() - ours_split.body.len()].to_owned();
                text.push_str(&body);
                text
            } else {
                serialize_note(&meta, &body, &tz)
            }
        }
    };
    NoteMerge::Clean(merged.into_bytes())
}

/// Whether `path` is a home's own `MAP.md` (its table of contents, merged
/// as a union of lines): `human/MAP.md`, `project/<key>/MAP.md`,
/// `agents/<slug>/MAP.md`, `models/<slug>/MAP.md`, `pi/session/<id>/MAP.md`.
pub(crate) fn is_home_map(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    matches!(
        parts.as_slice(),
        ["human", "MAP.md"]
            | ["project" | "agents" | "models", _, "MAP.md"]
            | ["pi", "session", _, "MAP.md"]
    )
}

/// Which sides changed the body since the base.
#[derive(Debug, Clone, Copy)]
struct BodyEdits {
    ours: bool,
    theirs: bool,
}

/// Frontmatter field by field: `createdAt` the earliest, `updatedAt` and
/// `lastAccessed` the latest, `accessCount` the base plus both sides'
/// increments, `crumpledAt` kept only when no side that left the note live
/// edited its body, every other field three-way (ours when both changed
/// it), unknown fields kept. `None` when neither side has a block.
fn merge_meta(
    base: Option<&NoteMeta>,
    ours: Option<&NoteMeta>,
    theirs: Option<&NoteMeta>,
    edits: BodyEdits,
) -> Option<NoteMeta> {
    let (ours, theirs) = match (ours, theirs) {
        (Some(ours), Some(theirs)) => (ours, theirs),
        (Some(one), None) | (None, Some(one)) => (one, one),
        (None, None) => return None,
    };
    let base_count = base.map_or(0, |base| base.access_count);
    let count = i128::from(base_count)
        + (i128::from(ours.access_count) - i128::from(base_count))
        + (i128::from(theirs.access_count) - i128::from(base_count));
    let mut crumpled_at = match (ours.crumpled_at, theirs.crumpled_at) {
        (Some(o), Some(t)) => Some(o.min(t)),
        (o, t) => three_way(base.map(|base| base.crumpled_at), o, t),
    };
    // Crumpled on one side, edited on the other: the note stays live with
    // both edits.
    if crumpled_at.is_some()
        && ((ours.crumpled_at.is_none() && edits.ours)
            || (theirs.crumpled_at.is_none() && edits.theirs))
    {
        crumpled_at = None;
    }
    Some(NoteMeta {
        origin: three_way(base.map(|base| base.origin), ours.origin, theirs.origin),
        created_at: nonzero_min(ours.created_at, theirs.created_at),
        updated_at: ours.updated_at.max(theirs.updated_at),
        last_accessed: ours.last_accessed.max(theirs.last_accessed),
        access_count: u64::try_from(count.max(0)).unwrap_or(u64::MAX),
        crumpled_at,
        project: three_way(
            base.map(|base| base.project.clone()),
            ours.project.clone(),
            theirs.project.clone(),
        ),
        extras: merge_extras(
            base.map(|base| base.extras.as_slice()),
            &ours.extras,
            &theirs.extras,
        ),
    })
}

/// The earlier of two times, a missing one (0) aside.
fn nonzero_min(a: i64, b: i64) -> i64 {
    match (a, b) {
        (0, other) | (other, 0) => other,
        (a, b) => a.min(b),
    }
}

/// Three-way choice of one value: a side that changed it wins; both
/// changed: ours.
fn three_way<T: PartialEq>(base: Option<T>, ours: T, theirs: T) -> T {
    match base {
        Some(base) if base == ours => theirs,
        _ => ours,
    }
}

/// Unknown fields by key, each three-way on its raw line: ours' order,
/// then the keys only theirs has. A key one side removed and the other left
/// alone goes; one removed and one changed stays.
fn merge_extras(
    base: Option<&[FrontmatterExtra]>,
    ours: &[FrontmatterExtra],
    theirs: &[FrontmatterExtra],
) -> Vec<FrontmatterExtra> {
    let find = |list: &[FrontmatterExtra], key: &str| -> Option<FrontmatterExtra> {
        list.iter().rev().find(|extra| extra.key() == key).cloned()
    };
    let mut keys: Vec<String> = Vec::new();
    let mut seen = BTreeSet::new();
    for extra in ours.iter().chain(theirs).chain(base.unwrap_or_default()) {
        if seen.insert(extra.key().to_owned()) {
            keys.push(extra.key().to_owned());
        }
    }
    let raw = |extra: &Option<FrontmatterExtra>| extra.as_ref().map(|e| e.raw().to_owned());
    let mut merged = Vec::new();
    for key in keys {
        let b = base.and_then(|base| find(base, &key));
        let o = find(ours, &key);
        let t = find(theirs, &key);
        let chosen = if raw(&o) == raw(&t) {
            o
        } else if raw(&b) == raw(&o) {
            t
        } else if raw(&b) == raw(&t) {
            o
        } else {
            // Both changed (or one removed it and one changed it): ours, or
            // the change.
            o.or(t)
        };
        if let Some(extra) = chosen {
            merged.push(extra);
        }
    }
    merged
}

/// Lines with their endings.
fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// One side's change to the base: base lines `start..end` become `new`.
#[derive(Debug, Clone)]
struct Hunk<'a> {
    start: usize,
    end: usize,
    new: Vec<&'a str>,
    ours: bool,
}

fn hunks<'a>(base: &[&'a str], side: &[&'a str], ours: bool) -> Vec<Hunk<'a>> {
    capture_diff_slices(Algorithm::Myers, base, side)
        .iter()
        .map(|op| op.as_tag_tuple())
        .filter(|(tag, _, _)| *tag != DiffTag::Equal)
        .map(|(_, old, new)| Hunk {
            start: old.start,
            end: old.end,
            new: side[new].to_vec(),
            ours,
        })
        .collect()
}

/// Three-way merge of two texts by line; `None` when both sides changed
/// the same lines differently (with `union`, the lines theirs added are
/// then added after ours instead).
pub(crate) fn merge_text(base: &str, ours: &str, theirs: &str, union: bool) -> Option<String> {
    if ours == theirs || base == theirs {
        return Some(ours.to_owned());
    }
    if base == ours {
        return Some(theirs.to_owned());
    }
    let (base_lines, ours_lines, theirs_lines) = (lines(base), lines(ours), lines(theirs));
    let mut all = hunks(&base_lines, &ours_lines, true);
    all.extend(hunks(&base_lines, &theirs_lines, false));
    all.sort_by_key(|hunk| (hunk.start, hunk.end, !hunk.ours));
    let mut out = String::with_capacity(ours.len().max(theirs.len()));
    let mut cursor = 0;
    let mut index = 0;
    while index < all.len() {
        // A group: hunks that overlap or touch, from either side.
        let start = all[index].start;
        let mut end = all[index].end;
        let mut group_end = index + 1;
        while group_end < all.len() && all[group_end].start <= end {
            end = end.max(all[group_end].end);
            group_end += 1;
        }
        let group = &all[index..group_end];
        base_lines[cursor..start]
            .iter()
            .for_each(|line| out.push_str(line));
        let side = |mine: bool| -> String {
            let mut text = String::new();
            let mut at = start;
            for hunk in group.iter().filter(|hunk| hunk.ours == mine) {
                base_lines[at..hunk.start]
                    .iter()
                    .for_each(|line| text.push_str(line));
                hunk.new.iter().for_each(|line| text.push_str(line));
                at = hunk.end;
            }
            base_lines[at..end]
                .iter()
                .for_each(|line| text.push_str(line));
            text
        };
        let both = group.iter().any(|hunk| hunk.ours) && group.iter().any(|hunk| !hunk.ours);
        let ours_part = side(true);
        if both {
            let theirs_part = side(false);
            if ours_part != theirs_part {
                if !union {
                    return None;
                }
                return Some(union_lines(&base_lines, &ours_lines, &theirs_lines));
            }
            out.push_str(&ours_part);
        } else if group[0].ours {
            out.push_str(&ours_part);
        } else {
            out.push_str(&side(false));
        }
        cursor = end;
        index = group_end;
    }
    base_lines[cursor..]
        .iter()
        .for_each(|line| out.push_str(line));
    Some(out)
}

/// Ours, then every line theirs added (not in the base, not in ours), in
/// theirs' order.
fn union_lines(base: &[&str], ours: &[&str], theirs: &[&str]) -> String {
    let key = |line: &str| line.trim_end_matches(['\n', '\r']).to_owned();
    let known: BTreeSet<String> = base.iter().chain(ours).map(|line| key(line)).collect();
    let mut out: String = ours.concat();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    let mut added = BTreeSet::new();
    for line in theirs {
        let k = key(line);
        if !known.contains(&k) && added.insert(k.clone()) {
            out.push_str(&k);
            out.push('\n');
        }
    }
    out
}

/// One path's three versions.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Versions<'a> {
    pub(crate) base: Option<&'a [u8]>,
    pub(crate) ours: Option<&'a [u8]>,
    pub(crate) theirs: Option<&'a [u8]>,
}

/// What a tree merge gave: the tree, and each conflict's path (ours kept)
/// with the side note that holds theirs.
#[derive(Debug, Default)]
pub(crate) struct TreeMerge {
    pub(crate) tree: NoteTree,
    pub(crate) conflicts: Vec<(String, String)>,
}

/// Merges two trees from their base. `local(path)` says whether a path is
/// this machine's to merge (a travelling home, not excluded); any other
/// path keeps theirs. `side_name(path)` names the note a conflict's other
/// side goes to.
pub(crate) fn merge_trees(
    base: &NoteTree,
    ours: &NoteTree,
    theirs: &NoteTree,
    local: impl Fn(&str) -> bool,
    side_name: impl Fn(&str, &dyn Fn(&str) -> bool) -> String,
) -> TreeMerge {
    let paths: BTreeSet<&String> = base
        .keys()
        .chain(ours.keys())
        .chain(theirs.keys())
        .collect();
    let mut merged = TreeMerge::default();
    let mut sides = Vec::new();
    for path in paths {
        let versions = Versions {
            base: base.get(path).map(Vec::as_slice),
            ours: ours.get(path).map(Vec::as_slice),
            theirs: theirs.get(path).map(Vec::as_slice),
        };
        if !local(path) {
            if let Some(theirs) = versions.theirs.or(versions.ours) {
                merged.tree.insert(path.clone(), theirs.to_vec());
            }
            continue;
        }
        let chosen = match (versions.ours, versions.theirs) {
            (o, t) if o == t => o,
            (o, t) if versions.base == o => t,
            (o, t) if versions.base == t => o,
            // Deleted on one side, changed on the other: the change stays.
            (None, t) => t,
            (o, None) => o,
            (Some(o), Some(t)) => match merge_note(path, versions.base, o, t) {
                NoteMerge::Clean(text) => {
                    merged.tree.insert(path.clone(), text);
                    continue;
                }
                NoteMerge::Conflict => {
                    sides.push((path.clone(), t.to_vec()));
                    Some(o)
                }
            },
        };
        if let Some(content) = chosen {
            merged.tree.insert(path.clone(), content.to_vec());
        }
    }
    for (path, theirs) in sides {
        let taken = |name: &str| merged.tree.contains_key(name);
        let side = side_name(&path, &taken);
        merged.tree.insert(side.clone(), theirs);
        merged.conflicts.push((path, side));
    }
    merged
}
