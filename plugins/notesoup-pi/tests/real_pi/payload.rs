//! The shim's payload helpers against the sidecar's side of the protocol,
//! run by Node as Pi's loader runs them (the types stripped).

use std::process::Command;

use notesoup_pi::bridge::protocol::ids_hash;
use notesoup_test_support::child::run_within;
use serde_json::{Value, json};

use super::support::{Pi, package_dir};

/// `idsHash(entries)` of the shim's `payload.ts`, over `entries` as JSON.
fn shim_ids_hash(pi: &Pi, entries: &Value) -> u32 {
    let module = package_dir().join("extensions/payload.ts");
    let script = format!(
        "import {{ idsHash }} from {};\n\
         import {{ readFileSync }} from \"node:fs\";\n\
         process.stdout.write(String(idsHash(JSON.parse(readFileSync(0, \"utf8\")))));\n",
        json!(module.to_str().unwrap())
    );
    let (status, stdout, stderr) = run_within(
        Command::new(&pi.node).args(["--input-type=module", "-e", &script]),
        entries.to_string().as_bytes(),
    );
    assert!(status.success(), "{stderr}");
    stdout.trim().parse().unwrap()
}

/// The hash the shim sends with a session left to the file (`onDisk`) is
/// the one the sidecar computes over the ids it read: UTF-16 units (a
/// character outside the BMP is two), an id that is not a string counting
/// as `""`. A mismatch would not fail a session (the sidecar asks for every
/// entry on the line), only make each start resend the session.
#[test]
fn the_shims_ids_hash_is_the_sidecars() {
    let pi = Pi::from_env();
    let mut entries = vec![
        json!({"id": "e0000001"}),
        json!({"id": "é"}),
        json!({"id": "😀x"}),
        json!({"id": ""}),
        json!({"type": "message"}),
        json!({"id": 5}),
        json!({"id": null}),
    ];
    // A long run of Pi's own ids (8 hex digits), past what V8 interprets.
    let mut state: u32 = 0x2545_f491;
    for _ in 0..20_000 {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        entries.push(json!({"id": format!("{state:08x}")}));
    }
    let ids: Vec<&str> = entries
        .iter()
        .map(|entry| entry["id"].as_str().unwrap_or(""))
        .collect();
    for count in [0, 1, 7, entries.len()] {
        assert_eq!(
            shim_ids_hash(&pi, &Value::from(entries[..count].to_vec())),
            ids_hash(ids[..count].iter().copied()),
            "the first {count} entries"
        );
    }
}
