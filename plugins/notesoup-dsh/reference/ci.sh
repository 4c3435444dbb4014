#!/usr/bin/env bash
# notesoup-dsh's reference-host tests, as CI runs them: installs the pinned
# dsh (Node 22 and pnpm from npm, then dsh from the committed lockfile; only
# Node >= 18 and npm need to be present) and verdaccio (a local npm
# registry), lays out the npm packages from a debug build of the three
# binaries (`cargo xtask dist --profile dev --no-build`, for the npm install
# test), and runs the crate's tests with the end-to-end and in-process
# harness tests switched on (feature reference-hosts).
#
# The install goes to ${NOTESOUP_REF_DIR:-$HOME/.cache/notesoup-ref}; keep that
# directory between CI runs to skip it.
set -euo pipefail
cd "$(dirname "$0")/../../.."

# Not `eval "$(...)"`: a failed install must stop here, not run the tests.
exports="$(cargo xtask install-dsh)"
eval "$exports"
exports="$(cargo xtask hosts verdaccio)"
eval "$exports"
cargo build -p notesoup-claude -p notesoup-pi -p notesoup-dsh --bins
cargo xtask dist --profile dev --no-build --out target/dist
export NOTESOUP_DIST="$PWD/target/dist"
cargo test -p notesoup-dsh --features reference-hosts
