"""folio through the MCP clients people use besides the Python SDK: the
official TypeScript SDK (what Claude Desktop, Claude Code, VS Code and Cursor
are built on), the MCP Inspector's CLI, and the MCP project's conformance
suite, all pinned in tests/clients (installed by scripts/setup.sh).

The TypeScript SDK checks every tool listing against its model of a tool and
every structured result against the tool's output schema, error results
included: a call that breaks either throws in the client instead of showing
the tool's answer.
"""

import asyncio
import contextlib
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

from conftest import BACKEND, BIN, SAMPLES, HttpServer, folio_env, http_mcp, run, stdio
from conftest import ok as succeeds
from test_keys import create_key
from test_oauth import seed

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
        ok("ingest", {"library": "papers", "paths": [str(corpus)], "force": True, "background": True}),
        ok("jobs"),
        ok("cancel_job", {"job_id": "$15.structuredContent.job_id"}),
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
        error("jobs", {"job_id": "no-such-job"}, "NOT_FOUND"),
        error("cancel_job", {"job_id": "no-such-job"}, "NOT_FOUND"),
        error("ingest", {"library": "papers", "background": True}, "INVALID"),
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


# The searches of every toolset (their hits link their documents).
SEARCHES = {"search", "query", "find_chunks", "query_hybrid", "semantic_search", "find_vendor_info",
            "search_speeches"}


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
                    if step["name"] in SEARCHES:
                        # Every dialect's search links the documents it cites.
                        links = [c["uri"] for c in result["content"] if c["type"] == "resource_link"]
                        assert links and all(u.startswith("folio://document/") for u in links), where
                else:
                    assert result.get("isError") is True, (where, text_of(result)[:500])
                    assert step["shows"].lower() in text_of(result).lower(), (where, text_of(result)[:500])
                report.append((toolsets, kind, step["name"], step["expect"]))
            assert called == names, (toolsets, kind, names - called)
    # 26 tools in the first server (store_chunks serves two toolsets), 11 and 4.
    assert len({(toolsets, name) for toolsets, _, name, _ in report}) == 41


def start_drive(transport, steps):
    """drive.mjs in the background; `finish` gives its report."""
    process = subprocess.Popen([NODE, str(CLIENTS / "drive.mjs")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, cwd=CLIENTS)
    process.stdin.write(json.dumps({"transport": transport, "steps": steps}))
    process.stdin.close()

    def finish():
        out = process.stdout.read()
        assert process.wait(timeout=120) == 0
        return json.loads(out)

    return finish


def wait_for_file(path, seconds=60):
    deadline = time.time() + seconds
    while not path.exists():
        assert time.time() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


def updated(report, uri, since=0):
    return [n for n in report["notifications"]
            if n["method"] == "notifications/resources/updated" and n["params"]["uri"] == uri and n["step"] >= since]


def messages(report):
    return [n["params"] for n in report["notifications"] if n["method"] == "notifications/message"]


def test_subscriptions_and_log_messages_reach_only_callers_who_may_read_them(data, tmp_path):
    """Through the TypeScript SDK over streamable HTTP, on a keyed server
    that watches a folder: each reader follows a library it may read, one
    it may not and a document of the other's library. A watch pass and an
    ingest by a third caller are told (`notifications/resources/updated`,
    `notifications/message`) to the readers who may read what changed, and
    to no one else; after unsubscribing, a reader hears no more of that
    resource."""
    hr_doc = seed(data)
    folder = tmp_path / "watched"
    folder.mkdir()
    wiki_reader = create_key(data, "wiki-reader", "--scope", "search", "--libraries", "wiki")
    hr_reader = create_key(data, "hr-reader", "--scope", "search", "--libraries", "hr")
    lead = create_key(data, "lead", "--scope", "search,ingest,admin")
    ready = [tmp_path / "wiki.ready", tmp_path / "hr.ready", tmp_path / "hr.unsubscribed"]
    wiki, hr, document = "folio://library/wiki", "folio://library/hr", f"folio://document/{hr_doc}"
    with HttpServer(data, "--auth", "keys", "--watch", f"{folder}=wiki") as server:
        def over_http(key):
            return {"kind": "http", "url": server.url + "/mcp", "headers": {"Authorization": f"Bearer {key}"}}

        def following(level, uris, ready):
            """Steps 0-4: the log at `level`, three resources followed, then ready."""
            return [{"op": "setLevel", "level": level}, *({"op": "subscribe", "uri": uri} for uri in uris),
                    {"op": "touch", "path": str(ready)}]

        finish_wiki = start_drive(over_http(wiki_reader), [
            *following("info", (wiki, hr, document), ready[0]),
            {"op": "waitFor", "method": "notifications/resources/updated", "uri": wiki, "timeoutMs": 30000},
            {"op": "waitFor", "method": "notifications/message", "timeoutMs": 30000},
            {"op": "sleep", "ms": 4000},
            # A hit links its document; the link reads as any read does.
            {"op": "callTool", "name": "search", "arguments": {"library": "wiki", "query": "river delta silt"}},
            {"op": "readResource", "uri": "$8.content.1.uri"},
            {"op": "readResource", "uri": document},
        ])
        finish_hr = start_drive(over_http(hr_reader), [
            *following("debug", (hr, document, wiki), ready[1]),
            {"op": "waitFor", "method": "notifications/resources/updated", "uri": document, "timeoutMs": 30000},
            {"op": "unsubscribe", "uri": document},
            {"op": "touch", "path": str(ready[2])},
            {"op": "waitFor", "method": "notifications/resources/updated", "uri": hr, "since": 7,
             "timeoutMs": 30000},
            {"op": "sleep", "ms": 3000},
        ])
        wait_for_file(ready[0])
        wait_for_file(ready[1])
        (folder / "delta.md").write_text("# Deltas\n\nA delta forms where a river meets the sea.\n")

        async def write_hr(text):
            async with http_mcp(server.url, key=lead) as c:
                await succeeds(c, "ingest", {"library": "hr", "content": {"name": "s.md", "text": text}})

        run(write_hr("# Salaries\n\nThe director's bonus was revised."))
        wait_for_file(ready[2])
        run(write_hr("# Salaries\n\nThe bonus was revised again."))
        wiki_report, hr_report = finish_wiki(), finish_hr()

    # Every step answers, but the wiki reader's read of hr's document.
    assert not wiki_report["steps"][10]["ok"] and "no resource" in wiki_report["steps"][10]["error"]["message"]
    del wiki_report["steps"][10]
    for report in (wiki_report, hr_report):
        assert all(step["ok"] for step in report["steps"]), report["steps"]
    found = wiki_report["steps"][8]["result"]
    links = [c for c in found["content"] if c["type"] == "resource_link"]
    cited = {h["document_id"] for h in found["structuredContent"]["hits"]}
    assert links and {link["uri"] for link in links} == {f"folio://document/{d}" for d in cited}
    assert "silt" in wiki_report["steps"][9]["result"]["contents"][0]["text"]
    # The wiki reader hears of its library, by update and by log message,
    # and nothing of hr's library or document.
    assert updated(wiki_report, wiki)
    assert not updated(wiki_report, hr) and not updated(wiki_report, document)
    heard = messages(wiki_report)
    assert any(m["data"].get("event") == "watch_pass" and m["data"]["library"] == "wiki" for m in heard), heard
    assert all("hr" != m["data"].get("library") for m in heard if isinstance(m["data"], dict)), heard
    # The hr reader hears of its document and library, not of the wiki
    # (neither its update nor the watch pass's message).
    assert updated(hr_report, document) and updated(hr_report, hr, since=7)
    assert not updated(hr_report, wiki)
    # The resource list changed for the wiki's reader only.
    def list_changed(report):
        return [n for n in report["notifications"] if n["method"] == "notifications/resources/list_changed"]

    assert list_changed(wiki_report) and not list_changed(hr_report)
    assert not any(isinstance(m["data"], dict) and m["data"].get("library") == "wiki" for m in messages(hr_report))
    # Unsubscribed (step 6): no later update of the document.
    assert not updated(hr_report, document, since=7)


def test_log_messages_follow_the_session_level(data, corpus):
    """An ingest tells each document it settles at debug and each failure as
    a warning; a session at warning hears only the failures."""
    (corpus / "broken.pdf").write_bytes(b"%PDF-1.7 this is not a PDF at all")
    (corpus / "again").mkdir()
    (corpus / "again" / "broken.pdf").write_bytes(b"%PDF-1.7 nor is this")
    with transport("stdio", data, "native") as spec:
        report = drive(spec, [
            {"op": "setLevel", "level": "debug"},
            ok("ingest", {"library": "papers", "paths": [str(corpus)]}),
            {"op": "setLevel", "level": "warning"},
            ok("ingest", {"library": "papers", "paths": [str(corpus)], "force": True}),
        ])
    assert all(step["ok"] for step in report["steps"]), report["steps"]
    ingest = report["steps"][1]["result"]["structuredContent"]
    at = {step: [n["params"] for n in report["notifications"]
                 if n["method"] == "notifications/message" and n["step"] == step] for step in (1, 3)}
    settled = {m["data"]["source"] for m in at[1] if m["level"] == "debug" and m["data"]["event"] == "ingested"}
    failed = {m["data"]["source"] for m in at[1] if m["level"] == "warning" and m["data"]["event"] == "ingest_failed"}
    assert failed == {i["source"] for i in ingest["items"] if i["status"] == "failed"} and len(failed) == 2
    assert settled == {i["source"] for i in ingest["items"] if i["status"] != "failed"}
    # At warning: the two failures again, nothing below.
    assert {m["level"] for m in at[3]} == {"warning"} and len(at[3]) == 2, at[3]


def ingest_samples(data, library="papers"):
    done = subprocess.run([BIN, "ingest", str(SAMPLES), "--library", library], env=folio_env(data),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def inspector(*args):
    """The MCP Inspector's CLI (`inspector --cli ...`): its JSON answer."""
    out = subprocess.run([NODE, str(INSPECTOR), "--cli", *args], capture_output=True, text=True, timeout=120,
                         cwd=CLIENTS)
    assert out.returncode == 0, (args, out.stdout[-2000:], out.stderr[-2000:])
    return json.loads(out.stdout)


def test_the_inspector_lists_tools_searches_and_ingests(data):
    """The MCP Inspector's CLI sets the session's logging level before its
    request, then lists the tools, calls search and ingests a note, over
    stdio and HTTP. It declares the Tasks extension at initialisation only,
    and reads a plain result: its ingest gets one."""
    ingest_samples(data)
    env = [f"-e{k}={v}" for k, v in folio_env(data).items() if k.startswith("FOLIO_")]
    search = ["--method", "tools/call", "--tool-name", "search", "--tool-arg", "library=papers",
              "--tool-arg", "query=self-attention over all positions"]
    over_stdio = [*env, BIN, "serve", "--stdio"]
    with HttpServer(data) as server:
        for n, target in enumerate((over_stdio, [server.url + "/mcp"])):
            tools = inspector(*target, "--method", "tools/list")["tools"]
            assert len(tools) == 18 and all(t["outputSchema"]["type"] == "object" for t in tools)
            found = inspector(*target, *search)
            assert not found.get("isError"), found
            hits = found["structuredContent"]["hits"]
            assert hits and "attention" in json.dumps(hits[0]).lower()
            note = json.dumps({"name": f"silt-{n}.md", "text": f"# Silt\n\nRiver {n} carries silt to the delta."})
            added = inspector(*target, "--method", "tools/call", "--tool-name", "ingest",
                              "--tool-arg", "library=inspected", "--tool-arg", f"content={note}")
            assert not added.get("isError"), added
            assert added["structuredContent"]["indexed"] == 1, added
    listed = subprocess.run([BIN, "ls", "--json"], env=folio_env(data), capture_output=True, text=True)
    assert {l["name"]: l["document_count"] for l in json.loads(listed.stdout)}["inspected"] == 2, listed.stdout


# The conformance suite's server scenarios folio does not serve, and why:
# each needs a fixture of the suite's own reference server (a tool, resource
# or prompt of a fixed name and behaviour) that a document server has no
# reason to carry. Every other scenario must pass.
NOT_APPLICABLE = {
    "tools-call-simple-text": "calls the fixture tool test_simple_text",
    "tools-call-image": "calls the fixture tool test_image_content (folio's tools answer text and JSON)",
    "tools-call-audio": "calls the fixture tool test_audio_content",
    "tools-call-embedded-resource": "calls the fixture tool test_embedded_resource",
    "tools-call-mixed-content": "calls the fixture tool test_multiple_content_types",
    "tools-call-with-logging": "calls the fixture tool test_tool_with_logging (folio's logging is tested above)",
    "tools-call-error": "calls the fixture tool test_error_handling (folio's error results are tested above)",
    "tools-call-with-progress": "calls the fixture tool test_tool_with_progress (folio's ingest progress is tested in test_native)",
    "tools-call-sampling": "calls the fixture tool test_sampling; folio asks no model to sample",
    "tools-call-elicitation": "calls the fixture tool test_elicitation; folio asks the user nothing",
    "json-schema-2020-12": "looks for the fixture tool json_schema_2020_12_tool",
    "elicitation-sep1034-defaults": "calls a fixture elicitation tool; folio asks the user nothing",
    "elicitation-sep1330-enums": "calls a fixture elicitation tool; folio asks the user nothing",
    "resources-read-text": "reads the fixture resource test://static-text",
    "resources-read-binary": "reads the fixture resource test://static-binary",
    "resources-templates-read": "reads the fixture template test://template/{id}/data",
    "prompts-get-simple": "gets the fixture prompt test_simple_prompt; folio offers no prompts",
    "prompts-get-with-args": "gets a fixture prompt; folio offers no prompts",
    "prompts-get-embedded-resource": "gets a fixture prompt; folio offers no prompts",
    "prompts-get-with-image": "gets a fixture prompt; folio offers no prompts",
}


def test_the_conformance_suite_passes_every_scenario_a_document_server_serves(data, tmp_path):
    ingest_samples(data)
    out_dir = tmp_path / "conformance"
    with HttpServer(data) as server:
        run_suite = subprocess.run(
            [NODE, "--import", "./node22.mjs", str(CONFORMANCE), "server", "--url", server.url + "/mcp",
             "--suite", "all", "-o", str(out_dir)],
            capture_output=True, text=True, timeout=600, cwd=CLIENTS)
    results = {}
    for checks in out_dir.glob("*/checks.json"):
        # server-<scenario>-<timestamp>
        scenario = re.sub(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z?$", "", checks.parent.name.removeprefix("server-"))
        results[scenario] = json.loads(checks.read_text())
    assert len(results) >= 32, (sorted(results), run_suite.stdout[-3000:])
    assert set(NOT_APPLICABLE) <= set(results), set(NOT_APPLICABLE) - set(results)
    rows, failing = [], []
    for scenario in sorted(results):
        checks = [c for c in results[scenario] if c["status"] != "INFO"]
        # The suite itself fails a scenario on a FAILURE only; a WARNING
        # (a SHOULD) is shown in the table.
        passed = bool(checks) and all(c["status"] in ("SUCCESS", "WARNING") for c in checks)
        warnings = "; ".join(f"warning: {c.get('errorMessage')}" for c in checks if c["status"] == "WARNING")
        if scenario in NOT_APPLICABLE:
            rows.append(f"| {scenario} | not applicable | {NOT_APPLICABLE[scenario]} |")
        else:
            note = f"{len(checks)} checks" + (f"; {warnings}" if warnings else "")
            rows.append(f"| {scenario} | {'pass' if passed else 'FAIL'} | {note} |")
            if not passed:
                failing.append((scenario, [c for c in results[scenario] if c["status"] != "SUCCESS"]))
    table = "| scenario | result | note |\n|---|---|---|\n" + "\n".join(rows) + "\n"
    (TARGET / f"conformance-{BACKEND}.md").write_text(table)
    assert not failing, failing
    assert sum(1 for scenario in results if scenario not in NOT_APPLICABLE) >= 12


def notes(folder, count):
    """`count` small Markdown notes, each with a sentence of its own."""
    folder.mkdir()
    for i in range(count):
        (folder / f"note-{i:05d}.md").write_text(f"# Note {i}\n\nObservation {i}: sample {i * 7919 % 10007} "
                                                   f"held {i % 13} grains of basalt.\n")
    return folder


def test_a_background_ingest_answers_at_once_and_outlives_its_client(data, tmp_path):
    """A large folder through an agent's call: the call answers a job in
    under two seconds, the client that made it leaves, and the job runs to
    its end; another session follows its progress with `jobs` and finds the
    result the call would have given. A second job is cancelled: it stops
    between documents, keeping those it finished."""
    count = 700
    folder = notes(tmp_path / "notes", count)
    other = notes(tmp_path / "more", 1000)
    with HttpServer(data) as server:
        spec = {"kind": "http", "url": server.url + "/mcp"}
        started = drive(spec, [ok("ingest", {"library": "notes", "paths": [str(folder)], "background": True})])
        step = started["steps"][0]
        assert step["ok"] and step["ms"] < 2000, step
        job = step["result"]["structuredContent"]
        assert job["status"] == "running" and job["tool"] == "ingest" and job["library"] == "notes"
        # The client is gone; another session follows the job.
        seen = []

        async def follow():
            async with http_mcp(server.url) as c:
                while True:
                    state = (await succeeds(c, "jobs", {"job_id": job["job_id"]}))["jobs"][0]
                    seen.append(state)
                    if state["status"] != "running":
                        return state, await succeeds(c, "server_info")
                    await asyncio.sleep(0.2)

        final, info = run(follow())
        assert final["status"] == "completed", final
        assert final["result"]["indexed"] == count and final["result"]["failed"] == 0
        assert final["progress"]["documents"] == count
        # Progress was visible while it ran.
        assert any(0 < s["progress"]["documents"] < count for s in seen), [s["progress"] for s in seen][:5]
        assert any(j["job_id"] == job["job_id"] for j in info["jobs"])

        async def cancel():
            async with http_mcp(server.url) as c:
                second = await succeeds(c, "ingest", {"library": "more", "paths": [str(other)], "background": True})
                # Cancelled once it has written a document.
                while (await succeeds(c, "jobs", {"job_id": second["job_id"]}))["jobs"][0]["progress"]["documents"] < 1:
                    await asyncio.sleep(0.02)
                await succeeds(c, "cancel_job", {"job_id": second["job_id"]})
                while True:
                    state = (await succeeds(c, "jobs", {"job_id": second["job_id"]}))["jobs"][0]
                    if state["status"] not in ("running", "cancelling"):
                        break
                    await asyncio.sleep(0.1)
                listed = await succeeds(c, "list_documents", {"library": "more", "limit": 1})
                return state, listed

        state, listed = run(cancel())
        assert state["status"] == "cancelled" and state["result"]["cancelled"] is True, state
        kept = state["result"]["indexed"]
        assert 0 < kept < 1000 and listed["total"] == kept, (kept, listed)
    # Both libraries whole in every index: the cancelled job left no half document.
    for library in ("notes", "more"):
        check = subprocess.run([BIN, "check", library], env=folio_env(data), capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr


class Wire:
    """MCP as JSON lines on `folio serve --stdio`, for what no SDK here
    speaks yet: the Tasks extension (io.modelcontextprotocol/tasks,
    SEP-2663), written from its specification."""

    def __init__(self, data, capabilities):
        env = folio_env(data)
        self.process = subprocess.Popen([BIN, "serve", "--stdio"], env=env, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.next_id = 0
        init = self.ask("initialize", {"protocolVersion": "2025-11-25", "capabilities": capabilities,
                                       "clientInfo": {"name": "wire", "version": "1"}})
        self.capabilities = init["result"]["capabilities"]
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def ask(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            answer = json.loads(self.process.stdout.readline())
            if answer.get("id") == self.next_id:
                return answer

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)


# A request's own capabilities (SEP-2663: the client signals support for
# the extension in its per-request capabilities).
AS_TASK = {"_meta": {"io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}}


def test_a_client_of_the_tasks_extension_gets_its_ingest_as_a_task(data, tmp_path):
    folder = notes(tmp_path / "notes", 400)
    other = notes(tmp_path / "more", 1000)
    wire = Wire(data, {"extensions": {"io.modelcontextprotocol/tasks": {}}})
    try:
        assert "io.modelcontextprotocol/tasks" in wire.capabilities["extensions"]
        # Declared at initialisation only, a request gets the plain result.
        few = notes(tmp_path / "first", 5)
        plain = wire.ask("tools/call", {"name": "ingest", "arguments": {"library": "first", "paths": [str(few)]}})
        assert plain["result"]["structuredContent"]["indexed"] == 5, plain
        started = time.time()
        created = wire.ask("tools/call", {"name": "ingest", "arguments": {"library": "notes", "paths": [str(folder)]},
                                          **AS_TASK})
        assert time.time() - started < 2, created
        task = created["result"]
        assert task["resultType"] == "task" and task["status"] == "working", task
        messages = set()
        while True:
            state = wire.ask("tasks/get", {"taskId": task["taskId"]})["result"]
            messages.add(state.get("statusMessage"))
            if state["status"] != "working":
                break
            time.sleep(0.2)
        assert state["status"] == "completed", state
        assert state["result"]["structuredContent"]["indexed"] == 400
        assert len(messages) > 1, messages  # progress moved while it worked
        second = wire.ask("tools/call", {"name": "ingest", "arguments": {"library": "more", "paths": [str(other)]},
                                         **AS_TASK})
        assert "error" not in wire.ask("tasks/cancel", {"taskId": second["result"]["taskId"]})
        while (state := wire.ask("tasks/get", {"taskId": second["result"]["taskId"]})["result"])["status"] == "working":
            time.sleep(0.1)
        assert state["status"] == "cancelled", state
        unknown = wire.ask("tasks/get", {"taskId": "no-such-task"})
        assert unknown["error"]["code"] == -32602
    finally:
        wire.close()
    # A client without the extension gets the ingest's result, as before.
    few = notes(tmp_path / "few", 20)
    plain = Wire(data, {})
    try:
        done = plain.ask("tools/call", {"name": "ingest", "arguments": {"library": "again", "paths": [str(few)]}})
        assert done["result"]["structuredContent"]["indexed"] == 20
    finally:
        plain.close()


def test_a_listen_stream_of_the_2026_revision_tells_each_change_of_its_resources(data):
    """`subscriptions/listen` (2026-07-28) through the Python SDK's
    `Client.listen`: an update of a followed library, written by another
    client, arrives on the stream; a library it does not follow does not."""
    from mcp.shared.subscriptions import ResourceUpdated

    async def go():
        async with stdio(data, mode="2026-07-28") as reader, stdio(data) as writer:
            await succeeds(writer, "ingest", {"library": "kept", "content": {"name": "a.md", "text": "# A\n\nFirst."}})
            await succeeds(writer, "ingest", {"library": "other", "content": {"name": "b.md", "text": "# B\n\nFirst."}})
            async with reader.listen(resource_subscriptions=["folio://library/kept"]) as stream:
                await succeeds(writer, "ingest", {"library": "other", "content": {"name": "b.md", "text": "# B\n\nAgain."}})
                await succeeds(writer, "ingest", {"library": "kept", "content": {"name": "a.md", "text": "# A\n\nAgain."}})
                events = []
                async with asyncio.timeout(20):
                    async for event in stream:
                        events.append(event)
                        if isinstance(event, ResourceUpdated):
                            break
                return events

    events = run(go())
    assert [e.uri for e in events if isinstance(e, ResourceUpdated)] == ["folio://library/kept"], events


def test_jobs_are_seen_by_callers_who_may_read_their_library_or_started_them(data, tmp_path):
    """On a keyed server: a reader of the library sees a job (not who
    started it); a reader of another library does not; an ingest-only key
    may stop its own job but not find another's."""
    seed(data)
    folder = notes(tmp_path / "notes", 300)
    lead = create_key(data, "lead", "--scope", "search,ingest")
    reader = create_key(data, "wiki-reader", "--scope", "search", "--libraries", "wiki")
    other = create_key(data, "hr-reader", "--scope", "search", "--libraries", "hr")
    bot = create_key(data, "bot", "--scope", "ingest", "--libraries", "wiki")
    config = tmp_path / "roots.toml"
    config.write_text(f'[ingest]\nroots = ["{tmp_path}"]\n')
    with HttpServer(data, "--auth", "keys", config=config) as server:
        async def go():
            async with http_mcp(server.url, key=lead) as c:
                job = await succeeds(c, "ingest", {"library": "wiki", "paths": [str(folder)], "background": True})
            async with http_mcp(server.url, key=reader) as c:
                seen = (await succeeds(c, "jobs", {"job_id": job["job_id"]}))["jobs"][0]
            async with http_mcp(server.url, key=other) as c:
                hidden = await c.call_tool("jobs", {"job_id": job["job_id"]})
                listed = (await succeeds(c, "jobs"))["jobs"]
            async with http_mcp(server.url, key=bot) as c:
                refused = await c.call_tool("cancel_job", {"job_id": job["job_id"]})
                own = await succeeds(c, "ingest", {"library": "wiki", "paths": [str(folder)], "force": True,
                                                   "background": True})
                stopped = await succeeds(c, "cancel_job", {"job_id": own["job_id"]})
            return job, seen, hidden, listed, refused, own, stopped

        job, seen, hidden, listed, refused, own, stopped = run(go())
    assert job["started_by"] == "lead" and "started_by" not in seen and seen["library"] == "wiki"
    assert hidden.is_error and hidden.structured_content["error"]["code"] == "NOT_FOUND"
    assert listed == []
    assert refused.is_error and refused.structured_content["error"]["code"] == "NOT_FOUND"
    assert stopped["job_id"] == own["job_id"] and stopped["status"] in ("cancelling", "cancelled")


def test_a_stdio_server_whose_client_leaves_finishes_its_background_jobs(data, tmp_path):
    """Over stdio the client leaving ends the input; the server still runs
    its background jobs to their end before it exits. On the embedded store
    that process owns the data directory: meanwhile it serves the next
    client, which finds the job."""
    folder = notes(tmp_path / "notes", 1500)
    wire = Wire(data, {})
    answer = wire.ask("tools/call", {"name": "ingest", "arguments": {
        "library": "notes", "paths": [str(folder)], "background": True}})
    job = answer["result"]["structuredContent"]
    assert job["status"] == "running", answer
    wire.process.stdin.close()
    if BACKEND == "embedded":
        # The next host session attaches to the owner, which still runs the job.
        later = Wire(data, {})
        try:
            found = later.ask("tools/call", {"name": "jobs", "arguments": {"job_id": job["job_id"]}})
            assert found["result"]["structuredContent"]["jobs"][0]["job_id"] == job["job_id"], found
        finally:
            later.close()
    wire.process.wait(timeout=300)
    inspect = subprocess.run([BIN, "--json", "inspect", "notes"], env=folio_env(data), capture_output=True, text=True)
    assert inspect.returncode == 0, inspect.stderr
    assert json.loads(inspect.stdout)["info"]["document_count"] == 1500
