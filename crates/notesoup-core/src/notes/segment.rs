//! What one name in a note path may be: its length, the characters no
//! address may hold, and the names Git takes for its own directory. Below
//! addresses and identities, which both check names by these rules.

/// The longest file or directory name a note path may hold, in UTF-8 bytes
/// (the common filesystem limit, `NAME_MAX`). The final segment counts with
/// its `.md`.
pub(crate) const MAX_SEGMENT_BYTES: usize = 255;

/// Whether `c` may not appear in an address: C0 and C1 controls (with DEL),
/// the line and paragraph separators, and the bidirectional controls. Each
/// can forge rows or reorder text wherever an address is printed (a list, a
/// boot, a receipt).
pub(crate) fn is_forbidden_char(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{2028}' | '\u{2029}'
        | '\u{61c}' | '\u{200e}' | '\u{200f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}')
}

/// `text` with every [`is_forbidden_char`] written as a `\u{…}` escape, for
/// printing a name found on disk that an address could not have named.
/// Borrowed when nothing needs escaping (the common case).
pub(crate) fn escape_forbidden(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(is_forbidden_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_forbidden_char(c) {
            escaped.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            escaped.push(c);
        }
    }
    std::borrow::Cow::Owned(escaped)
}

/// Whether `segment` names Git's own directory on some system Git runs on,
/// as Git itself decides when it refuses a path (`verify_path`, with
/// `is_ntfs_dotgit` and `is_hfs_dotgit`; gix refuses the same): `.git` in
/// any case; `.git` followed by dots or spaces, or by an NTFS stream name
/// (`.git.`, `.git `, `.git::$INDEX_ALLOCATION`), which NTFS opens as
/// `.git`; the NTFS short name `git~1`, followed likewise; and `.git` with
/// code points HFS+ ignores (`.g\u{200c}it`). The audit repository lives at
/// the root and the audit skips `.git` below it, so a note there would
/// change without a trace; a look-alike makes the audit fail outright.
pub(crate) fn is_git_segment(segment: &str) -> bool {
    is_ntfs_dot_git(segment) || is_hfs_dot_git(segment)
}

/// `.git` or `git~1` (any case), then nothing but dots and spaces, up to
/// the end or an NTFS stream separator (`:`).
fn is_ntfs_dot_git(segment: &str) -> bool {
    let bytes = segment.as_bytes();
    let rest = if bytes
        .get(..4)
        .is_some_and(|head| head.eq_ignore_ascii_case(b".git"))
    {
        &bytes[4..]
    } else if bytes
        .get(..5)
        .is_some_and(|head| head.eq_ignore_ascii_case(b"git~1"))
    {
        &bytes[5..]
    } else {
        return false;
    };
    rest.iter()
        .find(|&&b| b != b'.' && b != b' ')
        .is_none_or(|&b| b == b':')
}

/// `.git` (any case) once the code points HFS+ ignores in names are
/// dropped.
fn is_hfs_dot_git(segment: &str) -> bool {
    let mut chars = segment.chars().filter(|&c| !is_hfs_ignorable(c));
    chars.next() == Some('.')
        && "git"
            .chars()
            .all(|want| chars.next().is_some_and(|c| c.eq_ignore_ascii_case(&want)))
        && chars.next().is_none()
}

/// The code points HFS+ ignores when it compares names (Git's list): the
/// zero-width joiners, the directional marks and embeddings, the deprecated
/// format characters and the byte order mark.
pub(crate) fn is_hfs_ignorable(c: char) -> bool {
    matches!(c, '\u{200c}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{206a}'..='\u{206f}' | '\u{feff}')
}
