//! Read windows over a text, in Unicode code points, bounded by the response
//! budget, with continuation footers that are never part of the text itself.

use serde::{Deserialize, Serialize};
use serde_json::json;
use typeshare::typeshare;

use super::outcome::{Refusal, RefusalCode, ToolOutcome};
use super::output::{ToolData, ToolOutput, fits, pack};
use super::{DEFAULT_READ_WINDOW_CHARS, MAX_READ_WINDOW_CHARS, TOOL_OUTPUT_MAX_BYTES};

/// Why a read window stopped before the end of its text.
#[typeshare]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum LimitedBy {
    /// The requested `limit_chars`.
    Limit,
    /// The response byte budget.
    Bytes,
}

/// One window of a text: the slice, verbatim, and where it sits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TextWindow {
    /// The delivered slice, with nothing inserted.
    pub text: String,
    /// Resolved code-point offset the slice starts at.
    pub offset_chars: u32,
    /// Code-point length of the whole text.
    pub total_chars: u32,
    /// Where the next window starts; `None` only at the true end.
    pub next_offset_chars: Option<u32>,
    /// Why the slice stopped early; `None` when nothing was withheld.
    pub limited_by: Option<LimitedBy>,
}

/// Reads the window `offset_chars`/`limit_chars` asks for and builds the
/// operation's data around it with `make`.
///
/// A negative offset counts back from the end (`max(0, total + offset)`); an
/// offset past the end is `invalid_offset`; an offset exactly at the end gives
/// an empty read. The full requested range is tried first; failing that, the
/// longest code-point prefix whose data fits the budget is delivered. If not
/// even one character fits: `output_too_large`.
#[cfg(test)]
pub(crate) fn read_window<T: ToolData>(
    source: &str,
    offset_chars: Option<i64>,
    limit_chars: Option<u32>,
    make: impl Fn(TextWindow) -> T,
) -> ToolOutcome<T> {
    window_search(source, offset_chars, limit_chars, make, |data| {
        Ok(if fits(&data) { Ok(data) } else { Err(data) })
    })
}

/// [`read_window`], packaged: the window that is delivered is rendered,
/// serialized and measured once, by [`pack`].
pub(crate) fn read_window_packed<T: ToolData>(
    source: &str,
    offset_chars: Option<i64>,
    limit_chars: Option<u32>,
    make: impl Fn(TextWindow) -> T,
) -> ToolOutcome<ToolOutput> {
    window_search(source, offset_chars, limit_chars, make, |data| {
        Ok(pack(&data)?.ok_or(data))
    })
}

/// The window search behind [`read_window`]: `take` turns a candidate into
/// the result when it fits (`Ok(Err(candidate))` when it does not); the
/// binary search in between only measures.
fn window_search<T: ToolData, R>(
    source: &str,
    offset_chars: Option<i64>,
    limit_chars: Option<u32>,
    make: impl Fn(TextWindow) -> T,
    take: impl Fn(T) -> ToolOutcome<Result<R, T>>,
) -> ToolOutcome<R> {
    let limit = match limit_chars {
        None => DEFAULT_READ_WINDOW_CHARS,
        Some(limit) if (1..=MAX_READ_WINDOW_CHARS).contains(&(limit as usize)) => limit as usize,
        Some(limit) => {
            return Err(Refusal::new(
                RefusalCode::InvalidArguments,
                format!("limit_chars must be between 1 and {MAX_READ_WINDOW_CHARS} (got {limit})"),
            ));
        }
    };
    let total = source.chars().count();
    let start = resolve_offset(offset_chars.unwrap_or(0), total)?;
    let range = limit.min(total - start);
    let bounds = char_bounds(source, start, range);
    let window = |delivered: usize| {
        let end = start + delivered;
        let withheld = end < total;
        TextWindow {
            text: source[bounds[0]..bounds[delivered]].to_owned(),
            offset_chars: to_u32(start),
            total_chars: to_u32(total),
            next_offset_chars: withheld.then(|| to_u32(end)),
            limited_by: match (withheld, delivered == range) {
                (false, _) => None,
                (true, true) => Some(LimitedBy::Limit),
                (true, false) => Some(LimitedBy::Bytes),
            },
        }
    };
    // The full range first: at the end of the text its footer disappears, so it
    // can fit where a shorter window would not. More code points than budget
    // bytes can never fit, so such a range goes straight to the search.
    if range <= TOOL_OUTPUT_MAX_BYTES
        && let Ok(result) = take(make(window(range)))?
    {
        return Ok(result);
    }
    let (mut low, mut high) = (0, range.min(TOOL_OUTPUT_MAX_BYTES));
    if high > 0 && !fits(&make(window(1))) {
        // Not even one code point fits: no longer window will.
        high = 0;
    }
    while low < high {
        let mid = (low + high).div_ceil(2);
        if fits(&make(window(mid))) {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    if low == 0 {
        return Err(Refusal::new(
            RefusalCode::OutputTooLarge,
            "The response metadata leaves no room for a read window that makes progress.",
        )
        .with_details(json!({
            "total_chars": total,
            "offset_chars": start,
            "budget_bytes": TOOL_OUTPUT_MAX_BYTES,
        })));
    }
    take(make(window(low)))?.map_err(|_| {
        Refusal::new(
            RefusalCode::OutputTooLarge,
            "The read window does not fit the response budget.",
        )
    })
}

/// Resolves a requested offset against a text of `total` code points.
fn resolve_offset(requested: i64, total: usize) -> ToolOutcome<usize> {
    if requested < 0 {
        let back = usize::try_from(requested.unsigned_abs()).unwrap_or(usize::MAX);
        return Ok(total.saturating_sub(back));
    }
    match usize::try_from(requested) {
        Ok(start) if start <= total => Ok(start),
        _ => Err(Refusal::new(
            RefusalCode::InvalidOffset,
            format!(
                "offset_chars {requested} is past the end: the text has {total} chars; the largest legal offset is {total} (an empty read at the end)"
            ),
        )
        .with_details(json!({ "offset_chars": requested, "total_chars": total }))),
    }
}

/// Byte offsets of code points `start..=start + count` of `source`.
fn char_bounds(source: &str, start: usize, count: usize) -> Vec<usize> {
    let mut bounds = Vec::with_capacity(count + 1);
    bounds.extend(
        source
            .char_indices()
            .map(|(byte, _)| byte)
            .chain(std::iter::once(source.len()))
            .skip(start)
            .take(count + 1),
    );
    bounds
}

/// The window text followed by its continuation footer, if any:
/// `[N more characters. Use offset_chars=X to continue.]` when the limit
/// stopped it, `[Showing chars [a, b) of T (32KB limit). Use offset_chars=b to
/// continue.]` when the byte budget did, nothing at the true end.
pub(crate) fn render_window(
    out: &mut String,
    text: &str,
    offset_chars: u32,
    total_chars: u32,
    next_offset_chars: Option<u32>,
    limited_by: Option<LimitedBy>,
) {
    use std::fmt::Write;

    out.push_str(text);
    let Some(next) = next_offset_chars else {
        return;
    };
    // Writing to a String cannot fail.
    let _ = match limited_by {
        Some(LimitedBy::Bytes) => write!(
            out,
            "\n\n[Showing chars [{offset_chars}, {next}) of {total_chars} ({}KB limit). Use offset_chars={next} to continue.]",
            TOOL_OUTPUT_MAX_BYTES / 1024
        ),
        _ => write!(
            out,
            "\n\n[{} more characters. Use offset_chars={next} to continue.]",
            total_chars.saturating_sub(next)
        ),
    };
}

/// The longest code-point prefix of `text` that `fits` accepts (possibly empty).
/// `fits` must be monotone: if a prefix fits, every shorter one does.
pub(crate) fn prefix_fit(text: &str, mut fits: impl FnMut(&str) -> bool) -> &str {
    if fits(text) {
        return text;
    }
    // Binary search over byte lengths, testing only code-point boundaries:
    // `low` always fits, nothing longer than `high` does.
    let (mut low, mut high) = (0, text.len().saturating_sub(1));
    while low < high {
        let mid = (low + high).div_ceil(2);
        let mut boundary = mid;
        while !text.is_char_boundary(boundary) {
            boundary += 1;
        }
        if boundary > high {
            high = mid - 1;
        } else if fits(&text[..boundary]) {
            low = boundary;
        } else {
            high = boundary - 1;
        }
    }
    &text[..low]
}

/// Converts a count to the `u32` the wire types carry (texts here are far
/// below 4 G code points; a larger one saturates rather than wraps).
pub(crate) fn to_u32(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A window's data that counts how often it is rendered.
    #[derive(Serialize)]
    struct Counted<'a> {
        text: String,
        #[serde(skip)]
        renders: &'a std::cell::Cell<u32>,
    }

    impl ToolData for Counted<'_> {
        fn render(&self) -> String {
            self.renders.set(self.renders.get() + 1);
            self.text.clone()
        }
    }

    #[test]
    fn a_packed_window_that_fits_is_rendered_and_measured_once() {
        let renders = std::cell::Cell::new(0);
        let output = read_window_packed("a short note", None, None, |window| Counted {
            text: window.text,
            renders: &renders,
        })
        .expect("fits");
        assert_eq!(output.text, "a short note");
        assert_eq!(output.json, r#"{"text":"a short note"}"#);
        assert_eq!(renders.get(), 1, "one render, one size check");
    }

    /// Metadata that leaves no room for a single code point is refused
    /// after one window of the whole range and one of a single code point:
    /// no longer window is searched. At the end of the text, where the
    /// window is empty, it is refused too.
    #[test]
    fn a_window_with_no_room_is_refused_without_a_search() {
        let header = "h".repeat(TOOL_OUTPUT_MAX_BYTES);
        let windows = std::cell::Cell::new(0);
        let renders = std::cell::Cell::new(0);
        let make = |window: TextWindow| {
            windows.set(windows.get() + 1);
            Counted {
                text: format!("{header}{}", window.text),
                renders: &renders,
            }
        };
        let text = "x".repeat(1_000);
        let refused = read_window(&text, None, None, make).err().expect("refused");
        assert_eq!(refused.code(), RefusalCode::OutputTooLarge);
        assert_eq!(windows.get(), 2, "the whole range, then one code point");
        let at_end = read_window(&text, Some(1_000), None, make)
            .err()
            .expect("refused");
        assert_eq!(at_end.code(), RefusalCode::OutputTooLarge);
    }

    #[test]
    fn prefix_fit_keeps_whole_code_points() {
        let text = "aé😀b";
        for budget in 0..=text.len() {
            let kept = prefix_fit(text, |prefix| prefix.len() <= budget);
            assert!(kept.len() <= budget);
            let next = text[kept.len()..].chars().next().map_or(0, char::len_utf8);
            assert!(kept.len() == text.len() || kept.len() + next > budget);
        }
    }
}
