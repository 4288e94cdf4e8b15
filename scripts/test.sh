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
# The lints run beside the tests, at the lowest CPU priority, in a target
# directory of their own (cargo holds its build directory for a whole
# command): they take the cores the tests leave idle, most of the
# end-to-end suites' time, instead of a quarter of an hour of their own.
clippy_log=target/clippy.log
mkdir -p target
nice -n 19 cargo clippy --all-targets --locked --target-dir target/clippy -- -D warnings \
  >"$clippy_log" 2>&1 &
clippy=$!
trap 'kill $clippy 2>/dev/null || true' EXIT
cargo test --workspace --locked
# The folio-mcp wheel installed into an empty virtualenv and driven over MCP,
# and the bundle and registry manifests (reuses the debug build).
scripts/wheel.sh test
if ! wait $clippy; then
  cat "$clippy_log" >&2
  echo "test: cargo clippy found warnings or errors (above)" >&2
  exit 1
fi
trap - EXIT
echo "test: clippy clean; every test passed"
