"""Issue 29: a server that asks for keys (`folio serve --http --auth keys`)
holds every caller to their key: unknown, malformed, revoked and expired
keys are refused (401), a scope a key lacks is refused before any work,
and a key limited to some libraries can neither read nor write the others,
through any tool that takes a library, a document or a chunk, nor see their
names in listings and resources. Each refused attempt is counted; none may
succeed, and the library it aimed at is unchanged afterwards."""

import json
import subprocess
import time
import urllib.error
import urllib.request

import pytest
from mcp.shared.exceptions import MCPError
from conftest import BIN, HttpServer, call, fails, folio_env, free_port, http_mcp, ok, run, stdio, write_config
from test_compat import upload


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}},
}


# A batch store_chunks accepts, so a refusal is the key's, not the batch's.
ITEMS = [
    {"id": f"k-{i}", "text": f"Chunk {i} about levees.", "embedding": [((i + j) % 7 - 3) / 3 for j in range(384)], "metadata": {}}
    for i in range(100)
]


def create_key(data, name, *flags):
    done = subprocess.run(
        [BIN, "keys", "create", name, *flags], env=folio_env(data), capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def status_of(url, key=None, body=None):
    """The HTTP status of an initialize POST to /mcp with `key`."""
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(
        url + "/mcp",
        data=json.dumps(body or INITIALIZE).encode(),
        headers=headers,
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}


def test_keys_hold_callers_to_their_scopes_and_libraries(data, tmp_path):
    async def seed():
        async with stdio(data) as c:
            wiki = await ok(c, "ingest", {"library": "wiki", "content": {"name": "w.md", "text": "# Rivers\n\nRivers carry silt to the delta."}})
            hr = await ok(c, "ingest", {"library": "hr", "content": {"name": "salaries.md", "text": "# Salaries\n\nThe director earns a confidential bonus."}})
            await ok(c, "ingest", {"library": "scratch", "content": {"name": "s.md", "text": "# Scratch\n\nDraft notes."}})
            return wiki["items"][0]["document_id"], hr["items"][0]["document_id"]

    wiki_doc, hr_doc = run(seed())
    lead = create_key(data, "lead", "--scope", "search,ingest,admin")
    intern = create_key(data, "intern", "--scope", "search", "--libraries", "wiki")
    bot = create_key(data, "ci-bot", "--scope", "ingest", "--libraries", "wiki")
    scout = create_key(data, "scout", "--scope", "search", "--libraries", "wiki,planned")
    gone = create_key(data, "gone", "--scope", "search")
    brief = create_key(data, "brief", "--scope", "search", "--expires", "1s")
    attempts = []  # (what, accepted?)

    with HttpServer(data, "--auth", "keys") as server:
        # Who are you: no key, a made-up one, a malformed one, an expired
        # one, a revoked one; /health stays open and says nothing private.
        time.sleep(1.5)
        for what, key in [
            ("no key", None),
            ("made-up key", "folio_" + "0" * 64),
            ("malformed key", "abc"),
            ("key with a byte changed", intern[:-1] + ("0" if intern[-1] != "0" else "1")),
            ("key cut short", intern[:-1]),
            ("expired key", brief),
        ]:
            status, headers = status_of(server.url, key)
            attempts.append((what, status != 401))
            assert headers.get("www-authenticate", "").startswith("Bearer"), (what, headers)
        assert status_of(server.url, gone)[0] == 200
        subprocess.run([BIN, "keys", "revoke", "gone"], env=folio_env(data), check=True, capture_output=True)
        time.sleep(2.5)
        attempts.append(("revoked key", status_of(server.url, gone)[0] != 401))
        with urllib.request.urlopen(server.url + "/health", timeout=10) as r:
            health = json.loads(r.read())
        assert set(health) == {"status", "version", "model_loaded"}

        async def as_intern():
            async with http_mcp(server.url, key=intern) as c:
                listed = {t.name for t in (await c.list_tools()).tools}
                assert "search" in listed and not listed & {"ingest", "store_chunks", "delete_document", "delete_library"}, listed
                libraries = await ok(c, "list_libraries")
                assert [l["library"] for l in libraries["libraries"]] == ["wiki"]
                assert (await ok(c, "server_info"))["libraries"] == 1
                found = await ok(c, "search", {"library": "wiki", "query": "rivers delta"})
                assert found["hits"], "its own library answers"
                resources = await c.list_resources()
                assert [r.name for r in resources.resources] == ["wiki"]
                for what, tool, arguments in [
                    ("search another library", "search", {"library": "hr", "query": "bonus"}),
                    ("read another library's document", "get_document", {"document_id": hr_doc}),
                    ("read another library's chunk", "get_chunks", {"chunk_id": f"{hr_doc}:0"}),
                    ("list another library", "list_documents", {"library": "hr"}),
                    ("inspect another library", "inspect_library", {"library": "hr"}),
                    ("facet another library", "facets", {"library": "hr"}),
                    ("quote from another library", "find_quote", {"passage": "confidential bonus", "libraries": ["hr"]}),
                    ("quote from another library's document", "find_quote", {"passage": "confidential bonus", "document_id": hr_doc}),
                    ("ingest without the scope", "ingest", {"library": "wiki", "content": {"name": "x.md", "text": "# X\n\nx"}}),
                    ("delete without the scope", "delete_document", {"document_id": wiki_doc}),
                    ("delete a library without the scope", "delete_library", {"library": "wiki"}),
                    ("store chunks without the scope", "store_chunks", {"project": "wiki", "items": ITEMS}),
                ]:
                    is_error, body = await call(c, tool, arguments)
                    attempts.append((what, not is_error))
                    if is_error:
                        assert body["error"]["code"] == "FORBIDDEN", (what, body)
                # "Every library" is every library the key may use.
                quoted = await ok(c, "find_quote", {"passage": "confidential bonus"})
                attempts.append(("quote from every library", quoted["found"]))
                try:
                    await c.read_resource(f"folio://document/{hr_doc}")
                    attempts.append(("read another library's document resource", True))
                except MCPError:
                    attempts.append(("read another library's document resource", False))
                try:
                    await c.read_resource("folio://library/hr")
                    attempts.append(("read another library's resource", True))
                except MCPError:
                    attempts.append(("read another library's resource", False))

        run(as_intern())

        async def as_bot():
            async with http_mcp(server.url, key=bot) as c:
                listed = {t.name for t in (await c.list_tools()).tools}
                assert "ingest" in listed and "search" not in listed and "delete_library" not in listed
                written = await ok(c, "ingest", {"library": "wiki", "content": {"name": "ci.md", "text": "# Build\n\nThe build is green."}})
                assert written["indexed"] == 1
                for what, tool, arguments in [
                    ("search without the scope", "search", {"library": "wiki", "query": "build"}),
                    ("ingest into another library", "ingest", {"library": "hr", "content": {"name": "x.md", "text": "# X\n\nx"}}),
                    ("delete another library's document", "delete_document", {"document_id": hr_doc}),
                    ("store chunks in another library", "store_chunks", {"project": "hr", "items": ITEMS}),
                    ("delete a library without admin", "delete_library", {"library": "wiki"}),
                ]:
                    is_error, body = await call(c, tool, arguments)
                    attempts.append((what, not is_error))
                    if is_error:
                        assert body["error"]["code"] == "FORBIDDEN", (what, body)

        run(as_bot())

        async def as_lead():
            async with http_mcp(server.url, key=lead) as c:
                assert {l["library"] for l in (await ok(c, "list_libraries"))["libraries"]} == {"wiki", "hr", "scratch"}
                assert (await ok(c, "delete_library", {"library": "scratch"}))["status"] == "deleted"
                hr = await ok(c, "inspect_library", {"library": "hr"})
                assert hr["document_count"] == 1, "every refused attempt left hr unchanged"

        run(as_lead())

    # The citeloom contract's refusal of an unknown project names only the
    # projects the key may use.
    with HttpServer(data, "--auth", "keys", "--toolsets", "citeloom") as server:

        async def citeloom_intern():
            async with http_mcp(server.url, key=scout) as c:
                # A project it may use that does not exist yet.
                missing = await fails(c, "query", {"project": "planned", "text": "bonus"})
                assert missing["error"]["code"] == "INVALID_PROJECT", missing
                named = missing["error"]["details"]["available_projects"]
                attempts.append(("list projects through a refusal", named != ["wiki"]))
            async with http_mcp(server.url, key=intern) as c:
                is_error, body = await call(c, "query_hybrid", {"project": "hr", "text": "bonus"})
                attempts.append(("query another project", not is_error))
                projects = await ok(c, "list_projects")
                attempts.append(("list other projects", [p["id"] for p in projects["projects"]] != ["wiki"]))

        run(citeloom_intern())

    # The mcpvectordb contract's upload route: the same keys, the same rules.
    audit = tmp_path / "upload-audit.jsonl"
    with HttpServer(data, "--auth", "keys", "--toolsets", "mcpvectordb", "--audit-log", str(audit)) as server:
        note = [("file", ("note.txt", b"a note about deltas"))]
        for what, key, library, expected in [
            ("upload without a key", None, "wiki", 401),
            ("upload without the ingest scope", intern, "wiki", 403),
            ("upload into another library", bot, "hr", 403),
        ]:
            status, body = upload_as(server.url, key, note + [("library", library)])
            attempts.append((what, status != expected))
            assert status == expected, (what, status, body)
        status, body = upload_as(server.url, bot, note + [("library", "wiki")])
        assert status == 200 and body["status"] == "indexed", body
    # Each upload has its audit line (a request refused for its key has none:
    # it never reached the route).
    routes = [(l["caller"], l["operation"], l["library"], l["outcome"]) for l in map(json.loads, audit.read_text().splitlines())]
    assert routes == [
        ("intern", "/upload", None, "403"),
        ("ci-bot", "/upload", "hr", "403"),
        ("ci-bot", "/upload", "wiki", "ok"),
    ], routes

    accepted = [what for what, ok_ in attempts if ok_]
    assert len(attempts) >= 30 and accepted == [], (len(attempts), accepted)


def upload_as(url, key, fields):
    from test_compat import multipart

    body, kind = multipart(fields)
    headers = {"Content-Type": kind}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(url + "/upload", data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def test_auth_keys_is_refused_where_it_cannot_hold(data):
    # stdio is the local user's own process; a token and keys exclude each other.
    for args in (["serve", "--stdio", "--auth", "keys"], ["serve", "--http", "127.0.0.1:9", "--auth", "keys", "--token", "t"]):
        done = subprocess.run([BIN, *args], env=folio_env(data), capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, (args, done.stderr)
        assert "--auth keys" in done.stderr


def test_rates_audit_lines_and_metrics(data, tmp_path):
    async def seed():
        async with stdio(data) as c:
            await ok(c, "ingest", {"library": "wiki", "content": {"name": "w.md", "text": "# Rivers\n\nRivers carry silt to the delta."}})

    run(seed())
    fast = create_key(data, "fast", "--scope", "search", "--rate", "30/min")
    lead = create_key(data, "lead", "--scope", "search,ingest,admin")
    reader = create_key(data, "reader", "--scope", "search")
    audit = tmp_path / "audit.jsonl"
    with HttpServer(data, "--auth", "keys", "--audit-log", str(audit)) as server:
        # A key over its rate is refused 429 with when to retry; the bucket
        # holds the rate (30), a refill of 0.5 a second at most adds one.
        statuses = [status_of(server.url, fast) for _ in range(40)]
        admitted = sum(1 for s, _ in statuses if s == 200)
        refused = [h for s, h in statuses if s == 429]
        assert 30 <= admitted <= 32 and len(refused) == 40 - admitted, [s for s, _ in statuses]
        assert all(int(h["retry-after"]) >= 1 for h in refused)
        assert status_of(server.url, reader)[0] == 200, "other keys are not slowed"

        async def calls():
            async with http_mcp(server.url, key=lead) as c:
                await ok(c, "search", {"library": "wiki", "query": "zanzibar quokka rivers"})
                await ok(c, "list_libraries")
                assert (await fails(c, "search", {"library": "nope", "query": "x"}))["error"]["code"] == "LIBRARY_NOT_FOUND"

        run(calls())

        def metrics(key):
            request = urllib.request.Request(server.url + "/metrics", headers={"Authorization": f"Bearer {key}"} if key else {})
            try:
                with urllib.request.urlopen(request, timeout=30) as r:
                    return r.status, r.read().decode()
            except urllib.error.HTTPError as e:
                return e.code, ""

        assert metrics(None)[0] == 401 and metrics(reader)[0] == 403
        status, text = metrics(lead)
        assert status == 200
        assert 'mcp_server_operation_duration_seconds_count{operation="search",outcome="ok"} 1' in text
        assert 'mcp_server_operation_duration_seconds_count{operation="search",outcome="LIBRARY_NOT_FOUND"} 1' in text
        assert f'folio_rate_limited_total{{caller="fast"}} {40 - admitted}' in text
        assert 'folio_auth_failures_total{reason="no key"} 1' in text
        assert 'folio_library_documents{library="wiki"} 1' in text

    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    calls = [(l["caller"], l["operation"], l["library"], l["outcome"]) for l in lines]
    assert calls == [
        ("lead", "search", "wiki", "ok"),
        ("lead", "list_libraries", None, "ok"),
        ("lead", "search", "nope", "LIBRARY_NOT_FOUND"),
    ], calls
    assert all(l["transport"] == "http" and l["correlation_id"] and l["duration_ms"] >= 0 for l in lines)
    text = audit.read_text()
    assert "zanzibar" not in text and lead[6:] not in text, "never the query, never the key"


def test_ingest_budgets_ingest_metrics_and_logged_queries(data, tmp_path):
    """An ingest rate (bytes an hour) per key: an ingest starts while the
    key's budget lasts, may overdraw it once, and the next is refused
    RATE_LIMITED with the wait, writing nothing; other keys are untouched.
    /metrics counts what was ingested; `[audit] include_queries` puts the
    query in its audit line."""
    bot = create_key(data, "bot", "--scope", "search,ingest")
    other = create_key(data, "other", "--scope", "search,ingest")
    lead = create_key(data, "lead", "--scope", "search,ingest,admin")
    audit = tmp_path / "audit.jsonl"
    config = tmp_path / "audit.toml"
    write_config(config, "[audit]\ninclude_queries = true\n")
    def text(c):
        return f"# Levees {c}\n\n" + "Levees hold back the river in flood. " * 16

    size = len(text("a").encode())  # 604 bytes each

    scrape = free_port()
    with HttpServer(data, "--auth", "keys", "--ingest-rate", "1000B/h", "--audit-log", str(audit),
                    "--metrics-addr", f"127.0.0.1:{scrape}", config=config) as server:

        async def as_bot():
            async with http_mcp(server.url, key=bot) as c:
                for c_ in ("a", "b"):
                    written = await ok(c, "ingest", {"library": "wiki", "content": {"name": f"{c_}.md", "text": text(c_)}})
                    assert written["indexed"] == 1
                refused = await fails(c, "ingest", {"library": "wiki", "content": {"name": "c.md", "text": text("c")}})
                assert refused["error"]["code"] == "RATE_LIMITED", refused
                # 208 bytes overdrawn at 1000 bytes an hour.
                wait = refused["error"]["details"]["retry_after_seconds"]
                assert 700 <= wait <= 800, wait
                await ok(c, "search", {"library": "wiki", "query": "levees in flood"})

        run(as_bot())

        async def as_other():
            async with http_mcp(server.url, key=other) as c:
                assert (await ok(c, "ingest", {"library": "wiki", "content": {"name": "d.md", "text": text("d")}}))["indexed"] == 1
                assert (await ok(c, "inspect_library", {"library": "wiki"}))["document_count"] == 3

        run(as_other())

        request = urllib.request.Request(server.url + "/metrics", headers={"Authorization": f"Bearer {lead}"})
        with urllib.request.urlopen(request, timeout=30) as r:
            metrics = r.read().decode()
        samples = dict(line.rsplit(" ", 1) for line in metrics.splitlines() if line and not line.startswith("#"))
        assert samples["folio_ingest_documents_total"] == "3"
        assert int(samples["folio_ingest_bytes_total"]) == 3 * size
        assert int(samples["folio_ingest_chunks_total"]) >= 3
        assert float(samples["folio_embedding_seconds_total"]) > 0
        assert samples['folio_rate_limited_total{caller="bot"}'] == "1"
        # The metrics listener serves the same counters without a key; the
        # main address still asks for one.
        with urllib.request.urlopen(f"http://127.0.0.1:{scrape}/metrics", timeout=30) as r:
            assert "folio_ingest_documents_total 3" in r.read().decode()
        assert status_of(server.url)[0] == 401

    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    searches = [l for l in lines if l["operation"] == "search"]
    assert [l["query"] for l in searches] == ["levees in flood"]
    assert [l["outcome"] for l in lines if l["operation"] == "ingest"] == ["ok", "ok", "RATE_LIMITED", "ok"]
