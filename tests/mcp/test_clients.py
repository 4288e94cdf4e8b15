"""folio through the MCP clients people use besides the Python SDK: the
official TypeScript SDK (what Claude Desktop, Claude Code, VS Code and Cursor
are built on), the MCP Inspector's CLI, and the MCP project's conformance
suite, all pinned in tests/clients (installed by scripts/setup.sh).

The TypeScript SDK checks every tool listing against its model of a tool and
every structured result against the tool's output schema, error results
included: a call that breaks either throws in the client instead of showing
the tool's answer.
"""

import contextlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import BACKEND, BIN, SAMPLES, HttpServer, folio_env

CLIENTS = Path(__file__).resolve().parents[1] / "clients"
NODE = shutil.which("node") or "node"
INSPECTOR = CLIENTS / "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
CONFORMANCE = CLIENTS / "node_modules/@modelcontextprotocol/conformance/dist/index.js"
TARGET = Path(__file__).resolve().parents[2] / "target"


def drive(transport, steps, timeout=600):
    """Runs `steps` through the TypeScript SDK (tests/clients/drive.mjs)."""
    plan = json.dumps({"transport": transport, "steps": steps})
    out = subprocess.run([NODE, str(CLIENTS / "drive.mjs")], input=plan, capture_output=True,
                         text=True, timeout=timeout, cwd=CLIENTS)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@contextlib.contextmanager
def transport(kind, data, toolsets, config=None):
    """A transport a host reaches folio by, as drive.mjs takes it: stdio, or
    streamable HTTP (a server started for the duration)."""
    if kind == "stdio":
        env = {k: v for k, v in folio_env(data, config).items() if k.startswith("FOLIO_")}
        yield {"kind": "stdio", "command": BIN, "args": ["serve", "--stdio", "--toolsets", toolsets], "env": env}
        return
    with HttpServer(data, "--toolsets", toolsets, config=config) as server:
        yield {"kind": "http", "url": server.url + "/mcp"}


def ok(name, arguments=None):
    return {"op": "callTool", "name": name, "arguments": arguments or {}, "expect": "ok"}


def error(name, arguments, shows):
    """A call that must end as the tool's error, its text showing `shows`."""
    return {"op": "callTool", "name": name, "arguments": arguments, "expect": "error", "shows": shows}


def chunk(id, text, path):
    """A chunk brought with its own vector (store_chunks), of the model's
    dimension."""
    vector = [((i * 37 + len(text)) % 101) / 101 - 0.5 for i in range(384)]
    return {"id": id, "text": text, "embedding": vector,
            "metadata": {"source": {"path": path, "title": path.rsplit("/", 1)[-1]}}}


def native_plan(corpus):
    # Step 0 lists; step 1 ingests (its result's first item names a document).
    return [
        {"op": "listTools"},
        ok("ingest", {"library": "papers", "paths": [str(corpus)]}),
        ok("search", {"library": "papers", "query": "self-attention over positions"}),
        ok("get_document", {"document_id": "$1.structuredContent.items.0.document_id", "max_chars": 200}),
        ok("get_chunks", {"chunk_id": "$2.structuredContent.hits.0.chunk_id", "after": 1}),
        ok("store_chunks", {"project": "papers", "items": [chunk(f"c-{i}", f"Stored chunk {i} on graphs.", "ext/a.pdf")
                                                    for i in range(100)]}),
        ok("list_libraries"),
        ok("list_documents", {"library": "papers", "limit": 2}),
        ok("inspect_library", {"library": "papers"}),
        ok("facets", {"library": "papers", "group_by": ["format"]}),
        ok("find_quote", {"passage": "self-attention"}),
        ok("declare_entities", {"library": "papers", "entities": [{"name": "Transformer", "type": "model"},
                                                             {"name": "Acme Corp", "type": "organization"}]}),
        ok("entities", {"library": "papers"}),
        ok("entity", {"library": "papers", "name": "Transformer"}),
        ok("server_info"),
        ok("delete_document", {"document_id": "$1.structuredContent.items.0.document_id"}),
        ok("ingest", {"library": "scratch", "content": {"name": "scratch.md", "text": "# Scratch\n\nA note to delete."}}),
        ok("delete_library", {"library": "scratch"}),
        error("search", {"library": "missing", "query": "x"}, "LIBRARY_NOT_FOUND"),
        error("search", {"library": "papers", "query": "x", "top_k": "many"}, "top_k"),
        error("get_document", {"document_id": "ffffffffffffffff"}, "NOT_FOUND"),
        error("get_chunks", {"chunk_id": "nonsense"}, "INVALID"),
        error("ingest", {"library": "papers"}, "INVALID"),
        error("store_chunks", {"project": "papers", "items": []}, "INVALID"),
        error("list_documents", {"library": "missing"}, "LIBRARY_NOT_FOUND"),
        error("inspect_library", {"library": "missing"}, "LIBRARY_NOT_FOUND"),
        error("facets", {"library": "missing"}, "LIBRARY_NOT_FOUND"),
        error("find_quote", {"passage": ""}, "INVALID"),
        error("entities", {"library": "missing"}, "LIBRARY_NOT_FOUND"),
        error("entity", {"library": "papers", "name": "Nobody Known At All"}, "NOT_FOUND"),
        error("declare_entities", {"library": "papers", "entities": [{"type": "model"}]}, "name"),
        error("delete_document", {"document_id": "ffffffffffffffff"}, "NOT_FOUND"),
        error("delete_library", {"library": "missing"}, "LIBRARY_NOT_FOUND"),
        error("server_info", {"check_path": 7}, "check_path"),
        error("list_libraries", {"unexpected": 1}, "unexpected"),
    ]


def citeloom_plan(corpus):
    return [
        {"op": "listTools"},
        ok("ingest_from_source", {"project": "papers", "source": str(corpus)}),
        ok("query", {"project": "papers", "text": "positional encodings"}),
        ok("find_chunks", {"project": "papers", "query": "dropout", "top_k": 3}),
        ok("query_hybrid", {"project": "papers", "text": "self-attention"}),
        ok("inspect_collection", {"project": "papers"}),
        ok("list_projects"),
        error("query", {"project": "nope/missing", "text": "x"}, "INVALID_PROJECT"),
        error("find_chunks", {"project": "papers"}, "INVALID_ARGUMENT"),
        error("query_hybrid", {"project": "papers", "text": "x", "top_k": 5.5}, "INVALID_ARGUMENT"),
        error("inspect_collection", {"project": "nope/missing"}, "INVALID_PROJECT"),
        error("ingest_from_source", {"project": "papers", "source": "/nonexistent/folder"}, "error"),
        error("store_chunks", {"project": "papers",
                               "items": [{"id": "c", "text": "t", "embedding": [0.5] * 3}]}, "error"),
    ]


def bmcis_plan(corpus):
    return [
        {"op": "listTools"},
        ok("store_chunks", {"project": "papers", "items": [chunk(f"v-{i}", f"Acme Corp supplies graph kernels, part {i}.",
                                                             "vendors/acme.md") for i in range(100)]}),
        ok("semantic_search", {"query": "graph kernels"}),
        ok("find_vendor_info", {"vendor_name": "Acme Corp"}),
        error("semantic_search", {"query": ""}, "error"),
        error("semantic_search", {"query": "x", "response_mode": "everything"}, "response_mode"),
        error("find_vendor_info", {"vendor_name": ""}, "error"),
        error("store_chunks", {"project": "papers", "items": "none"}, "items"),
    ]


def mcpvectordb_plan(corpus):
    note = corpus / "dropout.md"
    return [
        {"op": "listTools"},
        ok("ingest_file", {"path": str(note)}),
        ok("ingest_content", {"content": "# Pasted\n\nPasted text on eigenvalues.", "source": "upload://pasted.md",
                              "library": "pasted"}),
        ok("ingest_folder", {"folder": str(corpus), "library": "papers"}),
        ok("search", {"query": "dropout regularisation", "top_k": 3}),
        ok("list_documents", {"limit": 5}),
        ok("list_libraries"),
        ok("get_document", {"doc_id": "$1.structuredContent.doc_id"}),
        ok("server_info"),
        ok("delete_document", {"doc_id": "$1.structuredContent.doc_id"}),
        ok("delete_library", {"library": "pasted"}),
        error("ingest_file", {"path": "/nonexistent/file.pdf"}, "error"),
        error("ingest_content", {"content": "", "source": "upload://empty.md"}, "error"),
        error("ingest_url", {"url": "not a url"}, "error"),
        error("ingest_folder", {"folder": "/nonexistent/folder"}, "error"),
        error("search", {"query": ""}, "error"),
        error("list_documents", {"limit": "many"}, "limit"),
        error("get_document", {"doc_id": "ffffffffffffffff"}, "error"),
        error("delete_document", {"doc_id": "ffffffffffffffff"}, "error"),
        error("delete_library", {"library": "never-made"}, "error"),
        error("server_info", {"check_path": 7}, "check_path"),
    ]


SPEECH = {
    "title": "Water security in the basin",
    "full_text": "Mr Speaker, the Murray-Darling basin plan must return water to the rivers. " * 20,
    "speaker": "Zed Newman", "party": "Greens", "chamber": "Senate", "state": "SA",
    "date": "2025-02-03", "hansard_reference": "S-2025-001", "topic_tags": ["water"],
}


def hansard_plan(corpus):
    return [
        {"op": "listTools"},
        ok("ingest_speech", SPEECH),
        ok("search_speeches", {"query": "Murray-Darling basin water", "limit": 3}),
        ok("get_speech", {"speech_id": "$1.structuredContent.speech_id"}),
        ok("list_speakers"),
        error("search_speeches", {"query": ""}, "query"),
        error("get_speech", {"speech_id": "00000000-0000-0000-0000-000000000000"}, "not found"),
        error("ingest_speech", {**SPEECH, "date": "yesterday"}, "date"),
        error("list_speakers", {"limit": 0}, "limit"),
    ]


PLANS = {
    "native,citeloom,bmcis": lambda corpus: native_plan(corpus) + citeloom_plan(corpus)[1:] + bmcis_plan(corpus)[1:],
    "mcpvectordb": mcpvectordb_plan,
    "hansard": hansard_plan,
}


def text_of(result):
    return " ".join(c.get("text", "") for c in result.get("content", []))


def test_the_typescript_sdk_lists_and_calls_every_tool_of_every_toolset(data, corpus, tmp_path):
    """Every tool of every toolset, listed and called through the TypeScript
    SDK over stdio and streamable HTTP: success paths answer, error paths
    show the tool's own error (isError, its message) rather than a client
    failure, and nothing breaks the SDK's schema checks."""
    config = tmp_path / "c.toml"
    config.write_text('[serve]\nbmcis_library = "papers"\n')
    report = []
    for toolsets, plan_of in PLANS.items():
        for kind in ("stdio", "http"):
            steps = plan_of(corpus)
            # Each transport starts from an empty store of its own.
            with transport(kind, tmp_path / f"{toolsets}-{kind}", toolsets, config) as spec:
                outcome = drive(spec, steps)
            ran = outcome["steps"]
            assert len(ran) == len(steps), ran
            listed = ran[0]
            assert listed["ok"], (toolsets, kind, listed)
            names = {t["name"] for t in listed["result"]["tools"]}
            called = set()
            for step, done in zip(steps[1:], ran[1:]):
                where = (toolsets, kind, step["name"], step["arguments"])
                assert done["ok"], (where, done["error"])
                result = done["result"]
                called.add(step["name"])
                if step["expect"] == "ok":
                    assert not result.get("isError"), (where, text_of(result)[:500])
                    assert result.get("structuredContent") is not None, where
                else:
                    assert result.get("isError") is True, (where, text_of(result)[:500])
                    assert step["shows"].lower() in text_of(result).lower(), (where, text_of(result)[:500])
                report.append((toolsets, kind, step["name"], step["expect"]))
            assert called == names, (toolsets, kind, names - called)
    # 24 tools in the first server (store_chunks serves two toolsets), 11 and 4.
    assert len({(toolsets, name) for toolsets, _, name, _ in report}) == 39
