//! One home's shelf as a boot shows it: its MAP and its freshest pages, each
//! page by its title. Below the snapshot that reads the homes, the index that
//! keeps their shelves between boots, and the renderer.

use jiff::Timestamp;

use crate::notes::{ListQuery, NoteError, NoteHeader, NoteRow, NoteStore, Scope};

/// At most this many fresh pages per shelf.
pub(crate) const SHELF_FRESH_LIMIT: usize = 3;

/// Page titles longer than this many code points are cut and end with `…`.
pub(crate) const TITLE_MAX_CHARS: usize = 40;

/// The file name of a home's table of contents, at the home's root.
pub(super) const MAP_FILE: &str = "MAP.md";

/// A home's MAP: its table of contents, inlined in the boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MapPage {
    /// The rendered address, e.g. `@project/MAP.md`.
    pub address: String,
    /// The whole body (the renderer caps it).
    pub body: String,
}

/// One of a shelf's freshest pages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FreshPage {
    /// The rendered address.
    pub address: String,
    /// See `page_title`; empty when the body has no text.
    pub title: String,
    /// The note's `updatedAt`.
    pub updated_at: Timestamp,
}

/// What the snapshot holds for one home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HomeShelf {
    /// The home was listed (a missing directory lists as empty).
    Loaded {
        /// The root `MAP.md`, when there is one.
        map: Option<MapPage>,
        /// Up to `SHELF_FRESH_LIMIT` of the freshest other notes, freshest
        /// first.
        fresh: Vec<FreshPage>,
    },
    /// A filesystem error kept the home from being listed.
    Unavailable,
}

impl HomeShelf {
    /// The shelf of one home's live notes, listed recent first (ties by
    /// address). The root `MAP.md` is the MAP; any other note, nested MAPs
    /// included, is a page.
    pub(crate) fn from_rows(rows: Vec<NoteRow>) -> HomeShelf {
        let mut map = None;
        let mut fresh = Vec::new();
        for row in rows {
            if row.location.rel_path == MAP_FILE {
                map = Some(MapPage {
                    address: row.location.address,
                    body: row.body,
                });
            } else if fresh.len() < SHELF_FRESH_LIMIT {
                fresh.push(FreshPage {
                    title: page_title(&row.body),
                    updated_at: timestamp(row.meta.updated_at),
                    address: row.location.address,
                });
            }
        }
        HomeShelf::Loaded { map, fresh }
    }
}

/// Whether the store's identity has a home of `scope`: a host with no
/// session yet has no session notes (an empty shelf).
pub(super) fn has_home(store: &NoteStore, scope: Scope) -> bool {
    scope != Scope::Session || store.identity().session_id().is_some()
}

/// A home's shelf from a listing of its heads, with the listing's rows
/// (recent first) when the shelf is [`HomeShelf::Loaded`].
pub(super) fn list_home(
    store: &NoteStore,
    scope: Scope,
) -> Result<(HomeShelf, Vec<NoteHeader>), NoteError> {
    let listed = store.list_headers(&ListQuery {
        scope: Some(scope),
        ..ListQuery::default()
    })?;
    if !listed.homes_unavailable.is_empty() {
        return Ok((HomeShelf::Unavailable, Vec::new()));
    }
    match shelf_of(store, &listed.rows) {
        Ok(rows) => Ok((HomeShelf::from_rows(rows), listed.rows)),
        Err(error) if error.is_filesystem() => Ok((HomeShelf::Unavailable, Vec::new())),
        Err(error) => Err(error),
    }
}

/// The whole rows a shelf shows, in listing order: the root MAP and the
/// first [`SHELF_FRESH_LIMIT`] other notes that are still there and still
/// live when their bodies are read (a note renamed away or crumpled since
/// the listing gives its place to the next one).
fn shelf_of(store: &NoteStore, headers: &[NoteHeader]) -> Result<Vec<NoteRow>, NoteError> {
    let mut rows = Vec::with_capacity(SHELF_FRESH_LIMIT + 1);
    let mut fresh = 0;
    for header in headers {
        let is_map = header.location.rel_path == MAP_FILE;
        if !is_map && fresh == SHELF_FRESH_LIMIT {
            continue;
        }
        let Some(row) = store.peek_row(header)? else {
            continue;
        };
        if row.meta.is_crumpled() {
            continue;
        }
        fresh += usize::from(!is_map);
        rows.push(row);
    }
    Ok(rows)
}

/// The notice name of one of the caller's own homes (the store's
/// `homes_unavailable` labels).
pub(crate) fn home_label(scope: Scope) -> &'static str {
    match scope {
        Scope::Session => "session",
        Scope::Project => "@project",
        Scope::Human => "@human",
        Scope::Agent => "@self",
        Scope::Model => "@model",
    }
}

/// Epoch milliseconds as a timestamp; jiff's range (years -9999..=9999)
/// covers every parsed note time, anything beyond is pinned to its end.
fn timestamp(millis: i64) -> Timestamp {
    Timestamp::from_millisecond(millis).unwrap_or(if millis < 0 {
        Timestamp::MIN
    } else {
        Timestamp::MAX
    })
}

/// A page's title: its first markdown heading, else its first non-empty line,
/// cut to [`TITLE_MAX_CHARS`] code points plus `…`. Empty when the body has
/// no text. Headings inside fenced code blocks do not count.
pub(crate) fn page_title(body: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notes::NotesIdentity;

    /// A shelf reads the notes it shows and no header past its pages: the
    /// root MAP wherever it stands, and the first pages.
    #[test]
    fn a_shelf_reads_no_header_past_its_pages() {
        let temp = tempfile::tempdir().expect("a temp dir");
        let identity = NotesIdentity::new(temp.path(), "s1", "p-12345678", "a", "m").expect("id");
        let store = NoteStore::new(identity);
        for i in 0..=SHELF_FRESH_LIMIT {
            store
                .write(&format!("@self/p{i}.md"), "# P\n", None)
                .expect("a page");
        }
        let mut headers = store
            .list_headers(&ListQuery {
                scope: Some(Scope::Agent),
                ..ListQuery::default()
            })
            .expect("a listing")
            .rows;
        // The MAP, written after the listing, goes last.
        store
            .write("@self/MAP.md", "- map\n", None)
            .expect("the MAP");
        let mut map = headers[0].clone();
        map.location.rel_path = MAP_FILE.to_owned();
        // After the pages a shelf shows: one page more, then a header that
        // cannot be read.
        let mut unreadable = headers[0].clone();
        unreadable.location.rel_path = "../../outside.md".to_owned();
        assert!(store.peek_row(&unreadable).is_err());
        headers.push(unreadable);
        headers.push(map);
        let rows = shelf_of(&store, &headers).expect("the shelf's rows");
        let read: Vec<&str> = rows.iter().map(|r| r.location.rel_path.as_str()).collect();
        assert_eq!(read.len(), SHELF_FRESH_LIMIT + 1, "{read:?}");
        assert_eq!(read.last(), Some(&MAP_FILE));
    }

    /// A note time out of jiff's range is pinned to the end it is past.
    #[test]
    fn times_out_of_range_are_pinned_to_their_end() {
        assert_eq!(timestamp(i64::MIN), Timestamp::MIN);
        assert_eq!(timestamp(i64::MAX), Timestamp::MAX);
        assert_eq!(timestamp(0), Timestamp::UNIX_EPOCH);
    }
}
