//! One notes root, three hosts: what one host writes, the others boot with
//! and read; each host's `@self/` is the others' `@agents/<slug>/`, readable
//! and never writable.

use std::path::Path;

use notesoup_core::notes::project_key;
use serde_json::{Value, json};

use crate::hosts::{
    CLAUDE_AGENT, Claude, DSH_AGENT, Dsh, HostAnswer, HostMachine, PI_AGENT, pi_answers, pi_boot,
    pi_session,
};

/// The notes one host writes: `(address, content)` in its project, human and
/// self homes.
fn notes_of(host: &str) -> [(String, String); 3] {
    [
        (
            format!("@project/{host}-decision.md"),
            format!("# Decision from {host}\n\nThe shop keeps prices in cents ({host}).\n"),
        ),
        (
            format!("@human/{host}-style.md"),
            format!("# Style seen by {host}\n\nThe human likes short answers ({host}).\n"),
        ),
        (
            format!("@self/{host}-diary.md"),
            format!("# Diary of {host}\n\nToday {host} learned the shop's layout.\n"),
        ),
    ]
}

fn write_args(address: &str, content: &str) -> Value {
    json!({"address": address, "content": content})
}

/// The same note as another host addresses it: `@self/` becomes
/// `@agents/<slug>/`.
fn seen_from_elsewhere(address: &str, agent: &str) -> String {
    match address.strip_prefix("@self/") {
        Some(rest) => format!("@agents/{agent}/{rest}"),
        None => address.to_owned(),
    }
}

/// `notes_read` calls for every note the other hosts wrote.
fn reads_of(others: &[(&str, &str)]) -> Vec<(String, String)> {
    others
        .iter()
        .flat_map(|(host, agent)| {
            notes_of(host)
                .into_iter()
                .map(move |(address, content)| (seen_from_elsewhere(&address, agent), content))
        })
        .collect()
}

/// A read answer shows the note's content after its header.
fn check_read(answer: HostAnswer, address: &str, content: &str) {
    let text = answer.ok();
    assert!(text.contains(address), "{address}: {text}");
    assert!(
        text.trim_end().ends_with(content.trim_end()),
        "{address}: {text}"
    );
}

/// A boot lists every durable shared note and only its own host's diary.
fn check_boot(boot: &str, host: &str, agent: &str) {
    for writer in ["claude", "dsh", "pi"] {
        let [project, human, diary] = notes_of(writer);
        assert!(
            boot.contains(&project.0),
            "{host} boot lacks {}:\n{boot}",
            project.0
        );
        assert!(
            boot.contains(&human.0),
            "{host} boot lacks {}:\n{boot}",
            human.0
        );
        let own = writer == host;
        assert_eq!(
            boot.contains(&format!("{writer}-diary.md")),
            own,
            "{host} boot and {}:\n{boot}",
            diary.0
        );
    }
    assert!(
        boot.contains(&format!("@self → @agents/{agent}")),
        "{host} boot names its agent home:\n{boot}"
    );
}

#[test]
fn three_hosts_share_one_notes_root() {
    let world = HostMachine::new();
    let mut claude = Claude::new(&world);
    let mut dsh = Dsh::new(&world);
    let dsh_session = "session-0b7e4f5a-1c2d-4e3f-8a9b-0c1d2e3f4a5b";

    // Claude and dsh write first, each through its own protocol.
    for (address, content) in notes_of("claude") {
        claude
            .call("notes_write", write_args(&address, &content))
            .ok();
    }
    for (address, content) in notes_of("dsh") {
        dsh.call(dsh_session, "notes_write", write_args(&address, &content))
            .ok();
    }

    // A Pi session writes its notes, reads the others' and is refused a
    // write into another agent's home.
    let pi_reads = reads_of(&[("claude", CLAUDE_AGENT), ("dsh", DSH_AGENT)]);
    let writes: Vec<(&str, Value)> = notes_of("pi")
        .iter()
        .map(|(address, content)| ("notes_write", write_args(address, content)))
        .collect();
    let reads: Vec<(&str, Value)> = pi_reads
        .iter()
        .map(|(address, _)| ("notes_read", json!({"address": address})))
        .collect();
    let intrusion = vec![(
        "notes_write",
        write_args(
            &format!("@agents/{CLAUDE_AGENT}/from-pi.md"),
            "# Not mine\n",
        ),
    )];
    let pi = pi_session(
        &world,
        "6a1f0c3e-2b4d-4c5e-9f60-718293a4b5c6",
        vec![writes, reads, intrusion],
    );
    let answers = pi_answers(&pi);
    assert_eq!(answers.len(), 3 + pi_reads.len() + 1, "{answers:#?}");
    for answer in &answers[..3] {
        assert!(!answer.is_error, "{}", answer.text);
    }
    for (answer, (address, content)) in answers[3..].iter().zip(&pi_reads) {
        check_read(answer.clone(), address, content);
    }
    answers.last().unwrap().refused("invalid_scope");

    // Claude reads what dsh and Pi wrote, and may not write into their homes.
    for (address, content) in reads_of(&[("dsh", DSH_AGENT), ("pi", PI_AGENT)]) {
        check_read(
            claude.call("notes_read", json!({"address": address})),
            &address,
            &content,
        );
    }
    claude
        .call(
            "notes_write",
            write_args(
                &format!("@agents/{PI_AGENT}/from-claude.md"),
                "# Not mine\n",
            ),
        )
        .refused("invalid_scope");

    // dsh reads what Claude and Pi wrote, likewise.
    for (address, content) in reads_of(&[("claude", CLAUDE_AGENT), ("pi", PI_AGENT)]) {
        check_read(
            dsh.call(dsh_session, "notes_read", json!({"address": address})),
            &address,
            &content,
        );
    }
    dsh.call(
        dsh_session,
        "notes_write",
        write_args(
            &format!("@agents/{CLAUDE_AGENT}/from-dsh.md"),
            "# Not mine\n",
        ),
    )
    .refused("invalid_scope");

    // No refused write reached the disk.
    for (agent, from) in [
        (CLAUDE_AGENT, "pi"),
        (PI_AGENT, "claude"),
        (CLAUDE_AGENT, "dsh"),
    ] {
        let path = world
            .notes
            .join("agents")
            .join(agent)
            .join(format!("from-{from}.md"));
        assert!(!path.exists(), "{}", path.display());
    }

    // Fresh windows of every host boot with all the shared notes.
    let claude_boot = claude.boot(&world, "3c9d2e1f-4a5b-4c6d-8e7f-90a1b2c3d4e5");
    check_boot(&claude_boot, "claude", CLAUDE_AGENT);
    let dsh_boot = dsh.boot("session-9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a");
    check_boot(&dsh_boot, "dsh", DSH_AGENT);
    let pi_root = pi_session(&world, "7b2a1d4f-3c5e-4d6f-a071-8293a4b5c6d7", Vec::new());
    check_boot(&pi_boot(&pi_root), "pi", PI_AGENT);

    // After a SessionStart of its own, Claude edits dsh's decision; dsh reads
    // the edit.
    claude
        .call(
            "notes_update",
            json!({"address": "@project/dsh-decision.md", "edits": [
                {"oldText": "in cents (dsh).", "newText": "in cents (dsh), rounded by claude."}
            ]}),
        )
        .ok();
    let edited = dsh
        .call(
            dsh_session,
            "notes_read",
            json!({"address": "@project/dsh-decision.md"}),
        )
        .ok();
    assert!(
        edited.ends_with("\n\nThe shop keeps prices in cents (dsh), rounded by claude.\n"),
        "{edited}"
    );

    // On disk: one project home for all three (one project key), one human
    // home, one agent home per host.
    let project_homes = names_in(&world.notes.join("project"));
    assert_eq!(project_homes, [project_key(&world.project)]);
    assert_eq!(
        names_in(&world.notes.join("project").join(&project_homes[0])),
        ["claude-decision.md", "dsh-decision.md", "pi-decision.md"]
    );
    assert_eq!(
        names_in(&world.notes.join("human")),
        ["claude-style.md", "dsh-style.md", "pi-style.md"]
    );
    assert_eq!(
        names_in(&world.notes.join("agents")),
        ["claude", "dsh", "pi"]
    );
}

/// The sorted file names in `dir`.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
