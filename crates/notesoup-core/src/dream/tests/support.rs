//! Shared helpers of the dream tests: temp homes, tree hashes, the `git`
//! command-line tool (tests only) and output rendering.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use notesoup_core::dream::{DreamOutput, Stream};

/// Writes `content` to `home/relative`, creating parents.
pub fn put(home: &Path, relative: &str, content: &str) -> PathBuf {
    let path = home.join(relative);
    notesoup_test_support::files::put(&path, content);
    path
}

/// Three session homes, each with a checkpoint: material for a dream.
pub fn three_fresh_sessions(home: &Path) {
    for session in ["s1", "s2", "s3"] {
        put(
            home,
            &format!("pi/session/{session}/checkpoint.md"),
            "---\norigin: self\n---\n\ngoal\n",
        );
    }
}

/// Sets the mtime of `path`.
pub fn set_mtime(path: &Path, at: SystemTime) {
    fs::File::options()
        .write(true)
        .open(path)
        .and_then(|file| file.set_modified(at))
        .expect("set mtime");
}

/// A time `hours` before `at`.
pub fn hours_before(at: SystemTime, hours: u64) -> SystemTime {
    at - Duration::from_secs(hours * 3600)
}

/// A hash of every entry under `root` (names, kinds, contents, symlink
/// targets, mtimes), never following symlinks.
pub fn tree_hash(root: &Path) -> String {
    use sha1::Digest as _;
    let mut hasher = sha1::Sha1::new();
    let mut entries: Vec<_> = walkdir::WalkDir::new(root)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .map(|entry| entry.expect("walk"))
        .collect();
    entries.sort_by(|a, b| a.path().cmp(b.path()));
    for entry in entries {
        let path = entry.path();
        let meta = fs::symlink_metadata(path).expect("lstat");
        hasher.update(
            path.strip_prefix(root)
                .expect("under root")
                .to_string_lossy()
                .as_bytes(),
        );
        hasher.update(format!("{:?}", meta.modified().ok()).as_bytes());
        if meta.file_type().is_symlink() {
            hasher.update(b"link:");
            hasher.update(
                fs::read_link(path)
                    .expect("readlink")
                    .to_string_lossy()
                    .as_bytes(),
            );
        } else if meta.is_file() {
            hasher.update(b"file:");
            hasher.update(fs::read(path).expect("read"));
        } else {
            hasher.update(b"dir");
        }
    }
    crate::notes::lower_hex(&hasher.finalize())
}

/// Runs `git <args>` in `dir` and returns its stdout; fails the test on a
/// non-zero exit.
pub fn git(dir: &Path, args: &[&str]) -> String {
    use notesoup_test_support::child::{git_in, stdout_of};
    stdout_of(git_in(dir).args(args).env("GIT_CONFIG_GLOBAL", "/dev/null"))
}

/// `git <args>` in `dir` as `name` (`name@localhost`): the tests' Git has
/// no identity of its own to commit with.
pub fn git_as(dir: &Path, name: &str, args: &[&str]) -> String {
    let (user, email) = (
        format!("user.name={name}"),
        format!("user.email={name}@localhost"),
    );
    git(dir, &[&["-c", &user, "-c", &email][..], args].concat())
}

/// The paths `HEAD` holds in `home`, a line each.
pub fn committed_files(home: &Path) -> String {
    git(home, &["ls-tree", "-r", "--name-only", "HEAD"])
}

/// A credential the guard finds (an AWS access key id that is no vendor's
/// documentation example).
pub const AWS_KEY: &str = "AKIAIOSFODNN7EXAMPLX";

/// The output as `stdout: …` / `stderr: …` lines, with `home` shown as
/// `<home>`, then the exit code.
pub fn render_output(output: &DreamOutput, home: &Path) -> String {
    let home = home.display().to_string();
    let mut text = String::new();
    for line in &output.lines {
        let stream = match line.stream {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        };
        text.push_str(&format!(
            "{stream}: {}\n",
            line.text.replace(&home, "<home>")
        ));
    }
    text.push_str(&format!("exit {}\n", output.exit_code));
    text
}
