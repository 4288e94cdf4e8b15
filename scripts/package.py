"""folio's distribution manifests, all from the workspace's version number.

  package.py manifests OUT
      Writes OUT/manifest.json (an MCP Bundle manifest, version 0.3, for a
      binary server) and OUT/server.json (an MCP Registry entry for the
      folio-mcp PyPI package, run with uvx, MCP over stdio).

  package.py bundle OUT BINARY
      Lays out OUT/bundle/ (manifest.json and server/folio, a copy of BINARY)
      for `mcpb pack`, which scripts/wheel.sh runs.

The registry name's namespace (io.github.folio-mcp) must be proven by the
publisher; the PyPI package's README carries the `mcp-name:` line the
registry checks.
"""
import json
import os
import shutil
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REGISTRY_NAME = "io.github.folio-mcp/folio"
PACKAGE = "folio-mcp"
SERVER_SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json"
DESCRIPTION = "Local-first document search for agents: hybrid BM25 + vector search with citations"


def version():
    with open(ROOT / "Cargo.toml", "rb") as f:
        return tomllib.load(f)["workspace"]["package"]["version"]


def bundle_manifest(v):
    return {
        "manifest_version": "0.3",
        "name": "folio",
        "display_name": "folio",
        "version": v,
        "description": DESCRIPTION,
        "long_description": (
            "folio ingests PDF, Office, HTML, Markdown, text, URLs and Zotero libraries, chunks them "
            "along their structure, embeds them on the local CPU and answers hybrid BM25 + vector "
            "searches with citation-ready results. The embedding model is fetched from the Hugging "
            "Face hub on first use."
        ),
        "author": {"name": "folio contributors"},
        "license": "Apache-2.0",
        "keywords": ["rag", "search", "citations", "pdf", "embeddings"],
        "server": {
            "type": "binary",
            "entry_point": "server/folio",
            "mcp_config": {
                "command": "${__dirname}/server/folio",
                "args": ["serve", "--stdio", "--toolsets", "${user_config.toolsets}"],
                "env": {"FOLIO_DATA_DIR": "${user_config.data_dir}"},
            },
        },
        "user_config": {
            "data_dir": {
                "type": "directory",
                "title": "Data directory",
                "description": "Where folio keeps its libraries",
                "default": "${HOME}/.local/share/folio/data",
                "required": False,
            },
            "toolsets": {
                "type": "string",
                "title": "Toolsets",
                "description": "Comma-separated MCP toolsets: native, citeloom, bmcis, hansard, mcpvectordb",
                "default": "native",
                "required": False,
            },
        },
        "compatibility": {"platforms": ["linux"]},
    }


def server_json(v):
    return {
        "$schema": SERVER_SCHEMA,
        "name": REGISTRY_NAME,
        "description": DESCRIPTION[:100],
        "version": v,
        "packages": [{
            "registryType": "pypi",
            "registryBaseUrl": "https://pypi.org",
            "identifier": PACKAGE,
            "version": v,
            "runtimeHint": "uvx",
            "transport": {"type": "stdio"},
            "packageArguments": [
                {"type": "positional", "value": "serve"},
                {"type": "named", "name": "--stdio"},
            ],
            "environmentVariables": [
                {"name": "FOLIO_DATA_DIR", "description": "Where folio keeps its libraries",
                 "format": "filepath", "isRequired": False},
                {"name": "HF_ENDPOINT", "description": "The Hugging Face hub (or a mirror) models are fetched from",
                 "isRequired": False},
            ],
        }],
    }


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def main(argv):
    if len(argv) == 2 and argv[0] == "manifests":
        out = Path(argv[1])
        v = version()
        write(out / "manifest.json", bundle_manifest(v))
        write(out / "server.json", server_json(v))
        print(out / "manifest.json")
        print(out / "server.json")
    elif len(argv) == 3 and argv[0] == "bundle":
        out, binary = Path(argv[1]) / "bundle", Path(argv[2])
        shutil.rmtree(out, ignore_errors=True)
        write(out / "manifest.json", bundle_manifest(version()))
        (out / "server").mkdir()
        shutil.copy2(binary, out / "server/folio")
        os.chmod(out / "server/folio", 0o755)
        print(out)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
