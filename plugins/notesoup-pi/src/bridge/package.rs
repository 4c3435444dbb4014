//! The Pi package (`plugins/notesoup-pi/package/`), embedded so that
//! `notesoup-pi install` can write it from an installed binary. The skills
//! and the playbook are core's assets; the package folder holds
//! byte-identical copies (a test checks them), so `pi install
//! <checkout>/plugins/notesoup-pi/package` works too.

use notesoup_core::dream::DreamAsset;

/// `package.json` with the `pi` manifest.
pub const PACKAGE_JSON: &str = include_str!("../../package/package.json");
/// The shim Pi loads (through jiti: TypeScript needs no build step).
pub const SHIM: &str = include_str!("../../package/extensions/notesoup.ts");
/// The shim's payload helpers, a module of their own (the sidecar bench
/// imports them too).
pub const SHIM_PAYLOAD: &str = include_str!("../../package/extensions/payload.ts");

/// The sidecar's handshake (its `ready` body), which the shim serves from
/// a new sidecar's hello on and whose tools, commands and events it
/// registers while Pi loads (a test keeps it equal to the handshake).
pub const SHIM_READY: &str = include_str!("../../package/extensions/ready.json");

/// Every file of the package, by path relative to its folder: core's
/// assets (the skills and the playbook the dream skill reads) among them.
pub fn files() -> Vec<(&'static str, &'static str)> {
    let own = [
        ("package.json", PACKAGE_JSON),
        ("extensions/notesoup.ts", SHIM),
        ("extensions/payload.ts", SHIM_PAYLOAD),
        ("extensions/ready.json", SHIM_READY),
        ("dreamer/dream.ts", crate::dreamer::EXTENSION),
    ];
    let assets = DreamAsset::ALL.map(|asset| (asset.path(), asset.text()));
    own.into_iter().chain(assets).collect()
}
