//! Hook I/O: recorded Claude Code 2.1.332 payloads piped into the built
//! binary, checked on stdout, the exit code and the records left behind.

use std::path::{Path, PathBuf};

use notesoup_test_support::files::{self, put};
use serde_json::{Value, json};

use crate::support::{
    Sandbox, boundary_row, context_of, hook_context_row, notesoup_bin, reply_row, system_message,
};

const S1: &str = "11111111-1111-4111-8111-111111111111";
const S2: &str = "22222222-2222-4222-8222-222222222222";

fn start(sb: &Sandbox, source: &str, session: &str) -> Option<Value> {
    let payload = sb.payload(&format!("SessionStart-{source}"), session);
    sb.hook("session-start", &payload)
}

fn ids(boot: &str) -> Vec<&str> {
    boot.lines()
        .filter(|l| l.contains("context window id: "))
        .collect()
}

#[test]
fn startup_boots_the_root_window_once() {
    let sb = Sandbox::new();
    let out = start(&sb, "startup", S1).unwrap();
    let boot = context_of(&out, "SessionStart");
    assert_eq!(
        ids(&boot),
        [
            format!("First context window id: claude:{S1}:1"),
            format!("Current context window id: claude:{S1}:1"),
        ]
    );
    assert!(boot.starts_with("<context_window>\nAgent name: claude (brain: claude)\n"));
    assert!(boot.contains("mcp__plugin_notesoup_notesoup__notes_*"));
    assert!(out.get("systemMessage").is_none());
    // The same window never gets a second boot.
    assert_eq!(start(&sb, "startup", S1), None);
}

#[test]
fn the_boot_shows_the_project_map() {
    let sb = Sandbox::new();
    let key = notesoup_core::notes::project_key(&sb.project);
    let map = sb.notes.join("project").join(&key).join("MAP.md");
    put(
        &map,
        "---\norigin: self\n---\n\n- `@project/decisions.md` — why we chose X\n",
    );
    let boot = context_of(&start(&sb, "startup", S1).unwrap(), "SessionStart");
    assert!(
        boot.contains("MAP — @project/MAP.md\n  - `@project/decisions.md` — why we chose X"),
        "{boot}"
    );
}

/// Writes the project note `name`, updated on 2026-01-`day`, in `dir`.
fn project_note(dir: &Path, name: &str, day: u8) {
    put(
        &dir.join(format!("{name}.md")),
        format!("---\nupdatedAt: 2026-01-{day:02}T00:00:00.000+00:00\n---\n\n# {name}\n"),
    );
}

/// The project notes alpha (the newer) and beta, left unchanged past the
/// 2 s after which their heads are kept: the project home's folder.
fn settled_alpha_and_beta(sb: &Sandbox) -> PathBuf {
    let key = notesoup_core::notes::project_key(&sb.project);
    let dir = sb.notes.join("project").join(key);
    project_note(&dir, "alpha", 2);
    project_note(&dir, "beta", 1);
    std::thread::sleep(std::time::Duration::from_millis(2_100));
    dir
}

/// Which of alpha and beta `boot` lists first.
fn order(boot: &str) -> &'static str {
    let alpha = boot.find("@project/alpha.md").unwrap();
    let beta = boot.find("@project/beta.md").unwrap();
    if alpha < beta { "alpha" } else { "beta" }
}

/// The boots' kept shelf index, after checking that it lists `note`.
fn kept_shelves_listing(sb: &Sandbox, note: &str) -> PathBuf {
    let shelves = sb.kept_file("boot-shelves");
    let index = String::from_utf8_lossy(&std::fs::read(&shelves).unwrap()).into_owned();
    assert!(index.contains(note), "{note} not in {index}");
    shelves
}

/// The boot saves the note heads it read in the caches' directory, and
/// the next hook's boot lists through them: a note changed since is read
/// again, and a damaged file is passed over.
#[test]
fn boots_keep_note_heads_between_hooks() {
    const S3: &str = "33333333-3333-4333-8333-333333333333";
    const S4: &str = "44444444-4444-4444-8444-444444444444";
    const S5: &str = "55555555-5555-4555-8555-555555555555";
    let sb = Sandbox::new();
    let dir = settled_alpha_and_beta(&sb);
    let boot = context_of(&start(&sb, "startup", S1).unwrap(), "SessionStart");
    assert_eq!(order(&boot), "alpha", "{boot}");
    let saved = sb.kept_file("note-heads");
    let bytes = std::fs::read(&saved).unwrap();
    assert!(
        bytes.windows(8).any(|w| w == b"alpha.md") && bytes.windows(7).any(|w| w == b"beta.md"),
        "both heads saved"
    );
    // Edited in place to the same length: the newer head is read.
    project_note(&dir, "beta", 3);
    let boot = context_of(&start(&sb, "startup", S2).unwrap(), "SessionStart");
    assert_eq!(order(&boot), "beta", "{boot}");
    std::fs::write(&saved, b"not a cache").unwrap();
    let boot = context_of(&start(&sb, "startup", S3).unwrap(), "SessionStart");
    assert_eq!(order(&boot), "beta", "{boot}");

    // The boots kept the project's shelf (its folder had settled); a note
    // written as notesoup writes (renamed into place) is seen by the next
    // boot, and a damaged index is passed over.
    let shelves = kept_shelves_listing(&sb, "alpha.md");
    let temp = dir.join(".gamma.md.tmp");
    std::fs::write(
        &temp,
        "---\nupdatedAt: 2026-01-09T00:00:00.000+00:00\n---\n\n# gamma\n",
    )
    .unwrap();
    std::fs::rename(&temp, dir.join("gamma.md")).unwrap();
    let fresh = |boot: &str| {
        boot.find("@project/gamma.md").unwrap() < boot.find("@project/beta.md").unwrap()
    };
    let boot = context_of(&start(&sb, "startup", S4).unwrap(), "SessionStart");
    assert!(fresh(&boot), "{boot}");
    std::fs::write(&shelves, b"{not an index").unwrap();
    let boot = context_of(&start(&sb, "startup", S5).unwrap(), "SessionStart");
    assert!(fresh(&boot), "{boot}");
}

/// The caches live outside the plugin data directory, so a boot with a
/// new one (a reinstall) still lists through them; whatever changed in the
/// store since they were kept, the boot is the one a boot without any
/// cache gives, and damaged caches are passed over and made anew.
#[test]
fn a_new_plugin_data_directory_boots_through_the_kept_caches() {
    let mut sb = Sandbox::new();
    let key = notesoup_core::notes::project_key(&sb.project);
    let dir = sb.notes.join("project").join(&key);
    std::fs::create_dir_all(&dir).unwrap();
    // As notesoup writes: a temporary file renamed over the note.
    let note = |name: &str, day: u8, title: &str| {
        files::renamed_note(&dir, name, day, title);
    };
    let mut runs = 0;
    // A boot with a new plugin data directory, with the kept caches or
    // (`uncached`) with none, its window ids left out.
    let mut boot = |sb: &mut Sandbox, uncached: bool| {
        runs += 1;
        sb.data = sb
            .home
            .join(format!(".claude/plugins/data/notesoup-run{runs}"));
        let empty = sb.home.join(format!("empty-cache-{runs}"));
        if uncached {
            sb.env.push((
                "XDG_CACHE_HOME".to_owned(),
                empty.to_string_lossy().into_owned(),
            ));
        }
        let session = format!("{runs:08}-aaaa-4aaa-8aaa-aaaaaaaaaaaa");
        let boot = context_of(&start(sb, "startup", &session).unwrap(), "SessionStart");
        if uncached {
            sb.env.pop();
            assert!(empty.join("notesoup").is_dir(), "the empty cache was used");
        }
        boot.lines()
            .filter(|line| !line.contains("context window id: "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    note("alpha", 2, "alpha");
    note("beta", 1, "beta");
    files::settle();
    let first = boot(&mut sb, false);
    assert!(first.contains("@project/alpha.md") && first.contains("@project/beta.md"));
    assert_eq!(first, boot(&mut sb, true));
    let shelves = kept_shelves_listing(&sb, "beta.md");
    let heads = sb.kept_file("note-heads");
    files::boots_follow_outside_changes(&dir, &shelves, &heads, &mut |uncached| {
        boot(&mut sb, uncached)
    });
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&sb.cache).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "the caches are the owner's alone");
}

#[test]
fn compact_boots_the_next_window() {
    let sb = Sandbox::new();
    start(&sb, "startup", S1).unwrap();
    let boot = context_of(&start(&sb, "compact", S1).unwrap(), "SessionStart");
    assert_eq!(
        ids(&boot),
        [
            format!("First context window id: claude:{S1}:1"),
            format!("Current context window id: claude:{S1}:2"),
            format!("Previous context window id: claude:{S1}:1"),
        ]
    );
    assert!(!boot.contains("You wake up blank"));
}

#[test]
fn resume_injects_nothing_when_the_live_window_has_its_boot() {
    let sb = Sandbox::new();
    let boot = context_of(&start(&sb, "startup", S1).unwrap(), "SessionStart");
    sb.append_transcript(S1, &[hook_context_row("h1", &boot), reply_row("a1", 1000)]);
    assert_eq!(start(&sb, "resume", S1), None);
    // The scan was kept; the next one reads only the rows appended since
    // (and a damaged kept scan is passed over: the file is scanned again).
    let kept: Vec<_> = std::fs::read_dir(sb.cache.join("transcript-scans"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    std::fs::write(&kept[0], b"{\"device\":").unwrap();
    assert_eq!(start(&sb, "resume", S1), None);

    // A compaction notesoup never saw (plugin off at the time) opened a
    // window without a boot: resume boots it as the next window.
    sb.append_transcript(S1, &[boundary_row("b1")]);
    let again = context_of(&start(&sb, "resume", S1).unwrap(), "SessionStart");
    assert_eq!(
        ids(&again)[1..],
        [
            format!("Current context window id: claude:{S1}:2"),
            format!("Previous context window id: claude:{S1}:1"),
        ]
    );
}

#[test]
fn resume_without_a_record_recovers_the_window_from_the_transcript() {
    let sb = Sandbox::new();
    let boot = "<context_window>\nAgent name: claude (brain: claude)\nFirst context window id: claude:root-session:1\nCurrent context window id: claude:other:4\n</context_window>";
    sb.append_transcript(S1, &[hook_context_row("h1", boot), boundary_row("b1")]);
    let out = context_of(&start(&sb, "resume", S1).unwrap(), "SessionStart");
    assert_eq!(
        ids(&out),
        [
            "First context window id: claude:root-session:1".to_owned(),
            format!("Current context window id: claude:{S1}:5"),
            format!("Previous context window id: claude:{S1}:4"),
        ]
    );
    let state = sb.session_record(S1);
    assert_eq!(state["notesSessionId"], "root-session");
    // The scan is kept before the boot's caches are: its directory is made
    // the owner's alone all the same.
    let scans: Vec<_> = std::fs::read_dir(sb.cache.join("transcript-scans"))
        .unwrap()
        .collect();
    assert_eq!(scans.len(), 1);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&sb.cache).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "the caches are the owner's alone");
}

#[test]
fn resume_of_a_session_notesoup_never_booted_boots_its_first_window() {
    let sb = Sandbox::new();
    // The plugin enabled mid-session: a reply, no boot, no compaction.
    sb.append_transcript(S1, &[reply_row("a1", 1000)]);
    let boot = context_of(&start(&sb, "resume", S1).unwrap(), "SessionStart");
    assert_eq!(
        ids(&boot),
        [
            format!("First context window id: claude:{S1}:1"),
            format!("Current context window id: claude:{S1}:1"),
        ],
        "the first window has no previous one"
    );
}

#[test]
fn compact_without_a_record_boots_the_window_after_the_transcript_s_boot() {
    for boundary_on_disk in [false, true] {
        let sb = Sandbox::new();
        let boot = context_of(&start(&sb, "startup", S1).unwrap(), "SessionStart");
        sb.append_transcript(S1, &[hook_context_row("h1", &boot), reply_row("a1", 1000)]);
        if boundary_on_disk {
            sb.append_transcript(S1, &[boundary_row("b1")]);
        }
        std::fs::remove_file(sb.data.join(format!("sessions/{S1}.json"))).unwrap();
        let next = context_of(&start(&sb, "compact", S1).unwrap(), "SessionStart");
        assert_eq!(
            ids(&next)[1..],
            [
                format!("Current context window id: claude:{S1}:2"),
                format!("Previous context window id: claude:{S1}:1"),
            ],
            "boundary on disk: {boundary_on_disk}"
        );
    }
}

#[test]
fn clear_after_a_prompt_still_carries_the_hand_off() {
    let sb = Sandbox::new();
    start(&sb, "startup", S1).unwrap();
    sb.hook("session-end", &sb.payload("SessionEnd-clear", S1));
    // A prompt's hook ran first in the new session and recorded it.
    prompt(&sb, S2);
    assert_eq!(sb.session_record(S2)["window"]["bootInjected"], false);
    let boot = context_of(&start(&sb, "clear", S2).unwrap(), "SessionStart");
    assert_eq!(
        ids(&boot),
        [
            format!("First context window id: claude:{S1}:1"),
            format!("Current context window id: claude:{S2}:2"),
            format!("Previous context window id: claude:{S1}:1"),
        ]
    );
}

#[test]
fn a_prompt_s_hook_records_the_session_it_recovered() {
    let sb = Sandbox::new();
    sb.append_transcript(S1, &[reply_row("a1", 1000)]);
    assert_eq!(prompt(&sb, S1), None, "far from the reminder line");
    let state = sb.session_record(S1);
    assert_eq!(state["windowOrdinal"], 1);
    assert_eq!(state["window"]["bootInjected"], false);
}

#[test]
fn clear_carries_the_hand_off_into_the_next_window() {
    let sb = Sandbox::new();
    start(&sb, "startup", S1).unwrap();
    start(&sb, "compact", S1).unwrap();
    assert_eq!(
        sb.hook("session-end", &sb.payload("SessionEnd-other", S1)),
        None
    );
    let key = notesoup_core::notes::project_key(&sb.project);
    let marker = sb.data.join("projects").join(&key).join("handoff.json");
    assert!(!marker.exists(), "SessionEnd(other) leaves no marker");

    assert_eq!(
        sb.hook("session-end", &sb.payload("SessionEnd-clear", S1)),
        None
    );
    let hand_off: Value = serde_json::from_slice(&std::fs::read(&marker).unwrap()).unwrap();
    // The marker's fields in the spec's order (claude-code.md 2.8).
    let keys: Vec<&str> = hand_off
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "notesSessionId",
            "previousSessionId",
            "previousTranscriptPath",
            "rootWindowId",
            "windowId",
            "ordinal",
            "origin",
            "createdAt"
        ]
    );
    assert_eq!(hand_off["windowId"], format!("claude:{S1}:2"));
    assert_eq!(hand_off["origin"], "normal");

    let boot = context_of(&start(&sb, "clear", S2).unwrap(), "SessionStart");
    assert_eq!(
        ids(&boot),
        [
            format!("First context window id: claude:{S1}:1"),
            format!("Current context window id: claude:{S2}:3"),
            format!("Previous context window id: claude:{S1}:2"),
        ]
    );
    assert!(
        boot.trim_end()
            .ends_with("Life goes on. It's your mess now."),
        "{boot}"
    );
    assert!(boot.contains("\n\nYou wake up blank, puffy-eyed, and clearly robbed."));
    assert!(!marker.exists(), "the marker is taken");
    assert_eq!(
        start(&sb, "clear", S2),
        None,
        "a repeated SessionStart(clear) boots nothing"
    );
    let state = sb.session_record(S2);
    assert_eq!(state["notesSessionId"], S1);
    assert_eq!(state["chain"][0]["sessionId"], S1);

    // A second /clear with no marker starts a new chain.
    let fresh = context_of(
        &start(&sb, "clear", "33333333-3333-4333-8333-333333333333").unwrap(),
        "SessionStart",
    );
    assert!(
        fresh.contains("Current context window id: claude:33333333-3333-4333-8333-333333333333:1")
    );
    assert!(!fresh.contains("You wake up blank"));
}

#[test]
fn session_notes_survive_clear() {
    let sb = Sandbox::new();
    start(&sb, "startup", S1).unwrap();
    let session_note = sb.notes.join("pi/session").join(S1).join("checkpoint.md");
    put(
        &session_note,
        "---\norigin: self\n---\n\n# Checkpoint: ship the parser\n",
    );
    sb.hook("session-end", &sb.payload("SessionEnd-clear", S1));
    let boot = context_of(&start(&sb, "clear", S2).unwrap(), "SessionStart");
    assert!(
        boot.contains("Checkpoint: ship the parser — checkpoint.md"),
        "{boot}"
    );
}

fn prompt(sb: &Sandbox, session: &str) -> Option<Value> {
    sb.hook(
        "user-prompt-submit",
        &sb.payload("UserPromptSubmit", session),
    )
}

#[test]
fn prompts_get_the_reminder_then_the_warning_once_per_window() {
    let sb = Sandbox::new();
    start(&sb, "startup", S1).unwrap();
    // No reply yet: usage unknown, nothing to say.
    assert_eq!(prompt(&sb, S1), None);
    // 200k window, reserve 30,000: reminder at <= 54,576 left, warning at <= 46,384.
    sb.append_transcript(S1, &[reply_row("a1", 145_000)]);
    assert_eq!(prompt(&sb, S1), None);
    sb.append_transcript(S1, &[reply_row("a2", 150_000)]);
    let reminder = context_of(&prompt(&sb, S1).unwrap(), "UserPromptSubmit");
    assert!(
        reminder.starts_with(
            "<context_window_guidance>\nOnly 3616 tokens left before your final warning"
        ),
        "{reminder}"
    );
    assert!(reminder.contains("Then call /clear (user command;"));
    assert_eq!(prompt(&sb, S1), None);
    sb.append_transcript(S1, &[reply_row("a3", 160_000)]);
    let warning = context_of(&prompt(&sb, S1).unwrap(), "UserPromptSubmit");
    assert!(warning.starts_with("<context_window_guidance>\nFinal warning"));
    assert!(warning.contains("ask the human to run it) immediately."));
    assert_eq!(prompt(&sb, S1), None);

    // A compaction opens a new window: the notices may come again.
    start(&sb, "compact", S1).unwrap();
    sb.append_transcript(S1, &[boundary_row("b1")]);
    assert_eq!(prompt(&sb, S1), None);
    sb.append_transcript(S1, &[reply_row("a4", 170_000)]);
    assert!(context_of(&prompt(&sb, S1).unwrap(), "UserPromptSubmit").contains("Final warning"));
}

#[test]
fn post_tool_batch_delivers_with_its_own_event_name() {
    let sb = Sandbox::new();
    start(&sb, "startup", S1).unwrap();
    sb.append_transcript(S1, &[reply_row("a1", 199_000)]);
    let out = sb
        .hook("post-tool-batch", &sb.payload("PostToolBatch", S1))
        .unwrap();
    assert!(context_of(&out, "PostToolBatch").contains("Final warning"));
    assert_eq!(prompt(&sb, S1), None, "the warning is once per window");
}

fn stop(sb: &Sandbox, session: &str, active: bool) -> Option<Value> {
    let mut payload = sb.payload("Stop", session);
    payload["stop_hook_active"] = active.into();
    sb.hook("stop", &payload)
}

#[test]
fn stop_blocks_once_then_records_the_close_out() {
    let sb = Sandbox::new();
    start(&sb, "startup", S1).unwrap();
    sb.append_transcript(S1, &[reply_row("a1", 100_000)]);
    assert_eq!(stop(&sb, S1, false), None);
    sb.append_transcript(S1, &[reply_row("a2", 160_000)]);
    // Re-entered after someone else's block: never block.
    assert_eq!(stop(&sb, S1, true), None);
    let block = stop(&sb, S1, false).unwrap();
    assert_eq!(block["decision"], "block");
    assert!(block["reason"].as_str().unwrap().contains("Final warning"));
    let done = stop(&sb, S1, true).unwrap();
    assert_eq!(
        done,
        json!({"systemMessage": "notesoup: close-out done. Run /clear for a fresh window; it boots from your notes."})
    );
    assert_eq!(stop(&sb, S1, false), None);
}

/// Claude Code may run Stop before the reply that just ended is in the
/// transcript: the hook waits (bounded) for `last_assistant_message` to be
/// written, so the close-out comes at the reply that crossed the line.
#[test]
fn stop_waits_for_the_reply_the_transcript_has_not_caught_up_with() {
    let sb = Sandbox::new();
    start(&sb, "startup", S1).unwrap();
    sb.append_transcript(S1, &[reply_row("a1", 100_000)]);
    let text = "Split \"parser.rs\" in two.\nNext: the tokenizer, café — done?";
    let late = reply_row("a2", 160_000).replace(
        r#""text":"ok""#,
        &format!(r#""text":{}"#, serde_json::to_string(text).unwrap()),
    );
    let mut payload = sb.payload("Stop", S1);
    payload["last_assistant_message"] = text.into();
    let block = std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(std::time::Duration::from_millis(300));
            sb.append_transcript(S1, std::slice::from_ref(&late));
        });
        sb.hook("stop", &payload)
    })
    .expect("the late reply crossed the warning line");
    assert_eq!(block["decision"], "block");
    assert!(block["reason"].as_str().unwrap().contains("Final warning"));
}

/// A reply that never reaches the transcript holds Stop no longer than its
/// bound: the hook then reads the transcript as it is.
#[test]
fn stop_reads_the_transcript_as_it_is_when_the_reply_never_lands() {
    let sb = Sandbox::new();
    start(&sb, "startup", S1).unwrap();
    sb.append_transcript(S1, &[reply_row("a1", 100_000)]);
    let mut payload = sb.payload("Stop", S1);
    payload["last_assistant_message"] = "A reply Claude Code never wrote down.".into();
    assert_eq!(sb.hook("stop", &payload), None);
}

#[test]
fn a_warning_delivered_at_a_prompt_makes_the_next_stop_the_close_out() {
    let sb = Sandbox::new();
    start(&sb, "startup", S1).unwrap();
    sb.append_transcript(S1, &[reply_row("a1", 160_000)]);
    prompt(&sb, S1).unwrap();
    let done = stop(&sb, S1, false).unwrap();
    assert!(system_message(&done).starts_with("notesoup: close-out done"));
    assert!(done.get("decision").is_none());
}

#[test]
fn the_hard_reserve_asks_the_user_for_clear_at_every_stop() {
    let sb = Sandbox::new();
    start(&sb, "startup", S1).unwrap();
    sb.append_transcript(S1, &[reply_row("a1", 180_000)]);
    let first = stop(&sb, S1, false).unwrap();
    assert_eq!(first["decision"], "block");
    assert_eq!(
        first["systemMessage"],
        "notesoup: context almost full (20000 tokens left). Run /clear for a fresh window; it boots from your notes."
    );
    let second = stop(&sb, S1, true).unwrap();
    assert!(system_message(&second).contains("close-out done"));
    assert!(system_message(&second).contains("20000 tokens left"));
    let third = stop(&sb, S1, false).unwrap();
    assert!(system_message(&third).starts_with("notesoup: context almost full"));
}

#[test]
fn user_config_overrides_the_window_and_the_reserve() {
    let mut sb = Sandbox::new();
    sb.set_env("CLAUDE_PLUGIN_OPTION_CONTEXT_WINDOW_TOKENS", "1000000");
    start(&sb, "startup", S1).unwrap();
    // 1M window, reserve 150,000 (15%): the reminder line is 174,576 left.
    sb.append_transcript(S1, &[reply_row("a1", 680_000)]);
    assert_eq!(prompt(&sb, S1), None);
    // Reserve 300,000: the reminder line moves to 324,576 left.
    sb.set_env("CLAUDE_PLUGIN_OPTION_RESERVE_TOKENS", "300000");
    let reminder = context_of(&prompt(&sb, S1).unwrap(), "UserPromptSubmit");
    assert!(reminder.contains("Only 3616 tokens left"), "{reminder}");
}

#[test]
fn a_garbage_reserve_is_clamped_by_core() {
    let mut sb = Sandbox::new();
    sb.set_env("CLAUDE_PLUGIN_OPTION_CONTEXT_WINDOW_TOKENS", "1000000");
    // Clamped to half the window: warning at 516,384 left, reminder at 524,576.
    sb.set_env("CLAUDE_PLUGIN_OPTION_RESERVE_TOKENS", "900000");
    start(&sb, "startup", S1).unwrap();
    sb.append_transcript(S1, &[reply_row("a1", 470_000)]);
    assert_eq!(prompt(&sb, S1), None);
    sb.append_transcript(S1, &[reply_row("a2", 490_000)]);
    assert!(context_of(&prompt(&sb, S1).unwrap(), "UserPromptSubmit").contains("Final warning"));
}

#[test]
fn subagent_events_and_the_opt_out_are_silent() {
    let mut sb = Sandbox::new();
    let mut payload = sb.payload("SessionStart-startup", S1);
    payload["agent_id"] = "agent-1".into();
    assert_eq!(sb.hook("session-start", &payload), None);
    sb.set_env("NOTESOUP_DISABLE", "1");
    assert_eq!(start(&sb, "startup", S1), None);
    assert!(!sb.data.join("sessions").exists());
}

#[test]
fn bad_input_is_reported_to_the_user_and_exits_zero() {
    let sb = Sandbox::new();
    let output = sb.run(&["hook", "stop"], b"{not json");
    assert!(output.status.success());
    let out: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(system_message(&out).starts_with("notesoup: unreadable hook input:"));
    let unsafe_id = sb
        .hook(
            "session-start",
            &json!({"session_id": "../x", "cwd": sb.project, "source": "startup"}),
        )
        .unwrap();
    assert_eq!(unsafe_id["systemMessage"], "notesoup: Notes boot failed.");
    assert!(
        context_of(&unsafe_id, "SessionStart")
            .starts_with("# notesoup\nunsafe session id \"../x\""),
        "{unsafe_id}"
    );
}

#[test]
fn a_torn_session_record_is_rebuilt() {
    let sb = Sandbox::new();
    put(&sb.data.join(format!("sessions/{S1}.json")), "{torn");
    let boot = context_of(&start(&sb, "startup", S1).unwrap(), "SessionStart");
    assert!(boot.contains(&format!("Current context window id: claude:{S1}:1")));
    assert_eq!(start(&sb, "startup", S1), None);
}

#[test]
fn a_boot_that_cannot_be_built_falls_back_visibly() {
    let mut sb = Sandbox::new();
    // No notes root: neither PI_NOTES_HOME nor HOME resolves.
    sb.set_env("PI_NOTES_HOME", "");
    let output = sb
        .command(&notesoup_bin(), &["hook", "session-start"])
        .env_remove("HOME")
        .env("CLAUDE_CONFIG_DIR", sb.home.join(".claude"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child.stdin.take().unwrap().write_all(
                sb.payload("SessionStart-startup", S1)
                    .to_string()
                    .as_bytes(),
            )?;
            child.wait_with_output()
        })
        .unwrap();
    assert!(output.status.success());
    let out: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(out["systemMessage"], "notesoup: Notes boot failed.");
    assert_eq!(
        context_of(&out, "SessionStart"),
        "# notesoup\nthe notes root is unknown: set PI_NOTES_HOME or HOME"
    );
}

#[test]
fn the_binary_runs_from_a_copied_plugin_directory() {
    let sb = Sandbox::new();
    let copy = sb.plugin_copy();
    let payload = sb.payload("SessionStart-startup", S1);
    let output = sb.run_bin(
        &copy.join("bin/notesoup"),
        &["hook", "session-start"],
        payload.to_string().as_bytes(),
    );
    let out: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(context_of(&out, "SessionStart").contains(&format!("claude:{S1}:1")));
}

#[test]
fn a_forked_session_recovers_its_chain_at_its_first_hook() {
    // `--fork-session` copies the transcript under a new session id and fires
    // no SessionStart through the plugin's matcher; the first hook rebuilds
    // the record from the copied boot.
    let sb = Sandbox::new();
    let boot = context_of(&start(&sb, "startup", S1).unwrap(), "SessionStart");
    sb.append_transcript(
        S2,
        &[hook_context_row("h1", &boot), reply_row("a1", 150_000)],
    );
    let reminder = context_of(&prompt(&sb, S2).unwrap(), "UserPromptSubmit");
    assert!(reminder.contains("Only 3616 tokens left"));
    let state = sb.session_record(S2);
    assert_eq!(state["notesSessionId"], S1);
    assert_eq!(state["windowOrdinal"], 1);
    assert_eq!(state["window"]["bootInjected"], true);
}

const FRESH_PROMPT: &str = "write the tests next,  then ship: `cargo test` — ✓";

#[test]
fn fresh_window_arms_the_close_out_and_carries_its_prompt_through_clear() {
    let sb = Sandbox::new();
    start(&sb, "startup", S1).unwrap();
    let mut payload = sb.payload("UserPromptSubmit", S1);
    payload["prompt"] = format!("/fresh-window {FRESH_PROMPT}").into();
    assert_eq!(sb.hook("user-prompt-submit", &payload), None);
    // The close-out is armed: the next Stop records it and asks for /clear.
    let done = sb.hook("stop", &sb.payload("Stop", S1)).unwrap();
    assert!(system_message(&done).contains("close-out done"), "{done}");
    sb.hook("session-end", &sb.payload("SessionEnd-clear", S1));
    let boot = context_of(&start(&sb, "clear", S2).unwrap(), "SessionStart");
    assert!(
        boot.ends_with(&format!(
            "\n\nThe human asked for this window (with /fresh-window):\n{FRESH_PROMPT}"
        )),
        "{boot}"
    );
    // Once only: a later window does not repeat it.
    let record = sb.session_record(S2);
    assert!(record.get("nextWindowPrompt").is_none(), "{record}");
}

#[test]
fn fresh_window_is_recognised_only_as_the_command() {
    use notesoup_claude::hook::fresh_window_args;
    assert_eq!(fresh_window_args("/fresh-window"), Some(""));
    assert_eq!(fresh_window_args("/fresh-window  a  b \n"), Some("a  b "));
    assert_eq!(fresh_window_args("/notesoup:fresh-window go"), Some("go"));
    assert_eq!(fresh_window_args("/fresh-windows go"), None);
    assert_eq!(fresh_window_args("please /fresh-window"), None);
}

/// A saved-heads file changed by anyone but notesoup (its bytes edited, the
/// older unsealed format, a key others can read) never changes a boot: the
/// notes are read as they are.
#[test]
fn crafted_note_heads_never_change_a_boot() {
    let sessions = [
        "a1111111-1111-4111-8111-111111111111",
        "a2222222-2222-4222-8222-222222222222",
        "a3333333-3333-4333-8333-333333333333",
        "a4444444-4444-4444-8444-444444444444",
        "a5555555-5555-4555-8555-555555555555",
    ];
    let sb = Sandbox::new();
    settled_alpha_and_beta(&sb);
    let boot = |session: &str| {
        // Without the kept shelves, so every boot lists through the heads.
        let _ = std::fs::remove_dir_all(sb.cache.join("boot-shelves"));
        context_of(&start(&sb, "startup", session).unwrap(), "SessionStart")
    };
    assert_eq!(order(&boot(sessions[0])), "alpha");
    let saved = sb.kept_file("note-heads");
    let real = std::fs::read(&saved).unwrap();
    let at = real
        .windows(10)
        .position(|w| w == b"2026-01-01")
        .expect("beta's head is saved");
    // beta's head says it is the newer note: in place, same length.
    let mut forged = real.clone();
    forged[at..at + 10].copy_from_slice(b"2026-01-09");
    std::fs::write(&saved, &forged).unwrap();
    assert_eq!(order(&boot(sessions[1])), "alpha", "a forged head");
    // The same head in the older, unsealed format.
    std::fs::write(
        &saved,
        [
            &b"notesoup note heads 1\n"[..],
            &forged[b"notesoup note heads 2\n".len()..],
        ]
        .concat(),
    )
    .unwrap();
    assert_eq!(order(&boot(sessions[2])), "alpha", "the older format");
    // The real file, its seal key readable by others: not used (and made
    // anew at the next save).
    std::fs::write(&saved, &real).unwrap();
    let key_file = sb.cache.join("note-heads/.note-heads.key");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(order(&boot(sessions[3])), "alpha");
    let mode = std::fs::metadata(&key_file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "a new key");
    assert_eq!(order(&boot(sessions[4])), "alpha");
}
