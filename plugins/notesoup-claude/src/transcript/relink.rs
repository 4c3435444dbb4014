//! The relinking of the rows a compaction kept verbatim (its preserved
//! segment), as Claude Code 2.1.332's loader does it, so that the branch
//! walk meets every compaction.
//!
//! A preserved boundary names its kept rows (`preservedMessages.uuids`, else
//! the walk from `preservedSegment.tailUuid` up to `headUuid`) and an anchor
//! (the compact summary, or an id that names no row). The kept rows stand
//! before the boundary in the file and still hang off the old chain; the
//! rows written after the compaction hang off the anchor or off the head.
//! Relinked, in the boundary's epoch (the walk of the rows after it):
//!
//! 1. the first kept row hangs off the anchor, each next kept row off the
//!    one before it;
//! 2. any other row that hangs off the anchor hangs off the last kept row;
//! 3. a user or assistant row that hangs off a row standing before the
//!    boundary and not kept (a row the compaction dropped) hangs off the
//!    last kept row.
//!
//! A listed row that is missing, or a walk that breaks (or goes up more
//! than [`MAX_WALKED_KEPT`] rows), relinks nothing.
//! Claude Code relinks the newest boundary only; the history relinks every
//! boundary in its own epoch, so each compaction opens a window. Kept rows
//! keep their place in the file (and their seqs): walked from the new
//! window they are visited again, in the boundary's epoch, and the walk
//! crossing the boundary (at its logical parent) goes on in file order.

use super::fnv::{FastMap, FastSet};
use super::row::{Kept, Preserved};

/// The most rows a kept segment's walk goes up before it counts as broken:
/// a compaction keeps a few recent rows, and every boundary of a file walks
/// its own segment, so an unbounded walk would cost the file's length per
/// boundary.
const MAX_WALKED_KEPT: usize = 4096;

/// How a boundary relinks the rows of its epoch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Relink {
    /// What the first kept row hangs off (`None`: nothing, it is a root).
    anchor: Option<String>,
    /// The kept rows, oldest first; never empty.
    kept: Vec<String>,
    /// Each kept uuid's last place in `kept` (a later place wins, as in
    /// Claude Code's loop).
    places: FastMap<String, usize>,
}

/// What a lookup of an id found, for a relinking that needs to know.
pub(super) enum Lookup<'a> {
    /// A row, with its own parent.
    Row(Option<&'a str>),
    /// No row has the id.
    Missing,
}

impl Relink {
    /// How `preserved` relinks, looking its rows up with `lookup`: `None`
    /// when it relinks nothing (no kept rows, a listed row missing, a
    /// broken walk). `lookup` may refuse (`Err`) where it cannot tell, and
    /// the refusal is returned unless a missing row already decided.
    pub(super) fn of<'a, E>(
        preserved: &'a Preserved,
        mut lookup: impl FnMut(&'a str) -> Result<Lookup<'a>, E>,
    ) -> Result<Option<Self>, E> {
        let kept = match &preserved.kept {
            Kept::Nothing => return Ok(None),
            Kept::Listed(uuids) => {
                // A missing row decides before a lookup that cannot tell.
                let mut refused = None;
                for uuid in uuids {
                    match lookup(uuid) {
                        Ok(Lookup::Row(_)) => {}
                        Ok(Lookup::Missing) => return Ok(None),
                        Err(err) => refused = refused.or(Some(err)),
                    }
                }
                if let Some(err) = refused {
                    return Err(err);
                }
                uuids.clone()
            }
            Kept::Walk { head, tail } => {
                let mut walked: Vec<&str> = Vec::new();
                let mut seen: FastSet<&str> = FastSet::default();
                let mut at = Some(tail.as_str());
                loop {
                    let Some(uuid) = at.filter(|_| walked.len() < MAX_WALKED_KEPT) else {
                        return Ok(None);
                    };
                    let Lookup::Row(parent) = lookup(uuid)? else {
                        return Ok(None);
                    };
                    if !seen.insert(uuid) {
                        return Ok(None);
                    }
                    walked.push(uuid);
                    if uuid == head {
                        break;
                    }
                    at = parent;
                }
                walked.iter().rev().map(|uuid| (*uuid).to_owned()).collect()
            }
        };
        let places = kept
            .iter()
            .enumerate()
            .map(|(place, uuid)| (uuid.clone(), place))
            .collect();
        Ok(Some(Self {
            anchor: preserved.anchor.clone(),
            kept,
            places,
        }))
    }

    /// Where `uuid` stands in the kept rows, if it is one.
    pub(super) fn place(&self, uuid: &str) -> Option<usize> {
        self.places.get(uuid).copied()
    }

    /// Whether `uuid` is a kept row.
    pub(super) fn keeps(&self, uuid: &str) -> bool {
        self.places.contains_key(uuid)
    }

    /// The parent of the row `uuid` walked in this boundary's epoch: `place`
    /// is its place among the kept rows (when visited as one), `parent` its
    /// own parent, `message` whether it is a user or assistant row.
    /// `dropped` says whether an id names a row standing before the
    /// boundary (kept rows are never asked about); it may refuse where it
    /// cannot tell.
    pub(super) fn parent<'a, E>(
        &'a self,
        uuid: &str,
        place: Option<usize>,
        parent: Option<&'a str>,
        message: bool,
        dropped: impl FnOnce(&'a str) -> Result<bool, E>,
    ) -> Result<Option<&'a str>, E> {
        let last = self.kept.last().map(String::as_str);
        let mut parent = match place {
            Some(0) => self.anchor.as_deref(),
            Some(place) => self.kept.get(place - 1).map(String::as_str),
            None => parent,
        };
        if self.anchor.is_some()
            && parent == self.anchor.as_deref()
            && Some(uuid) != self.kept.first().map(String::as_str)
        {
            parent = last;
        }
        if message
            && let Some(id) = parent
            && !self.keeps(id)
            && dropped(id)?
        {
            parent = last;
        }
        Ok(parent)
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use super::*;

    /// A chain `r0 <- r1 <- … <- r{len-1}` kept by its ends.
    fn walked(len: usize) -> Option<Relink> {
        let preserved = Preserved {
            anchor: Some("s".to_owned()),
            kept: Kept::Walk {
                head: "r0".to_owned(),
                tail: format!("r{}", len - 1),
            },
        };
        let parents: Vec<Option<String>> = (0..len)
            .map(|n| n.checked_sub(1).map(|p| format!("r{p}")))
            .collect();
        let lookup = |uuid: &str| {
            let n: usize = uuid[1..].parse().unwrap();
            Ok::<_, Infallible>(Lookup::Row(parents[n].as_deref()))
        };
        let Ok(relink) = Relink::of(&preserved, lookup);
        relink
    }

    /// A segment is walked from its tail up to its head, as far as
    /// [`MAX_WALKED_KEPT`] rows: a longer one relinks nothing, so a file of
    /// many boundaries costs no more than that per boundary.
    #[test]
    fn a_segment_walk_goes_up_a_bounded_number_of_rows() {
        let relink = walked(MAX_WALKED_KEPT).unwrap();
        assert_eq!(relink.kept.len(), MAX_WALKED_KEPT);
        assert_eq!(relink.kept.first().map(String::as_str), Some("r0"));
        assert_eq!(relink.place("r1"), Some(1));
        assert!(walked(MAX_WALKED_KEPT + 1).is_none());
    }

    /// The relinked parents, rule by rule; `dropped` is asked only about
    /// rows that are not kept.
    #[test]
    fn parents_follow_the_rules_in_order() {
        let preserved = Preserved {
            anchor: Some("s".to_owned()),
            kept: Kept::Listed(vec!["k1".to_owned(), "k2".to_owned()]),
        };
        let lookup = |_: &str| Ok::<_, Infallible>(Lookup::Row(None));
        let Ok(Some(relink)) = Relink::of(&preserved, lookup) else {
            panic!("no relinking");
        };
        let never = |id: &str| -> Result<bool, Infallible> { panic!("asked about {id}") };
        let parent = |uuid, place, own, message, dropped: bool| {
            let Ok(parent) =
                relink.parent(uuid, place, own, message, |_| Ok::<_, Infallible>(dropped));
            parent
        };
        // 1. The kept rows chain off the anchor.
        assert_eq!(parent("k1", Some(0), Some("old"), true, false), Some("s"));
        assert_eq!(parent("k2", Some(1), Some("old"), true, false), Some("k1"));
        // 2. Others off the anchor hang off the last kept row.
        assert_eq!(parent("c", None, Some("s"), false, false), Some("k2"));
        // 3. Messages off a dropped row too; other rows stay.
        assert_eq!(parent("c", None, Some("old"), true, true), Some("k2"));
        assert_eq!(parent("c", None, Some("old"), false, true), Some("old"));
        assert_eq!(parent("c", None, Some("old"), true, false), Some("old"));
        let Ok(kept) = relink.parent("c", None, Some("k1"), true, never);
        assert_eq!(kept, Some("k1"));
        let Ok(root) = relink.parent("c", None, None, true, never);
        assert_eq!(root, None);
    }
}
