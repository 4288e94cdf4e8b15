#!/usr/bin/env bash
# Runs folio's full test suite: formatting, lints, and every test (the
# end-to-end ones drive the real binary with the real model, which
# scripts/setup.sh installs first; it skips what is already in place).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
# The PostgreSQL backend's tests run against a real server (never skipped).
FOLIO_TEST_STORE_URL=$(scripts/postgres.sh start | sed -n 's/^FOLIO_STORE_URL=//p')
export FOLIO_TEST_STORE_URL
cargo fmt --all -- --check
cargo clippy --all-targets --locked -- -D warnings
cargo test --workspace --locked
# The folio-mcp wheel installed into an empty virtualenv and driven over MCP,
# and the bundle and registry manifests (reuses the debug build).
scripts/wheel.sh test
