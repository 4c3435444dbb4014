//! Workspace automation for notesoup, run as `cargo xtask <command>`.
//!
//! xtask may depend on `notesoup-core` (for code generation) but never on a
//! plugin, and nothing may depend on xtask.

mod ci;
mod claude_bench;
mod claude_hosts;
mod claude_plugin;
mod codegen;
mod deps;
mod dist;
mod dsh;
mod dsh_bench;
mod hosts;
mod measure;
mod pi_bench;
mod refdir;
mod search_bench;
mod test_lanes;
// Checked by its tests only: xtask's build shares the test build's features.
#[cfg(test)]
mod unify;
mod versions;
mod workspace;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  check-deps   enforce the crate layering (cargo metadata + cargo deny)
  ci           everything CI runs: fmt, clippy, check-deps, tests
  claude-bench [--runs N]
               time the Claude plugin's hooks and an MCP call against node -e ''
  claude-bench report [--runs N]
               notesoup report (table and --html) on a 50 MB transcript, against
               Claude Code resuming it for one turn (fake API)
  claude-hosts [claude|mcp|inspector|all]
               install the reference Claude Code, Python MCP client and MCP Inspector;
               prints export lines: eval \"$(cargo xtask claude-hosts)\"
  claude-plugin [--out DIR] [--debug]
               build notesoup and assemble the Claude Code plugin marketplace
               (default target/claude-plugin)
  dist [--profile PROFILE] [--target TRIPLE]... [--out DIR] [--registry URL] [--no-build]
               build the binaries (default profile release; this machine's target
               or each TRIPLE's) and lay out the npm packages (a platform package
               per target, Pi, Claude Code plugin), a marketplace, tarballs and
               SHA256SUMS (default target/dist)
  codegen      write generated/ (TypeScript declarations, JSON Schemas);
               --check only reports stale files
  hosts pi     install Node 22, the Pi SDK and TypeScript (the real-pi tests) and print env exports
  pi-bench [ROUNDS]
               time notesoup-pi's sidecar start and its per-event round trip inside
               real Pi next to a no-op extension
  pi-bench context [ENTRIES] [RUNS]
               notesoup-pi context on a long session written by real Pi, against
               Pi opening it (SessionManager.open + buildSessionContext)
  pi-bench report [ENTRIES] [RUNS]
               notesoup-pi report (table and --html) on the same session, against
               Pi opening it
  pi-bench report-all [SESSIONS] [RUNS]
               notesoup-pi report --all over a project of copied Pi goldens, on
               its thread pool and pinned to one core
  pi-bench resume [--booted] [RUNS] [ENTRIES...]
               real Pi resuming a session and answering one prompt, without an
               extension, with a no-op one and with notesoup (--booted: a
               session notesoup has booted before)
  pi-bench sidecar [ENTRIES] [RUNS] [EVENTS] [BASELINE_BINARY]
               the sidecar alone over its pipes: session_start and per-event times
  search-bench [--runs N] [--mb MB] [--also PATH] [--binary PATH] [--keep]
               notesoup notes search against rg -i -F -c over the same ~15 MB of notes
  dsh-bench report [EVENTS] [RUNS]
               notesoup-dsh report (table and --html) on a long dsh session log,
               against the pinned dsh resuming it headless
  golden-pi    regenerate plugins/notesoup-pi/tests/golden with the real Pi SDK
  install-dsh  install Node 22, pnpm and the pinned dsh for notesoup-dsh's
               opt-in tests; prints `export NOTESOUP_DSH_ROOT=...` to eval
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("check-deps") => deps::run(),
        Some("ci") => ci::run(),
        Some("claude-bench") => claude_bench::run(&args[1..]),
        Some("claude-hosts") => claude_hosts::run(&args[1..]),
        Some("claude-plugin") => claude_plugin::run(&args[1..]),
        Some("codegen") => codegen::run(&args[1..]),
        Some("dist") => dist::run(&args[1..]),
        Some("hosts") => hosts::run(&args[1..]),
        Some("golden-pi") => hosts::golden_pi(),
        Some("pi-bench") => pi_bench::run(&args[1..]),
        Some("search-bench") => search_bench::run(&args[1..]),
        Some("install-dsh") => dsh::run(),
        Some("dsh-bench") => dsh_bench::run(&args[1..]),
        Some("-h" | "--help" | "help") => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => {
            eprint!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("xtask: {err:#}");
            ExitCode::FAILURE
        }
    }
}
