#!/usr/bin/env bash
# folio's packages: the folio-mcp Python wheel (maturin, `bindings = "bin"`:
# the folio binary and the folio-mcp launcher on PATH, onnxruntime as a
# dependency), the MCP Bundle (.mcpb) and the MCP Registry server.json, all
# at the workspace's version.
#
# usage: scripts/wheel.sh build [--dev]   the wheel (release profile; --dev
#                                         reuses the debug build) into target/wheels,
#                                         the manifests and the .mcpb into target/package
#        scripts/wheel.sh test            builds on the dev profile, checks the
#                                         wheel with auditwheel, installs it into an
#                                         empty virtualenv and runs an MCP session
#                                         through it, validates the manifests
#                                         (tests/install/test_wheel.py, test_package.py)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
home=${FOLIO_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/folio}
py=$home/setup-venv/bin/python
[ -x "$py" ] || { echo "wheel: run scripts/setup.sh first (it installs maturin)" >&2; exit 1; }
mcpb="node $root/tests/install/node_modules/@anthropic-ai/mcpb/dist/cli/cli.js"

build() { # profile
  local profile=$1 wheels=$root/target/wheels
  rm -f "$wheels"/folio_mcp-*.whl
  (cd packaging/pypi && "$py" -m maturin build --profile "$profile" --out "$wheels" >&2)
  ls "$wheels"/folio_mcp-*.whl
}

bundle() { # binary
  local out=$root/target/package
  "$py" scripts/package.py manifests "$out" >/dev/null
  "$py" scripts/package.py bundle "$out" "$1" >/dev/null
  $mcpb pack "$out/bundle" "$out/folio.mcpb" >&2
  echo "$out/folio.mcpb"
}

case "${1:-}" in
  build)
    profile=release; dir=release
    [ "${2:-}" = --dev ] && { profile=dev; dir=debug; }
    wheel=$(build $profile)
    echo "$wheel"
    bundle "target/$dir/folio"
    ;;
  test)
    wheel=$(build dev)
    report=$("$py" -m auditwheel show "$wheel")
    echo "$report" >&2
    grep -q "is consistent with" <<<"$report"
    cd tests/install
    FOLIO_WHEEL=$wheel FOLIO_BIN=$root/target/debug/folio MCPB="$mcpb" \
      "$py" -m pytest -q -s -p no:cacheprovider test_wheel.py test_package.py
    ;;
  *) sed -n '2,16p' "$0" >&2; exit 2 ;;
esac
