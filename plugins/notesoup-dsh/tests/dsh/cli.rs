//! The `notesoup-dsh` command line as people use it, on the real binary:
//! `--help` everywhere, a reader that goes away, `boot --stats`, `doctor`
//! and `doctor clean`, the install's patch with and without the engine, and
//! the install's run of `dsh plugin add` (a stand-in dsh on PATH) or the
//! command it prints without one.

use std::path::Path;
use std::process::{Command, Output};

use notesoup_test_support::files::put;
use notesoup_test_support::shared_commands::Binary;
use notesoup_test_support::{child, dreamer};

fn notesoup_dsh(args: &[&str], notes: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_notesoup-dsh"))
        .args(args)
        .env("PI_NOTES_HOME", notes)
        .env("XDG_CACHE_HOME", notes.join(".cache"))
        .env("DSH_HOME", notes.join("no-dsh-home"))
        .env_remove("PI_NOTES_AGENT")
        .output()
        .expect("notesoup-dsh runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn every_subcommand_answers_help() {
    let notes = tempfile::tempdir().expect("tempdir");
    Binary::new("notesoup-dsh", |args| notesoup_dsh(args, notes.path())).assert_answers_help(&[
        &[],
        &["serve"],
        &["bundle"],
        &["install"],
        &["boot"],
        &["dream"],
        &["doctor"],
        &["doctor", "clean"],
        &["dream-tools"],
    ]);
    let install = stdout(&notesoup_dsh(&["install", "--help"], notes.path()));
    assert!(install.contains("--no-engine"), "{install}");
    assert!(install.contains("80 % context pressure"), "{install}");
}

#[test]
fn a_reader_that_goes_away_ends_the_command_quietly() {
    let notes = tempfile::tempdir().expect("tempdir");
    for args in [
        &["boot"][..],
        &["boot", "--stats"],
        &["install", "--print-patch"],
    ] {
        child::assert_quiet_without_a_reader(
            Command::new(env!("CARGO_BIN_EXE_notesoup-dsh"))
                .args(args)
                .args(if args[0] == "install" {
                    vec![
                        "--dir".to_owned(),
                        notes.path().join("bundle").display().to_string(),
                    ]
                } else {
                    Vec::new()
                })
                .env("PI_NOTES_HOME", notes.path())
                .env("XDG_CACHE_HOME", notes.path().join(".cache"))
                .env("DSH_HOME", notes.path().join("no-dsh-home")),
            &format!("{args:?}"),
        );
    }
}

/// `notesoup-dsh boot` (and the sidecar) keeps the boot caches in
/// `$XDG_CACHE_HOME/notesoup` between processes: the next process boots
/// through them, and a note added since, or damaged caches, give the boot a
/// process without caches gives.
#[test]
fn boots_keep_their_caches_between_processes() {
    let temp = tempfile::tempdir().expect("tempdir");
    let (notes, cache) = (temp.path().join("notes"), temp.path().join("cache"));
    let cwd = temp.path().join("project");
    std::fs::create_dir_all(&cwd).expect("mkdir");
    let key = notesoup_core::notes::project_key(&cwd);
    let dir = notes.join("project").join(&key);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let note = |name: &str, day: u8| {
        let temp = dir.join(format!(".{name}.tmp"));
        std::fs::write(
            &temp,
            format!("---\nupdatedAt: 2026-01-{day:02}T00:00:00.000+00:00\n---\n\n# {name}\n"),
        )
        .expect("write");
        std::fs::rename(&temp, dir.join(format!("{name}.md"))).expect("rename");
    };
    let boot = |cache: &Path| {
        let output = Command::new(env!("CARGO_BIN_EXE_notesoup-dsh"))
            .args(["boot", "--session", "s1", "--cwd"])
            .arg(&cwd)
            .env("PI_NOTES_HOME", &notes)
            .env("XDG_CACHE_HOME", cache)
            .env("DSH_HOME", temp.path().join("no-dsh-home"))
            .env_remove("PI_NOTES_AGENT")
            .output()
            .expect("notesoup-dsh runs");
        assert!(output.status.success(), "{}", stderr(&output));
        stdout(&output)
    };
    let mut fresh = 0;
    let mut uncached = || {
        fresh += 1;
        boot(&temp.path().join(format!("empty-cache-{fresh}")))
    };
    note("alpha", 2);
    note("beta", 1);
    // Kept only once the folder settled (2 s).
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    let first = boot(&cache);
    assert!(first.contains("@project/alpha.md"), "{first}");
    let kept = |kind: &str| {
        let kept = cache.join("notesoup").join(kind);
        std::fs::read_dir(&kept)
            .expect("the caches were saved")
            .map(|entry| entry.expect("entry").path())
            .find(|path| path.to_string_lossy().contains(&key))
            .unwrap_or_else(|| panic!("the project's {kind} file"))
    };
    let shelves = kept("boot-shelves");
    let heads = kept("note-heads");
    assert_eq!(boot(&cache), first);
    assert_eq!(uncached(), first);
    note("gamma", 3);
    let added = boot(&cache);
    assert!(added.contains("@project/gamma.md"), "{added}");
    assert_eq!(uncached(), added);
    std::fs::write(&shelves, b"{not an index").expect("write");
    std::fs::write(&heads, b"not heads").expect("write");
    assert_eq!(boot(&cache), added);
}

#[test]
fn boot_prints_a_preview_or_its_sizes() {
    let notes = tempfile::tempdir().expect("tempdir");
    let boot = notesoup_dsh(&["boot", "--cwd", "/"], notes.path());
    assert!(boot.status.success(), "{}", stderr(&boot));
    assert!(
        stdout(&boot).starts_with("<context_window>"),
        "{}",
        stdout(&boot)
    );
    assert!(stdout(&boot).contains("dsh:preview:1"));
    assert!(
        stderr(&boot).contains("a preview boot"),
        "{}",
        stderr(&boot)
    );
    // The preview has no session: it names none, so the notes of a dsh
    // session that happens to be called `preview` are not its notes.
    let stray = notes.path().join("pi/session/preview");
    put(&stray.join("stray.md"), "not the preview's");
    let again = notesoup_dsh(&["boot", "--cwd", "/"], notes.path());
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(!stdout(&again).contains("stray"), "{}", stdout(&again));
    assert!(
        stderr(&again).contains("with no session"),
        "{}",
        stderr(&again)
    );
    std::fs::remove_dir_all(notes.path().join("pi")).expect("clean");

    let stats = notesoup_dsh(
        &["boot", "--cwd", "/", "--session", "session-1", "--stats"],
        notes.path(),
    );
    assert!(stats.status.success(), "{}", stderr(&stats));
    let table = stdout(&stats);
    let whole = table
        .lines()
        .find(|line| line.starts_with("whole boot"))
        .expect("a whole-boot line");
    let figures: Vec<usize> = whole
        .split_whitespace()
        .filter_map(|word| word.parse().ok())
        .collect();
    let text = stdout(&notesoup_dsh(
        &["boot", "--cwd", "/", "--session", "session-1"],
        notes.path(),
    ));
    let chars = text.trim_end_matches('\n').chars().count();
    assert_eq!(figures, [chars, chars.div_ceil(4)], "{table}");
    for section in ["identity", "protocol", "notes heading"] {
        assert!(table.contains(section), "{table}");
    }
    assert!(
        stderr(&stats).contains("the bound is 10000 characters (bootMaxChars)"),
        "{}",
        stderr(&stats)
    );

    let missing = notesoup_dsh(&["boot", "--cwd", "/no/such/dir"], notes.path());
    assert!(!missing.status.success());
    assert!(
        stderr(&missing).contains("--cwd /no/such/dir: not a directory"),
        "{}",
        stderr(&missing)
    );
}

#[test]
fn doctor_and_doctor_clean() {
    let notes = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(notes.path().join("human")).expect("mkdir");
    let fine = notesoup_dsh(&["doctor"], notes.path());
    assert!(fine.status.success(), "{}{}", stdout(&fine), stderr(&fine));
    std::fs::write(notes.path().join("human/MAP.md"), "# Human MAP\n").expect("write");
    let finding = notesoup_dsh(&["doctor"], notes.path());
    assert_eq!(finding.status.code(), Some(1), "findings exit 1");
    assert!(
        stdout(&finding).contains("human/MAP.md: missing frontmatter"),
        "{}",
        stdout(&finding)
    );

    // A temporary file of a writer that is gone (no process has that pid)
    // is stale once it is a minute old.
    let temp = notes
        .path()
        .join("human/.notesoup-999999999-0123456789abcdef0123456789abcdef.tmp");
    std::fs::write(&temp, "half a note").expect("write");
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&temp)
        .and_then(|file| file.set_modified(old))
        .expect("age the file");
    let listed = notesoup_dsh(&["doctor", "clean"], notes.path());
    assert!(listed.status.success(), "{}", stderr(&listed));
    assert!(
        stdout(&listed).contains("would remove"),
        "{}",
        stdout(&listed)
    );
    assert!(temp.exists());
    let applied = notesoup_dsh(&["doctor", "clean", "--apply"], notes.path());
    assert!(applied.status.success(), "{}", stderr(&applied));
    assert!(stdout(&applied).contains("removed"), "{}", stdout(&applied));
    assert!(!temp.exists());
}

#[test]
fn the_printed_patch_mounts_the_engine_unless_told_not_to() {
    let notes = tempfile::tempdir().expect("tempdir");
    let dir = notes.path().join("bundle");
    let dir = dir.to_str().expect("utf-8");
    for args in [
        &["install", "--print-patch", "--dir", dir][..],
        &["install", "--print-patch", "--engine", "--dir", dir],
    ] {
        let output = notesoup_dsh(args, notes.path());
        assert!(output.status.success(), "{}", stderr(&output));
        let patch = stdout(&output);
        assert!(
            patch.starts_with("- id: compaction-basic\n  disabled: true\n"),
            "{patch}"
        );
        assert!(patch.contains("    - id: notesoup-engine\n"), "{patch}");
    }
    let plain = notesoup_dsh(
        &["install", "--print-patch", "--no-engine", "--dir", dir],
        notes.path(),
    );
    assert!(plain.status.success(), "{}", stderr(&plain));
    assert!(
        !stdout(&plain).contains("compaction-basic"),
        "{}",
        stdout(&plain)
    );
    assert!(
        !stdout(&plain).contains("notesoup-engine"),
        "{}",
        stdout(&plain)
    );
    assert!(
        stderr(&plain).contains("summarizes the conversation at 80 % context pressure"),
        "{}",
        stderr(&plain)
    );
    let patch = std::fs::read_to_string(Path::new(dir).join("cordis.patch.yml")).expect("patch");
    assert!(
        !patch.contains("notesoup-engine"),
        "the bundle follows --no-engine: {patch}"
    );
    let both = notesoup_dsh(
        &[
            "install",
            "--print-patch",
            "--engine",
            "--no-engine",
            "--dir",
            dir,
        ],
        notes.path(),
    );
    assert!(!both.status.success(), "--engine and --no-engine conflict");
}

#[test]
fn a_dreamer_that_never_ends_is_stopped_with_every_process_it_started() {
    let dir = tempfile::tempdir().expect("tempdir");
    let notes = dir.path().join("notes");
    let pids = dir.path().join("pids");
    std::fs::create_dir_all(&pids).expect("pids");
    let dsh = dreamer::never_ending(&pids, "dsh");
    let mark = uuid::Uuid::new_v4().to_string();
    let dream = |dsh: &Path| {
        Command::new(env!("CARGO_BIN_EXE_notesoup-dsh"))
            .args(["dream", "--force", "--timeout", "5", "--dsh"])
            .arg(dsh)
            .arg("--notes-home")
            .arg(&notes)
            .env("DSH_HOME", dir.path().join("no-dsh-home"))
            .env(dreamer::TREE_MARK, &mark)
            .env_remove("PI_NOTES_AGENT")
            .output()
            .expect("notesoup-dsh runs")
    };
    dreamer::assert_stopped_at_timeout(&dream(&dsh), &pids, &mark, &notes);
    let reports = dreamer::reports(&notes);
    assert_eq!(reports.len(), 1);
    let report = &reports[0];
    assert!(
        report.contains("dreamer failed: timed out after 5 s and was stopped"),
        "{report}"
    );

    // The next dream starts (its dreamer ends at once: the run fails, but
    // it ran).
    let next = dream(Path::new("/bin/false"));
    let err = stderr(&next);
    assert!(!err.contains("lock gate"), "{err}");
    assert_eq!(dreamer::reports(&notes).len(), 2, "{err}");
}

#[test]
fn a_dreamer_s_answer_on_stdout_is_its_report_and_its_silence_a_failure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dsh = dir.path().join("dsh");
    let dream = |body: &str, notes: &Path| {
        dreamer::executable(&dsh, body);
        let (dsh, home) = (dsh.to_str().expect("utf-8"), notes.to_str().expect("utf-8"));
        let args = [
            "dream",
            "--force",
            "--timeout",
            "20",
            "--dsh",
            dsh,
            "--notes-home",
            home,
        ];
        notesoup_dsh(&args, notes)
    };

    // dsh wrote no session log: its last answer on stdout is the report.
    let notes = dir.path().join("answered");
    let answered = dream(
        "echo 'Report: the notes are tidy; nothing changed.'\n",
        &notes,
    );
    assert!(answered.status.success(), "{}", stderr(&answered));
    let reports = dreamer::reports(&notes);
    assert_eq!(reports.len(), 1);
    assert!(
        reports[0].contains("Report: the notes are tidy; nothing changed."),
        "{}",
        reports[0]
    );

    let notes = dir.path().join("silent");
    let silent = dream("echo 'Error: no provider is set' >&2\n", &notes);
    assert!(!silent.status.success());
    assert!(
        dreamer::failed_run_report(&stderr(&silent))
            .contains("dreamer failed: dsh ended without an answer: Error: no provider is set"),
        "{}",
        stderr(&silent)
    );

    // A dsh that failed is named by its exit, not by its silence.
    let notes = dir.path().join("failed");
    let failed = dream("echo 'Error: the profile is broken' >&2\nexit 2\n", &notes);
    assert!(!failed.status.success());
    let report = dreamer::failed_run_report(&stderr(&failed));
    assert!(report.contains("Error: the profile is broken"), "{report}");
    assert!(!report.contains("ended without an answer"), "{report}");
}

/// `bundle` (and so `install`) never writes through a link planted at one
/// of its files, refuses a link where its folder belongs and a folder of
/// someone else's files unless `--force`, and writes again over its own.
#[test]
fn the_bundle_writes_only_its_own_files_and_never_through_links() {
    use notesoup_test_support::planted::{self, Victim};
    let temp = tempfile::tempdir().expect("tempdir");
    let dir = temp.path().join("bundle");
    let dir_arg = dir.to_str().expect("utf-8");
    for round in 0..2 {
        let output = notesoup_dsh(&["bundle", "--out", dir_arg], temp.path());
        assert!(
            output.status.success(),
            "round {round}: {}",
            stderr(&output)
        );
    }
    let victim = Victim::at(temp.path().join(".bashrc"));
    let mut files: Vec<&str> = notesoup_dsh::bundle::FILES
        .iter()
        .map(|(name, _)| *name)
        .collect();
    files.extend(["cordis.patch.yml", "manifest.json"]);
    for file in files {
        victim.plant_at(&dir.join(file));
        let output = notesoup_dsh(&["bundle", "--out", dir_arg], temp.path());
        assert!(output.status.success(), "{file}: {}", stderr(&output));
        victim.assert_untouched(file);
        planted::assert_replaced(&dir.join(file), file);
    }
    // A folder of someone else's files (an unrelated package.json):
    // refused, with --print-patch too; --force writes over it.
    let foreign = temp.path().join("project");
    let foreign_arg = foreign.to_str().expect("utf-8");
    planted::assert_foreign_folder_refused(
        &foreign,
        "package.json",
        "{\"name\":\"theirs\"}\n",
        &[
            vec!["bundle", "--out", foreign_arg],
            vec!["install", "--print-patch", "--dir", foreign_arg],
        ],
        &[],
        |args| notesoup_dsh(args, temp.path()),
    );
    let forced = notesoup_dsh(&["bundle", "--out", foreign_arg, "--force"], temp.path());
    assert!(forced.status.success(), "{}", stderr(&forced));
    assert!(foreign.join("index.js").is_file());
}

#[test]
fn install_adds_the_bundle_with_dsh_or_prints_the_command_to_run() {
    let temp = tempfile::tempdir().expect("tempdir");
    let home = temp.path().join("home");
    let bundle = home.join(".local/share/notesoup/dsh-bundle");
    let with_dsh = temp.path().join("with-dsh");
    let args = temp.path().join("dsh-args");
    put(
        &with_dsh.join("dsh"),
        format!(
            "#!/bin/sh\necho \"$@\" > '{}'\nexit \"${{FAKE_DSH_EXIT:-0}}\"\n",
            args.display()
        ),
    );
    std::fs::set_permissions(
        with_dsh.join("dsh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("executable");
    let without_dsh = temp.path().join("without-dsh");
    std::fs::create_dir_all(&without_dsh).expect("dir");
    let install = |extra: &[&str], path: &Path, exit: &str| {
        Command::new(env!("CARGO_BIN_EXE_notesoup-dsh"))
            .arg("install")
            .args(extra)
            .env("PATH", path)
            .env("HOME", &home)
            // Empty counts as unset: the bundle goes under HOME.
            .env("XDG_DATA_HOME", "")
            .env("FAKE_DSH_EXIT", exit)
            .output()
            .expect("notesoup-dsh runs")
    };

    let said = |output: &Output, text: &str| {
        assert!(
            stderr(output).contains(text),
            "{text:?} in {}",
            stderr(output)
        );
    };
    let command = |profile: &str, dir: &Path| {
        format!("dsh plugin --profile {profile} add {}\n", dir.display())
    };

    let printed = install(&["--profile", "my profile"], &without_dsh, "0");
    assert!(printed.status.success(), "{}", stderr(&printed));
    let dir = bundle.canonicalize().expect("the bundle is written");
    assert!(dir.join("manifest.json").is_file());
    assert_eq!(stdout(&printed), command("'my profile'", &dir));
    said(&printed, "`dsh` is not on PATH");
    assert!(!args.exists(), "no dsh was run");

    let added = install(&[], &with_dsh, "0");
    assert!(added.status.success(), "{}", stderr(&added));
    assert_eq!(
        std::fs::read_to_string(&args).expect("dsh ran"),
        format!("plugin --profile web add {}\n", dir.display())
    );
    assert_eq!(stdout(&added), "");
    said(
        &added,
        "added to profile web with notesoup's compaction engine",
    );
    assert!(!stderr(&added).contains("summarizes the conversation"));

    let without_engine = install(&["--no-engine"], &with_dsh, "0");
    assert!(without_engine.status.success());
    said(
        &without_engine,
        "added to profile web without notesoup's compaction engine",
    );
    said(
        &without_engine,
        "summarizes the conversation at 80 % context pressure",
    );

    let refused = install(&[], &with_dsh, "3");
    assert!(!refused.status.success());
    assert_eq!(stdout(&refused), command("web", &dir));
    said(&refused, "`dsh plugin add` failed");
}
