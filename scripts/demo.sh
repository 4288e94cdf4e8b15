#!/usr/bin/env bash
# Sets folio up and runs its main job on the bundled sample: installs the
# model and runtime, builds the release binary, ingests samples/ into a
# library and runs a cited search.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
cargo build --release --locked
folio=target/release/folio
data=${FOLIO_DATA_DIR:-$PWD/.folio-demo}
"$folio" --data-dir "$data" ingest samples --library demo
"$folio" --data-dir "$data" search "how does dropout prevent overfitting" --library demo --top-k 3
