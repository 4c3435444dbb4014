//! The line diff every host's `notes_update` receipt shows: Pi's display
//! diff (`generateDiffString` of its coding agent's edit tool), so a receipt
//! reads the same whichever host wrote it.
//!
//! Lines are numbered (old numbers for context and removals, new numbers for
//! additions, right-aligned to the widest line count); up to 4 context lines
//! stand on each side of a change and longer unchanged runs become one
//! ` <pad> ...` line. Pi diffs with jsdiff's Myers `diffLines`; this uses
//! `similar`'s Myers line diff, which can align runs of identical lines
//! differently in rare ties (the same caveat Pi's own windowed edit diff
//! states).

use similar::{ChangeTag, TextDiff};

/// Context lines shown around each change.
pub(super) const CONTEXT_LINES: usize = 4;

/// `generateDiffString(old, new).diff`.
pub(crate) fn line_diff(old: &str, new: &str) -> String {
    let width = line_count(old).max(line_count(new)).to_string().len();
    let parts = parts(old, new);
    let mut out = Output {
        lines: Vec::new(),
        old: 1,
        new: 1,
        width,
    };
    let mut last_was_change = false;
    for (index, (tag, lines)) in parts.iter().enumerate() {
        match tag {
            ChangeTag::Insert => {
                for line in lines {
                    out.push('+', out.new, line);
                    out.new += 1;
                }
                last_was_change = true;
            }
            ChangeTag::Delete => {
                for line in lines {
                    out.push('-', out.old, line);
                    out.old += 1;
                }
                last_was_change = true;
            }
            ChangeTag::Equal => {
                let next_is_change = parts
                    .get(index + 1)
                    .is_some_and(|(next, _)| *next != ChangeTag::Equal);
                let total = lines.len();
                match (last_was_change, next_is_change) {
                    (true, true) if total <= CONTEXT_LINES * 2 => out.context(lines),
                    (true, true) => {
                        out.context(&lines[..CONTEXT_LINES]);
                        out.skip(total - CONTEXT_LINES * 2);
                        out.context(&lines[total - CONTEXT_LINES..]);
                    }
                    (true, false) => {
                        let shown = total.min(CONTEXT_LINES);
                        out.context(&lines[..shown]);
                        out.skip(total - shown);
                    }
                    (false, true) => {
                        let skipped = total.saturating_sub(CONTEXT_LINES);
                        out.skip(skipped);
                        out.context(&lines[skipped..]);
                    }
                    (false, false) => {
                        out.old += total;
                        out.new += total;
                    }
                }
                last_was_change = false;
            }
        }
    }
    out.lines.join("\n")
}

/// The display lines and both line counters.
struct Output {
    lines: Vec<String>,
    old: usize,
    new: usize,
    width: usize,
}

impl Output {
    fn push(&mut self, sign: char, number: usize, line: &str) {
        let width = self.width;
        self.lines.push(format!("{sign}{number:>width$} {line}"));
    }

    fn context(&mut self, lines: &[&str]) {
        for line in lines {
            self.push(' ', self.old, line);
            self.old += 1;
            self.new += 1;
        }
    }

    /// A run of unchanged lines left out: one ` <pad> ...` line.
    fn skip(&mut self, count: usize) {
        if count > 0 {
            self.lines
                .push(format!(" {:width$} ...", "", width = self.width));
            self.old += count;
            self.new += count;
        }
    }
}

/// `text.split("\n").length`.
fn line_count(text: &str) -> usize {
    text.matches('\n').count() + 1
}

/// Runs of equal, removed and added lines (each without its newline), with
/// removals before additions, as jsdiff reports them.
fn parts<'t>(old: &'t str, new: &'t str) -> Vec<(ChangeTag, Vec<&'t str>)> {
    let diff = TextDiff::from_lines(old, new);
    let mut parts: Vec<(ChangeTag, Vec<&'t str>)> = Vec::new();
    for op in diff.ops() {
        for change in diff.iter_changes(op) {
            let line = change.value();
            let line = line.strip_suffix('\n').unwrap_or(line);
            match parts.last_mut() {
                Some((tag, lines)) if *tag == change.tag() => lines.push(line),
                _ => parts.push((change.tag(), vec![line])),
            }
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::line_diff;

    fn check(old: &str, new: &str, expect: &str) {
        assert_eq!(line_diff(old, new), expect);
    }

    #[test]
    fn numbered_changes_with_context() {
        check("a\nb\nc\n", "a\nB\nc\n", " 1 a\n-2 b\n+2 B\n 3 c");
        check("", "x\n", "+1 x");
        check("same\n", "same\n", "");
        let old: String = (1..=20).map(|n| format!("l{n}\n")).collect();
        let new = old.replace("l10\n", "ten\n");
        check(
            &old,
            &new,
            "    ...\n  6 l6\n  7 l7\n  8 l8\n  9 l9\n-10 l10\n+10 ten\n 11 l11\n 12 l12\n 13 l13\n 14 l14\n    ...",
        );
        let two = old.replace("l2\n", "two\n").replace("l19\n", "nineteen\n");
        check(
            &old,
            &two,
            "  1 l1\n- 2 l2\n+ 2 two\n  3 l3\n  4 l4\n  5 l5\n  6 l6\n    ...\n 15 l15\n 16 l16\n 17 l17\n 18 l18\n-19 l19\n+19 nineteen\n 20 l20",
        );
    }
}
