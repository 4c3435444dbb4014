#!/usr/bin/env bash
# notesoup-dsh's reference-host tests, as CI runs them: installs the pinned
# dsh (Node 22 and pnpm from npm, then dsh from the committed lockfile; only
# Node >= 18 and npm need to be present) and runs the crate's tests with the
# end-to-end and in-process harness tests switched on (feature
# reference-hosts).
#
# The install goes to ${NOTESOUP_REF_DIR:-$HOME/.cache/notesoup-ref}; keep that
# directory between CI runs to skip it.
set -euo pipefail
cd "$(dirname "$0")/../../.."

# Not `eval "$(...)"`: a failed install must stop here, not run the tests.
exports="$(cargo xtask install-dsh)"
eval "$exports"
cargo test -p notesoup-dsh --features reference-hosts
