//! `tsc --noEmit` over the shim and the dream extension: they must
//! type-check against Pi 1.6.0's own declarations and the protocol types
//! generated from the Rust side.

use serde_json::json;

use super::support::{Pi, package_dir};

#[test]
fn the_shim_type_checks_against_pi_and_the_generated_protocol() {
    let pi = Pi::from_env();
    let tsc = pi.node_modules.join("typescript/bin/tsc");
    assert!(
        tsc.is_file(),
        "no TypeScript at {}: run cargo xtask hosts pi",
        tsc.display()
    );
    let temp = tempfile::tempdir().unwrap();
    // Pi's packages resolve from the SDK install, as Pi supplies them to a
    // loaded package; nothing is written into the package folder.
    let config = json!({
        "compilerOptions": {
            "target": "ES2022",
            "module": "ESNext",
            "moduleResolution": "Bundler",
            "strict": true,
            "noEmit": true,
            // The shim imports its payload module by its file name, as
            // Pi's loader and Node (for the bench) both take it.
            "allowImportingTsExtensions": true,
            "skipLibCheck": true,
            "baseUrl": ".",
            "paths": { "@earendil-works/*": [pi.node_modules.join("@earendil-works/*")] },
            "typeRoots": [pi.node_modules.join("@types")],
            "types": ["node"],
        },
        "files": [
            package_dir().join("extensions/notesoup.ts"),
            package_dir().join("dreamer/dream.ts"),
        ],
    });
    let tsconfig = temp.path().join("tsconfig.json");
    std::fs::write(&tsconfig, config.to_string()).unwrap();
    notesoup_test_support::child::stdout_of(
        std::process::Command::new(&pi.node)
            .arg(&tsc)
            .arg("-p")
            .arg(&tsconfig),
    );
}
