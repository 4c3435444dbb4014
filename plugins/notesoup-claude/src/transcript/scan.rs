//! The backward scans hooks run on the hot path: the last main-thread usage
//! of the live window, and the boot notesoup injected into it.

use std::fs::{File, Metadata};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use super::fnv::Fnv;
use super::row::{Row, TokenUsage};
use super::tail::{MAX_LINE_BYTES, Needles, ReverseLines};
use crate::files::{is_absent, open_regular};
use crate::window::{BootIds, boot_ids};

/// The last model reply of the live window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastReply {
    /// Its usage: the size of the next request is `usage.context_tokens()`.
    pub usage: TokenUsage,
    /// The model that answered.
    pub model: Option<String>,
    /// The model id the user selected (it may carry the `[1m]` suffix).
    pub requested_model: Option<String>,
}

const BOUNDARY: &[u8] = b"compact_boundary";

/// The usage of the last main-thread model reply after the last compact
/// boundary, read from the end of the transcript. Rows sharing a message id
/// resolve to the last one written, which is the first one met backwards;
/// synthetic and sidechain rows are skipped. `None` when the live window has
/// no reply yet, or when there is no regular file at `path` (a FIFO or a
/// directory reads as no transcript, and never blocks).
pub fn last_reply(path: &Path) -> io::Result<Option<LastReply>> {
    let mut lines = match ReverseLines::open(path) {
        Ok(lines) => lines,
        Err(err) if is_absent(&err) => return Ok(None),
        Err(err) => return Err(err),
    };
    let needles = Needles::new(&[BOUNDARY, b"\"assistant\""]);
    while let Some(line) = lines.next_line_containing(&needles)? {
        let Some(row) = Row::parse(&line) else {
            continue;
        };
        if row.is_compact_boundary() && !row.is_sidechain {
            return Ok(None);
        }
        if !row.is_model_reply() {
            continue;
        }
        let Some(message) = row.message else { continue };
        let Some(usage) = message.usage else { continue };
        return Ok(Some(LastReply {
            usage,
            model: message.model,
            requested_model: row.requested_model,
        }));
    }
    Ok(None)
}

/// How much of a transcript's end [`reply_written`] looks at.
const REPLY_TAIL_BYTES: u64 = 256 * 1024;

/// Whether the transcript's last 256 KiB hold `reply`, the text Claude Code
/// hands a Stop hook as `last_assistant_message`, as its JSON string (its
/// last 120 characters, escaped as JSON escapes them). Claude Code writes
/// the transcript after the hook may already run; a Stop hook waits for
/// this before it reads the reply's usage. A missing transcript is `false`.
pub fn reply_written(path: &Path, reply: &str) -> io::Result<bool> {
    let reply = reply.trim_end();
    let start = reply.char_indices().rev().nth(119).map_or(0, |(at, _)| at);
    let Ok(quoted) = serde_json::to_string(&reply[start..]) else {
        return Ok(false);
    };
    let needle = &quoted.as_bytes()[1..quoted.len() - 1];
    if needle.is_empty() {
        return Ok(true);
    }
    let file = match open_regular(path) {
        Ok(file) => file,
        Err(err) if is_absent(&err) => return Ok(false),
        Err(err) => return Err(err),
    };
    let len = file.metadata()?.len();
    let from = len.saturating_sub(REPLY_TAIL_BYTES);
    let mut tail = vec![0; usize::try_from(len - from).unwrap_or(0)];
    file.read_exact_at(&mut tail, from)?;
    Ok(memchr::memmem::find(&tail, needle).is_some())
}

/// What a transcript says about notesoup's windows, for a session whose
/// state record is missing (resume, fork) and for the live-window check.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BootScan {
    /// The newest notesoup boot in the transcript, if any.
    pub last_boot: Option<BootIds>,
    /// Whether that boot lies in the live window (after the last boundary).
    pub in_live_window: bool,
    /// Compact boundaries written after that boot (or in the whole file
    /// when there is no boot).
    pub boundaries_after: u64,
}

/// What one transcript row means to a [`BootScan`].
enum Mark {
    Boundary,
    Boot(BootIds),
}

/// The rows a boot scan looks at hold one of these.
fn boot_needles() -> Needles {
    Needles::new(&[BOUNDARY, b"hook_additional_context"])
}

/// What `line` means to a boot scan: a main-thread compact boundary, a
/// SessionStart context holding a notesoup boot, or nothing.
fn mark_of(line: &[u8]) -> Option<Mark> {
    let row = Row::parse(line)?;
    if row.is_sidechain {
        return None;
    }
    if row.is_compact_boundary() {
        return Some(Mark::Boundary);
    }
    let (event, texts) = row.hook_context()?;
    if event != "SessionStart" {
        return None;
    }
    texts.iter().find_map(|text| boot_ids(text)).map(Mark::Boot)
}

impl BootScan {
    /// The scan after one more row, read forwards.
    fn then(&mut self, mark: Mark) {
        match mark {
            Mark::Boundary => {
                self.boundaries_after += 1;
                self.in_live_window = false;
            }
            Mark::Boot(ids) => {
                *self = BootScan {
                    last_boot: Some(ids),
                    in_live_window: true,
                    boundaries_after: 0,
                };
            }
        }
    }

    /// The scan of some bytes followed by `later`, the backward scan of the
    /// bytes after them.
    fn followed_by(self, later: BootScan) -> BootScan {
        if later.last_boot.is_some() {
            return later;
        }
        BootScan {
            in_live_window: self.in_live_window && later.boundaries_after == 0,
            boundaries_after: self.boundaries_after + later.boundaries_after,
            last_boot: self.last_boot,
        }
    }
}

/// Scans backwards for the newest SessionStart context that carries a
/// notesoup boot (its `Current context window id: claude:…` line).
pub fn boot_scan(path: &Path) -> io::Result<BootScan> {
    match ReverseLines::open(path) {
        Ok(lines) => scan_back(lines),
        Err(err) if is_absent(&err) => Ok(BootScan::default()),
        Err(err) => Err(err),
    }
}

/// [`boot_scan`] of the lines `lines` yields: it stops at the newest boot.
fn scan_back(mut lines: ReverseLines) -> io::Result<BootScan> {
    let mut boundaries_after = 0;
    let needles = boot_needles();
    while let Some(line) = lines.next_line_containing(&needles)? {
        match mark_of(&line) {
            Some(Mark::Boundary) => boundaries_after += 1,
            Some(Mark::Boot(ids)) => {
                return Ok(BootScan {
                    last_boot: Some(ids),
                    in_live_window: boundaries_after == 0,
                    boundaries_after,
                });
            }
            None => {}
        }
    }
    Ok(BootScan {
        boundaries_after,
        ..BootScan::default()
    })
}

/// A [`BootScan`] of a transcript's first bytes, kept between hook runs so
/// the next scan reads only what Claude Code appended since (it only ever
/// appends). The scan covers whole lines: a last line without its newline
/// is read each time until it is finished.
///
/// A kept scan is used only for the same file (device and inode) when the
/// file still holds the bytes it was taken over: its length reaches the
/// scan's end, and the first and the last [`PROBE_BYTES`] before that end
/// hash as they did. Anything else (a replaced, truncated or rewritten
/// transcript) is scanned again from its end.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KeptScan {
    device: u64,
    inode: u64,
    /// The scan covers the bytes before this offset, which ends a line.
    end: u64,
    head_hash: u64,
    tail_hash: u64,
    /// The scan of the bytes before `end`.
    scan: BootScan,
}

/// How many bytes at the start of a kept scan and before its end are
/// hashed to recognise the file.
pub const PROBE_BYTES: u64 = 4096;

impl KeptScan {
    /// Whether the file still holds the bytes this scan was taken over.
    fn holds(&self, file: &File, meta: &Metadata) -> io::Result<bool> {
        use std::os::unix::fs::MetadataExt;
        if (meta.dev(), meta.ino()) != (self.device, self.inode) || meta.len() < self.end {
            return Ok(false);
        }
        let (head, tail) = probes(file, self.end)?;
        Ok((head, tail) == (self.head_hash, self.tail_hash))
    }
}

/// The hashes of the first and the last [`PROBE_BYTES`] before `end`.
fn probes(file: &File, end: u64) -> io::Result<(u64, u64)> {
    let hash = |at: u64| -> io::Result<u64> {
        let mut bytes = vec![0; usize::try_from(PROBE_BYTES.min(end - at)).unwrap_or(0)];
        file.read_exact_at(&mut bytes, at)?;
        Ok(Fnv::of(&bytes))
    };
    Ok((hash(0)?, hash(end.saturating_sub(PROBE_BYTES))?))
}

/// [`boot_scan`] of `path`, reading only the bytes after `kept` when the
/// file still holds the bytes `kept` was taken over, and the scan to keep
/// for the next run (`None` when there is no transcript).
pub fn boot_scan_kept(
    path: &Path,
    kept: Option<&KeptScan>,
) -> io::Result<(BootScan, Option<KeptScan>)> {
    use std::os::unix::fs::MetadataExt;
    let file = match open_regular(path) {
        Ok(file) => file,
        Err(err) if is_absent(&err) => return Ok((BootScan::default(), None)),
        Err(err) => return Err(err),
    };
    let meta = file.metadata()?;
    let kept = match kept {
        Some(kept) if kept.holds(&file, &meta)? => Some(kept),
        _ => None,
    };
    let floor = kept.map_or(0, |kept| kept.end);
    let end = line_end(&file, floor, meta.len())?;
    let before = kept.map(|kept| kept.scan.clone()).unwrap_or_default();
    let whole_lines = before.followed_by(scan_range(&file, floor, end, SPLIT_BYTES)?);
    let mut scan = whole_lines.clone();
    if let Some(mark) = torn_line(&file, end, meta.len())?
        .as_deref()
        .and_then(mark_of)
    {
        scan.then(mark);
    }
    // Nothing new: the probes are the kept ones.
    let (head_hash, tail_hash) = match kept {
        Some(kept) if kept.end == end => (kept.head_hash, kept.tail_hash),
        _ => probes(&file, end)?,
    };
    let next = KeptScan {
        device: meta.dev(),
        inode: meta.ino(),
        end,
        head_hash,
        tail_hash,
        scan: whole_lines,
    };
    Ok((scan, Some(next)))
}

/// The most bytes a scan reads on one thread. A cold `resume` of a session
/// whose transcript holds no boot reads the whole file back; reading it is
/// all that takes time (the kernel's copy into the read buffer, then the
/// needle search), so a longer range is read by two threads at once.
const SPLIT_BYTES: u64 = 4 << 20;

/// The backward scan of `file[floor..end]`, both ends at line starts.
/// Longer than `split`, it is cut at a line end near its middle (see
/// [`cut`]): a second thread scans the earlier part (in pieces of `split`,
/// newest first) while this one scans the later part, and the earlier
/// part's scan is dropped unread when the later part holds a boot.
fn scan_range(file: &File, floor: u64, end: u64, split: u64) -> io::Result<BootScan> {
    let Some(mid) = cut(file, floor, end, split)? else {
        return scan_back(lines_of(file, floor, end)?);
    };
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let Ok(earlier) = std::thread::Builder::new()
            .spawn_scoped(scope, || scan_pieces(file, floor, mid, split, &done))
        else {
            // No second thread to be had: this one reads it all.
            return scan_back(lines_of(file, floor, end)?);
        };
        let later = lines_of(file, mid, end).and_then(scan_back);
        match later {
            Ok(later) if later.last_boot.is_none() => {
                let earlier = earlier
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
                Ok(earlier.followed_by(later))
            }
            // A boot, or an error: the earlier part no longer matters.
            later => {
                done.store(true, Ordering::Relaxed);
                later
            }
        }
    })
}

/// Where [`scan_range`] cuts `file[floor..end]` in two: after the last
/// newline before its middle, when it is longer than `split` bytes and
/// its first half holds a newline; `None` when one thread reads it all.
fn cut(file: &File, floor: u64, end: u64, split: u64) -> io::Result<Option<u64>> {
    if end - floor <= split {
        return Ok(None);
    }
    let mid = line_end(file, floor, floor + (end - floor) / 2)?;
    Ok((mid > floor).then_some(mid))
}

/// The backward scan of `file[floor..end]` in pieces of about `piece`
/// bytes cut at line ends, the newest first, until one holds a boot or
/// `stop` is set (the caller then drops what it returns).
fn scan_pieces(
    file: &File,
    floor: u64,
    mut end: u64,
    piece: u64,
    stop: &AtomicBool,
) -> io::Result<BootScan> {
    let mut later = BootScan::default();
    while end > floor && !stop.load(Ordering::Relaxed) {
        // At `floor` when fewer than `piece` bytes are left.
        let start = line_end(file, floor, end.saturating_sub(piece.max(1)))?;
        later = scan_back(lines_of(file, start, end)?)?.followed_by(later);
        if later.last_boot.is_some() {
            break;
        }
        end = start;
    }
    Ok(later)
}

/// The lines of `file[floor..end]`, last first.
fn lines_of(file: &File, floor: u64, end: u64) -> io::Result<ReverseLines> {
    Ok(ReverseLines::of_file(file.try_clone()?, MAX_LINE_BYTES)?.between(floor, end))
}

/// Where the last whole line of `file[floor..len]` ends: after its last
/// newline, or `floor` when it has none.
fn line_end(file: &File, floor: u64, len: u64) -> io::Result<u64> {
    const CHUNK: u64 = 64 * 1024;
    let mut chunk = Vec::new();
    let mut end = len;
    while end > floor {
        let start = end.saturating_sub(CHUNK).max(floor);
        chunk.resize(usize::try_from(end - start).unwrap_or(0), 0);
        file.read_exact_at(&mut chunk, start)?;
        if let Some(at) = memchr::memrchr(b'\n', &chunk) {
            return Ok(start + at as u64 + 1);
        }
        end = start;
    }
    Ok(floor)
}

/// The last line of a file when it has no newline yet (`file[end..len]`),
/// unless it is empty or longer than a line a scan reads.
fn torn_line(file: &File, end: u64, len: u64) -> io::Result<Option<Vec<u8>>> {
    let size = len - end;
    if size == 0 || size > MAX_LINE_BYTES as u64 {
        return Ok(None);
    }
    let mut line = vec![0; usize::try_from(size).unwrap_or(0)];
    file.read_exact_at(&mut line, end)?;
    Ok(Some(line))
}

/// The Claude session id a transcript's rows name (the first one that has
/// one), for a transcript read without its session record.
pub fn session_id_of(path: &Path) -> io::Result<Option<String>> {
    #[derive(serde::Deserialize)]
    struct Named {
        #[serde(rename = "sessionId")]
        session_id: Option<String>,
    }
    let file = std::io::BufReader::new(open_regular(path)?);
    for line in std::io::BufRead::split(file, b'\n') {
        if let Ok(Named {
            session_id: Some(id),
        }) = serde_json::from_slice(&line?)
        {
            return Ok(Some(id));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(lines: &[&str]) -> tempfile::NamedTempFile {
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), lines.join("\n")).unwrap();
        file
    }

    const BOOT: &str = r#"{"type":"attachment","uuid":"b","isSidechain":false,"attachment":{"type":"hook_additional_context","hookEvent":"SessionStart","content":["<context_window>\nAgent name: claude (brain: claude)\nFirst context window id: claude:s:1\nCurrent context window id: claude:s:2\n</context_window>"]}}"#;
    const BOUNDARY: &str = r#"{"type":"system","subtype":"compact_boundary","uuid":"c","parentUuid":null,"isSidechain":false}"#;

    fn reply(id: &str, input: u64, model: &str, sidechain: bool) -> String {
        format!(
            r#"{{"type":"assistant","uuid":"{id}{input}","isSidechain":{sidechain},"requestedModel":"{model}[1m]","message":{{"id":"{id}","model":"{model}","usage":{{"input_tokens":{input},"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}}}}"#
        )
    }

    #[test]
    fn last_reply_is_the_newest_main_thread_reply_of_the_live_window() {
        let a = reply("m1", 100, "claude-x", false);
        let b = reply("m2", 200, "claude-x", false);
        let side = reply("m3", 999, "claude-x", true);
        let synthetic = r#"{"type":"assistant","uuid":"z","message":{"id":"m4","model":"<synthetic>","usage":{"input_tokens":0}}}"#;
        let f = file(&[&a, &b, &side, synthetic, "{torn"]);
        let got = last_reply(f.path()).unwrap().unwrap();
        assert_eq!(got.usage.context_tokens(), 201);
        assert_eq!(got.requested_model.as_deref(), Some("claude-x[1m]"));

        let after_boundary = file(&[&a, BOUNDARY, BOOT]);
        assert_eq!(last_reply(after_boundary.path()).unwrap(), None);
        assert_eq!(last_reply(Path::new("/nonexistent/t.jsonl")).unwrap(), None);
    }

    #[test]
    fn rows_sharing_a_message_id_resolve_to_the_last_one() {
        let first = reply("m1", 100, "claude-x", false);
        let last = reply("m1", 150, "claude-x", false);
        let f = file(&[&first, &last]);
        assert_eq!(
            last_reply(f.path()).unwrap().unwrap().usage.input_tokens,
            150
        );
    }

    /// A Stop hook's reply is written once the end of its JSON string
    /// (trailing whitespace aside) stands in the transcript's last 256 KiB.
    #[test]
    fn a_reply_is_written_when_its_end_is_in_the_transcript_s_tail() {
        let row = |text: &str| {
            format!(
                r#"{{"type":"assistant","message":{{"content":[{{"type":"text","text":{}}}]}}}}"#,
                serde_json::to_string(text).unwrap()
            )
        };
        let pad = |bytes: usize| format!(r#"{{"type":"user","pad":"{}"}}"#, "x".repeat(bytes));
        // Longer than the 120 characters looked for, with characters JSON
        // escapes, and whitespace after its end.
        let reply = format!(
            "{}\n{}\"Quoted\" at the end.\n\n",
            "start ".repeat(40),
            "word ".repeat(30)
        );
        let written = file(&[&row(&reply), &pad(200 << 10), ""]);
        assert!(reply_written(written.path(), &reply).unwrap());
        assert!(reply_written(written.path(), reply.trim_end()).unwrap());
        // Only its end is looked for.
        let other_start = format!("{}{}", "other ".repeat(40), &reply[240..]);
        assert!(reply_written(written.path(), &other_start).unwrap());
        assert!(!reply_written(written.path(), "Another reply.").unwrap());
        assert!(
            reply_written(written.path(), " \n").unwrap(),
            "nothing to wait for"
        );
        let too_early = file(&[&row(&reply), &pad(260 << 10), ""]);
        assert!(!reply_written(too_early.path(), &reply).unwrap());
    }

    /// A transcript names its session in the first row that has one; rows
    /// before it without one, or that do not parse, are passed over.
    #[test]
    fn a_transcript_s_session_is_the_first_one_a_row_names() {
        let named = file(&[
            "{torn",
            r#"{"type":"summary","sessionId":null}"#,
            r#"{"type":"user","sessionId":"s-1"}"#,
            r#"{"type":"user","sessionId":"s-2"}"#,
        ]);
        assert_eq!(session_id_of(named.path()).unwrap().as_deref(), Some("s-1"));
        let unnamed = file(&[r#"{"type":"summary"}"#, ""]);
        assert_eq!(session_id_of(unnamed.path()).unwrap(), None);
    }

    /// A boot of window `ordinal`, so that a test sees which boot a scan
    /// found.
    fn boot(ordinal: u64) -> String {
        BOOT.replace("claude:s:2", &format!("claude:s:{ordinal}"))
    }

    proptest::proptest! {
        /// A range scanned by two threads, the earlier part in pieces, is
        /// scanned as one thread scans it whole, from any line start on.
        #[test]
        fn a_scan_cut_across_threads_is_the_scan_of_the_whole(
            rows in proptest::collection::vec(0u8..5, 0..80),
            split in 1u64..600,
            from in 0usize..80,
        ) {
            let lines: Vec<String> = rows
                .iter()
                .enumerate()
                .map(|(at, row)| match row {
                    0 => reply("m", at as u64, "c", false),
                    1 => BOUNDARY.to_owned(),
                    2 => boot(at as u64),
                    // A boundary of a subagent's: not one of the session's.
                    3 => BOUNDARY.replace(r#""isSidechain":false"#, r#""isSidechain":true"#),
                    _ => format!(r#"{{"type":"user","pad":"{}"}}"#, "x".repeat(at * 7)),
                })
                .collect();
            let content = lines.iter().map(|line| format!("{line}\n")).collect::<String>();
            let f = tempfile::NamedTempFile::new().unwrap();
            std::fs::write(f.path(), &content).unwrap();
            let file = File::open(f.path()).unwrap();
            let floor = lines.iter().take(from).map(|line| line.len() as u64 + 1).sum::<u64>();
            let end = content.len() as u64;
            let whole = scan_back(lines_of(&file, floor, end).unwrap()).unwrap();
            proptest::prop_assert_eq!(scan_range(&file, floor, end, split).unwrap(), whole);
        }
    }

    #[test]
    fn a_range_is_cut_after_the_last_newline_before_its_middle() {
        // Lines of 10 bytes with their newlines: ends at 10, 20, ... 60.
        let f = file(&["123456789"; 7]);
        let file = File::open(f.path()).unwrap();
        let cut = |floor, end, split| cut(&file, floor, end, split).unwrap();
        assert_eq!(cut(0, 60, 60), None, "no longer than the split");
        assert_eq!(cut(0, 60, 59), Some(30));
        assert_eq!(cut(0, 50, 10), Some(20), "the middle, 25, is in a line");
        assert_eq!(cut(20, 60, 40), None, "40 bytes from 20 on");
        assert_eq!(cut(20, 60, 10), Some(40));
        assert_eq!(cut(20, 50, 0), Some(30));
        // The first half (bytes 0 to 14) ends no line but the first.
        assert_eq!(cut(0, 30, 0), Some(10));
        assert_eq!(cut(0, 20, 0), Some(10));
        assert_eq!(cut(0, 19, 0), None, "no newline before the middle");
    }

    #[test]
    fn pieces_stop_when_told() {
        let f = file(&[BOUNDARY, BOUNDARY, BOUNDARY, ""]);
        let file = File::open(f.path()).unwrap();
        let end = file.metadata().unwrap().len();
        let scan = |stop: bool| scan_pieces(&file, 0, end, 10, &AtomicBool::new(stop)).unwrap();
        assert_eq!(scan(false).boundaries_after, 3);
        assert_eq!(scan(true), BootScan::default());
    }

    #[test]
    fn boot_scan_finds_the_live_boot_and_counts_boundaries() {
        let live = file(&[BOUNDARY, BOOT, &reply("m", 1, "c", false)]);
        let scan = boot_scan(live.path()).unwrap();
        assert!(scan.in_live_window);
        assert_eq!(scan.last_boot.unwrap().current.ordinal, 2);

        let stale = file(&[BOOT, BOUNDARY, BOUNDARY]);
        let scan = boot_scan(stale.path()).unwrap();
        assert!(!scan.in_live_window);
        assert_eq!(scan.boundaries_after, 2);

        let none = file(&[BOUNDARY]);
        assert_eq!(
            boot_scan(none.path()).unwrap(),
            BootScan {
                last_boot: None,
                in_live_window: false,
                boundaries_after: 1
            }
        );
    }
}
