//! `notesoup-pi boot [--stats] [--json]` against sessions real Pi wrote:
//! the command prints the boot Pi got for the live window, from the same
//! notes root, agent, session, model and settings, and its sizes.

use std::path::{Path, PathBuf};
use std::process::Output;

use notesoup_test_support::files::put;
use serde_json::{Value, json};

use super::support::{World, text, tool};

/// `notesoup-pi boot ARGS` in the world's project, with the environment Pi
/// ran under.
fn boot(world: &World, args: &[&str]) -> Output {
    world
        .notesoup_pi(&["boot"])
        .args(args)
        .output()
        .expect("notesoup-pi runs")
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).expect("UTF-8")
}

/// The project's session folder as Pi names it.
fn session_dir(world: &World) -> PathBuf {
    let cwd = world.path("project");
    let safe = cwd
        .to_str()
        .unwrap()
        .trim_start_matches('/')
        .replace('/', "-");
    world
        .path("agent")
        .join("sessions")
        .join(format!("--{safe}--"))
}

/// The text of the last boot Pi saved, and its window id.
fn last_boot(entries: &[Value]) -> (String, String) {
    let boot = entries
        .iter()
        .rev()
        .find(|e| e["customType"] == "notesoup/boot")
        .expect("a boot entry");
    let content = match &boot["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<String>(),
        other => panic!("boot content {other}"),
    };
    (
        content,
        boot["details"]["windowId"].as_str().unwrap().to_owned(),
    )
}

/// Lines `name chars ~tokens`, as `(name, chars, tokens)`.
fn stats_rows(text: &str) -> Vec<(String, usize, usize)> {
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(head, ["section", "chars", "~tokens"]);
    lines
        .map(|line| {
            let parts: Vec<&str> = line.split_whitespace().collect();
            let (name, numbers) = parts.split_at(parts.len() - 2);
            (
                name.join(" "),
                numbers[0].parse().unwrap(),
                numbers[1].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn boot_prints_the_boot_pi_got_and_stats_its_sections() {
    let mut world = World::new(200_000);
    // The bound Pi's settings give notesoup, read the same way by the
    // command; a long MAP makes the project shelf meet it. (Only a MAP: the
    // other pages would show their age, which moves on between Pi's boot
    // and the command's.)
    world.settings["notesoup"] = json!({"bootMaxChars": 4000});
    let map: String = (1..=80)
        .map(|n| format!("- topic {n:02}: where its notes and decisions live\n"))
        .collect();
    let report = world.start(json!([
        {"respond": [
            tool("notes_write", json!({"address": "@project/MAP.md", "content": map})),
            tool("wipe_memory", json!({})),
            text("Fresh."),
        ]},
        {"prompt": "Plan it, then wipe."},
    ]));
    report.assert_finished(0);
    let entries = report.entries();
    let (pi_boot, window) = last_boot(&entries);
    assert_eq!(report.markers()[0].0, window, "the fresh window's boot");
    assert!(pi_boot.contains("MAP — @project/MAP.md"), "{pi_boot}");
    assert!(!pi_boot.contains("topic 80"), "the bound cut the MAP");
    let session = report.session_file.to_str().unwrap();

    // The session given as a file: the same text Pi got.
    let printed = stdout(&boot(&world, &["--session", session]));
    assert_eq!(printed.strip_suffix('\n').unwrap(), pi_boot);
    assert!(pi_boot.chars().count() <= 4000);

    // Given by id, and found as `pi --continue` finds it: the newest
    // session in the project's folder.
    let dir = session_dir(&world);
    std::fs::create_dir_all(&dir).unwrap();
    let name = Path::new(session).file_name().unwrap();
    std::fs::copy(session, dir.join(name)).unwrap();
    let id = entries_header_id(&report.session_file);
    assert_eq!(stdout(&boot(&world, &["--session", &id])), printed);
    assert_eq!(stdout(&boot(&world, &[])), printed);

    // --json: the window, the boot and each section's characters.
    let json: Value = serde_json::from_str(&stdout(&boot(&world, &["--json"]))).unwrap();
    assert_eq!(json["window"], window.as_str());
    assert_eq!(json["boot"], pi_boot.as_str());
    let sections = json["sectionChars"].as_object().unwrap();
    assert_eq!(
        sections.keys().map(String::as_str).collect::<Vec<_>>()[..3],
        ["identity", "protocol", "notes heading"]
    );

    // --stats: the same sections, a token per four characters rounded up,
    // and the whole boot (sections and the blank lines between them).
    let rows = stats_rows(&stdout(&boot(&world, &["--stats"])));
    let (last, sections_rows) = rows.split_last().unwrap();
    assert_eq!(
        sections_rows
            .iter()
            .map(|(name, chars, _)| (name.clone(), json!(chars)))
            .collect::<serde_json::Map<_, _>>(),
        *sections
    );
    for (name, chars, tokens) in &rows {
        assert_eq!(*tokens, chars.div_ceil(4), "{name}");
    }
    assert_eq!(last.0, "whole boot");
    assert_eq!(last.1, pi_boot.chars().count());
    assert!(
        sections_rows
            .iter()
            .any(|(name, _, _)| name.contains("project")),
        "{rows:?}"
    );

    // The bound comes from Pi's settings: without it, the default 10,000
    // shows the whole MAP.
    let settings = world.path("agent").join("settings.json");
    let mut global: Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    global.as_object_mut().unwrap().remove("notesoup");
    std::fs::write(&settings, global.to_string()).unwrap();
    let whole = stdout(&boot(&world, &[]));
    assert!(whole.contains("topic 80"), "{whole}");
    assert!(whole.chars().count() > 4000);
    // The project's own setting counts only once Pi trusts the project.
    global["notesoup"] = json!({"bootMaxChars": 4000});
    std::fs::write(&settings, global.to_string()).unwrap();
    let project = world.path("project");
    put(
        &project.join(".pi/settings.json"),
        json!({"notesoup": {"bootMaxChars": 12000}}).to_string(),
    );
    assert_eq!(stdout(&boot(&world, &[])), printed, "untrusted");
    let trusted = json!({ project.canonicalize().unwrap().to_str().unwrap(): true });
    std::fs::write(world.path("agent").join("trust.json"), trusted.to_string()).unwrap();
    assert_eq!(stdout(&boot(&world, &[])), whole, "trusted");
}

fn entries_header_id(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    header["id"].as_str().unwrap().to_owned()
}

#[test]
fn boot_without_a_session_previews_and_bad_input_is_refused() {
    let world = World::new(200_000);
    std::fs::create_dir_all(world.path("agent")).unwrap();
    // No session yet: the first boot of a new session, said on stderr.
    let output = boot(&world, &[]);
    let printed = stdout(&output);
    assert!(
        printed.starts_with("<context_window>\nAgent name: tester (brain: default)\n"),
        "{printed}"
    );
    assert!(printed.contains("Current context window id: pcw:preview:root"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no Pi session is recorded for") && stderr.contains("preview"),
        "{stderr}"
    );

    let refused = |args: &[&str], code: i32, says: &str| {
        let output = boot(&world, args);
        assert_eq!(output.status.code(), Some(code), "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(stderr.lines().count() <= 12, "bounded: {stderr}");
    };
    refused(
        &["--session", "0000-no-such"],
        1,
        "notesoup-pi boot: --session 0000-no-such: no such file, and no session 0000-no-such in ",
    );
    refused(&["--cwd", "no/such/dir"], 1, "not a directory");
    refused(&["--stats", "--json"], 2, "cannot be used with");
    refused(&["--bogus"], 2, "unexpected argument '--bogus'");

    // A file that is not a Pi session.
    let junk = world.path("junk.jsonl");
    std::fs::write(&junk, "not json\n").unwrap();
    refused(&["--session", junk.to_str().unwrap()], 1, "junk.jsonl");
}
