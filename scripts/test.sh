#!/usr/bin/env bash
# Runs folio's full test suite: formatting, lints, and every test (the
# end-to-end ones drive the real binary with the real model, which
# scripts/setup.sh installs first; it skips what is already in place).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
cargo fmt --all -- --check
cargo clippy --all-targets --locked -- -D warnings
cargo test --workspace --locked
