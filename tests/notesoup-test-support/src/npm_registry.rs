//! The packages `cargo xtask dist` lays out, installed as a user installs
//! them: a real npm registry (verdaccio) on 127.0.0.1 to publish them to,
//! and a fresh machine to install them on (a temporary HOME whose PATH
//! holds Node and npm but no Rust toolchain and no notesoup binary). The
//! npm install tests of notesoup-e2e (Pi, Claude Code) and notesoup-dsh
//! (dsh) share it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::child::{Reaped, free_port, stdout_of};

/// A variable the test needs, naming a path that exists, or a failure
/// saying how to get it (`how`).
pub fn required_path(name: &str, how: &str) -> PathBuf {
    let value = std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| panic!("{name} is not set: {how}"));
    let path = PathBuf::from(value);
    assert!(
        path.exists(),
        "{name}={} does not exist: {how}",
        path.display()
    );
    path
}

/// How to lay out the packages, for a failure that lacks them.
pub const HOW_TO_DIST: &str =
    "run `cargo xtask dist --profile dev` and export NOTESOUP_DIST=target/dist";

/// How to install verdaccio, for a failure that lacks it.
pub const HOW_TO_VERDACCIO: &str = "run `eval \"$(cargo xtask hosts verdaccio)\"`";

/// The verdaccio process, ended when the test ends, however it ends.
#[derive(Debug)]
pub struct Registry {
    _child: Reaped,
    /// `http://127.0.0.1:PORT/`.
    pub url: String,
}

impl Registry {
    /// Verdaccio (`verdaccio`, its `bin/verdaccio` script, run by `node`)
    /// on a free port of 127.0.0.1, its storage under `dir`, no uplink
    /// (nothing is fetched from the internet), publishing for authenticated
    /// users only, as a real registry; a request may be as large as Claude
    /// Code's limit on a plugin tarball (debug binaries are larger than its
    /// default 10 MB).
    pub fn start(node: &Path, verdaccio: &Path, dir: &Path) -> Self {
        std::fs::create_dir_all(dir).unwrap();
        let config = dir.join("config.yaml");
        std::fs::write(
            &config,
            "storage: ./storage\n\
             auth:\n  htpasswd:\n    file: ./htpasswd\n\
             uplinks: {}\n\
             packages:\n  '**':\n    access: $all\n    publish: $authenticated\n    unpublish: $authenticated\n\
             log: { type: stdout, format: pretty, level: warn }\n\
             max_body_size: 512mb\n",
        )
        .unwrap();
        let port = free_port();
        let child = Reaped::quiet_server(
            Command::new(node)
                .arg(verdaccio)
                .args(["--config"])
                .arg(&config)
                .args(["--listen", &format!("127.0.0.1:{port}")])
                .current_dir(dir),
            port,
            std::time::Duration::from_secs(120),
            "verdaccio",
        );
        Self {
            _child: child,
            url: format!("http://127.0.0.1:{port}/"),
        }
    }

    /// A user's token (`npm adduser`'s request), for `npm publish`.
    pub fn token(&self, node: &Path) -> String {
        let script = format!(
            "const r = await fetch('{}-/user/org.couchdb.user:notesoup', {{method: 'PUT', \
             headers: {{'content-type': 'application/json'}}, \
             body: JSON.stringify({{name: 'notesoup', password: 'notesoup-ci'}})}}); \
             if (r.status !== 201) throw new Error(`adduser: ${{r.status}}`); \
             console.log((await r.json()).token);",
            self.url
        );
        stdout_of(Command::new(node).args(["--input-type=module", "-e", &script]))
            .trim()
            .to_owned()
    }

    /// The `.npmrc` lines that point npm at this registry as a user would,
    /// with a user's token (`npm adduser`) so that `npm publish` may.
    pub fn npmrc(&self, node: &Path) -> String {
        let token = self.token(node);
        let host = self.url.trim_start_matches("http:");
        format!("registry={}\n{host}:_authToken={token}\n", self.url)
    }
}

/// The dist's tarballs (`NOTESOUP_DIST/tarballs/*.tgz`), sorted by name.
pub fn dist_tarballs(dist: &Path) -> Vec<PathBuf> {
    let mut tarballs: Vec<PathBuf> = std::fs::read_dir(dist.join("tarballs"))
        .expect("the dist tarballs")
        .map(|e| e.unwrap().path())
        .collect();
    tarballs.sort();
    tarballs
}

/// `HOME/bin` of a fresh machine: `node` (a link to `node`) and `npm` (the
/// system's npm script, run by that node). The folder.
pub fn fresh_bin(home: &Path, node: &Path) -> PathBuf {
    let bin = home.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(node, bin.join("node")).unwrap();
    let npm = ["/usr/bin/npm", "/usr/local/bin/npm"]
        .into_iter()
        .map(Path::new)
        .find(|p| p.exists())
        .expect("npm is installed (/usr/bin/npm or /usr/local/bin/npm)");
    std::os::unix::fs::symlink(npm, bin.join("npm")).unwrap();
    bin
}

/// The programs a fresh machine has none of.
pub const NOT_ON_A_FRESH_MACHINE: [&str; 6] = [
    "cargo",
    "rustc",
    "rustup",
    "notesoup",
    "notesoup-pi",
    "notesoup-dsh",
];

/// Fails when a folder of `path` holds cargo, rustc, rustup or a notesoup
/// binary.
pub fn assert_nothing_of_notesoup_or_rust_on(path: &OsString) {
    for dir in std::env::split_paths(path) {
        for name in NOT_ON_A_FRESH_MACHINE {
            assert!(
                !dir.join(name).exists(),
                "{} is on the fresh PATH",
                dir.join(name).display()
            );
        }
    }
}
