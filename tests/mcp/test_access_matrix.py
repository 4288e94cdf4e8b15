"""Issue 46: every MCP method and HTTP route, under every auth mode (none,
a shared token, access keys, OAuth tokens of a real provider), for every
kind of caller (none, search, ingest, admin, another library's), against
what the brief's authorisation rules say it should get: an independent
oracle (`expected`), not the server's own mapping. Each cell is measured
on the wire; the table is written to target/access-matrix-<backend>.md
(docs/benchmarks-history.md quotes it) and no cell may differ from the oracle."""

import http.client
import json
from pathlib import Path

from conftest import BACKEND, HttpServer, free_port, run, stdio, ok
from test_access import Rpc
from test_keys import create_key
from test_oauth import oauth_server, provider, rsa_key

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "matrix-shared-token"

# What each request needs, as the brief states it: reading is search,
# writing ingest, deleting a library admin; the libraries a request
# touches; methods folio does not serve are refused to everyone.
OPERATIONS = [
    # (row, what it is, scope needed, library touched)
    ("initialize", ("rpc", "initialize"), None, None),
    ("ping", ("rpc", "ping"), None, None),
    ("tools/list", ("rpc", "tools/list"), None, None),
    ("tools/call search (wiki)", ("tool", "search", {"library": "wiki", "query": "rivers"}), "search", "wiki"),
    ("tools/call search (hr)", ("tool", "search", {"library": "hr", "query": "salary"}), "search", "hr"),
    ("tools/call get_document (hr)", ("tool", "get_document", {"document_id": "HR_DOC"}), "search", "hr"),
    ("tools/call ingest (wiki)", ("tool", "ingest", {"library": "wiki", "content": {"name": "m.md", "text": "# M\n\nMatrix."}}), "ingest", "wiki"),
    ("tools/call delete_library (absent)", ("tool", "delete_library", {"library": "wiki-absent"}), "admin", "wiki-absent"),
    ("resources/list", ("rpc", "resources/list"), "search", None),
    ("resources/templates/list", ("rpc", "resources/templates/list"), "search", None),
    ("resources/read library (wiki)", ("rpc", "resources/read", {"uri": "folio://library/wiki"}), "search", "wiki"),
    ("resources/read document (hr)", ("rpc", "resources/read", {"uri": "folio://document/HR_DOC"}), "search", "hr"),
    ("resources/read entity (hr)", ("rpc", "resources/read", {"uri": "folio://entity/hr/Acme%20Corp"}), "search", "hr"),
    ("prompts/list", ("rpc", "prompts/list"), "search", None),
    ("completion/complete", ("rpc", "completion/complete", {
        "ref": {"type": "ref/resource", "uri": "folio://library/{library}"}, "argument": {"name": "library", "value": "w"}}), "search", None),
    # A subscription answers the same whether the resource exists or the
    # caller may read it (no probe); only its updates depend on that.
    ("resources/subscribe (wiki)", ("rpc", "resources/subscribe", {"uri": "folio://library/wiki"}), "search", None),
    ("resources/subscribe (hr)", ("rpc", "resources/subscribe", {"uri": "folio://library/hr"}), "search", None),
    ("resources/unsubscribe", ("rpc", "resources/unsubscribe", {"uri": "folio://library/hr"}), "search", None),
    ("logging/setLevel", ("rpc", "logging/setLevel", {"level": "debug"}), None, None),
    # Tasks are served to clients of the Tasks extension only (this one is not).
    ("tasks/get", ("rpc", "tasks/get", {"taskId": "1"}), "unserved", None),
    ("a custom method", ("rpc", "folio/anything", {}), "unserved", None),
    ("GET /health", ("http", "GET", "/health"), "open", None),
    # Its gauges name every library.
    ("GET /metrics", ("http", "GET", "/metrics"), "admin", "*"),
    ("GET /sse", ("http", "GET", "/sse"), None, None),
    ("POST /messages (no session)", ("http", "POST", "/messages?session_id=none"), None, None),
]


def expected(mode, caller, scope, library):
    """What the brief says `caller` gets: allowed, 401 (who are you),
    denied (a scope or a library it lacks) or unserved."""
    if scope == "open":
        return "allowed"
    if caller["credential"] is None and mode != "none":
        return "401"
    if scope == "unserved":
        return "unserved"
    if mode in ("none", "token"):
        # The local user, or the holder of the one shared token.
        return "allowed"
    if scope is not None and scope not in caller["scopes"]:
        return "denied"
    if library is not None and caller["libraries"] is not None and (library == "*" or library not in caller["libraries"]):
        return "denied"
    return "allowed"


def measure(url, port, credential, operation, hr_doc):
    """What the server answered, classified as the oracle speaks."""
    kind = operation[0]
    fill = lambda value: json.loads(json.dumps(value).replace("HR_DOC", hr_doc))
    if kind == "http":
        _, method, path = operation
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        headers = {"Accept": "text/event-stream" if path == "/sse" else "*/*", "Content-Type": "application/json"}
        if credential:
            headers["Authorization"] = f"Bearer {credential}"
        connection.request(method, path, body=b"{}" if method == "POST" else None, headers=headers)
        status = connection.getresponse().status
        connection.close()
        return {200: "allowed", 202: "allowed", 401: "401", 403: "denied", 404: "allowed-no-session"}.get(status, f"http {status}")
    rpc = Rpc(url, credential)
    status, answer = rpc.request("initialize", {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "matrix", "version": "1"}})
    if status == 401:
        return "401"
    assert status == 200, status
    if operation == ("rpc", "initialize"):
        return "allowed" if "result" in answer else "error"
    rpc.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    if kind == "tool":
        _, name, arguments = operation
        status, answer = rpc.request("tools/call", {"name": name, "arguments": fill(arguments)})
    else:
        status, answer = rpc.request(operation[1], fill(operation[2]) if len(operation) > 2 else None)
    if status in (401, 403):
        return {401: "401", 403: "denied"}[status]
    if answer is None:
        return f"http {status}"
    if "error" in answer:
        code = answer["error"]["code"]
        # A resource outside the caller's libraries reads as missing.
        # -32021: a method of an extension the client did not declare.
        return {-32600: "denied", -32002: "denied", -32601: "unserved", -32021: "unserved"}.get(code, f"error {code}")
    result = answer["result"]
    if kind == "tool" and result.get("isError"):
        error = (result.get("structuredContent") or {}).get("error", {})
        return "denied" if error.get("code") in ("FORBIDDEN", "forbidden") else "allowed"
    return "allowed"


def test_every_method_and_route_under_every_auth_mode(data, tmp_path):
    async def seed():
        async with stdio(data) as c:
            await ok(c, "ingest", {"library": "wiki", "content": {"name": "w.md", "text": "# Rivers\n\nRivers carry silt."}})
            hr = await ok(c, "ingest", {"library": "hr", "content": {"name": "s.md", "text":
                "# Salaries\n\nSalaries at Acme Corp rose. The board of Acme Corp approved them."}})
            return hr["items"][0]["document_id"]

    hr_doc = run(seed())
    columns = []  # (mode, caller name, caller, port, url) measured in turn
    cells = {}

    def sweep(mode, server, port, callers):
        for name, caller in callers:
            for row, operation, scope, library in OPERATIONS:
                if operation == ("http", "POST", "/messages?session_id=none"):
                    # A session that does not exist: 404 to every admitted caller.
                    want = expected(mode, caller, None, None)
                    want = "allowed-no-session" if want == "allowed" else want
                else:
                    want = expected(mode, caller, scope, library)
                got = measure(server.url, port, caller["credential"], operation, hr_doc)
                cells[(row, mode, name)] = (want, got)
            columns.append((mode, name))

    anyone = {"credential": None, "scopes": set(), "libraries": None}
    port = free_port()
    with HttpServer(data, port=port) as server:
        sweep("none", server, port, [("anyone", anyone)])
    port = free_port()
    with HttpServer(data, "--auth", "token", "--token", TOKEN, port=port) as server:
        sweep("token", server, port, [("no token", anyone),
                                      ("token", {"credential": TOKEN, "scopes": set(), "libraries": None})])
    keys = [
        ("no key", anyone),
        ("search (wiki)", {"credential": create_key(data, "m-search", "--scope", "search", "--libraries", "wiki"),
                           "scopes": {"search"}, "libraries": {"wiki"}}),
        ("ingest (wiki)", {"credential": create_key(data, "m-ingest", "--scope", "ingest", "--libraries", "wiki"),
                           "scopes": {"ingest"}, "libraries": {"wiki"}}),
        ("admin", {"credential": create_key(data, "m-admin", "--scope", "search,ingest,admin"),
                   "scopes": {"search", "ingest", "admin"}, "libraries": None}),
        ("other library", {"credential": create_key(data, "m-other", "--scope", "search,ingest,admin", "--libraries", "other"),
                           "scopes": {"search", "ingest", "admin"}, "libraries": {"other"}}),
    ]
    port = free_port()
    with HttpServer(data, "--auth", "keys", port=port) as server:
        sweep("keys", server, port, keys)
    _, k1 = rsa_key("k1")
    port = free_port()
    with provider(tmp_path, [k1], f"http://127.0.0.1:{port}/mcp") as idp, \
            oauth_server(data, port, idp.issuer, tmp_path) as server:
        tokens = [
            ("no token", anyone),
            ("search (wiki)", {"credential": idp.token("reader", "search"), "scopes": {"search"}, "libraries": {"wiki"}}),
            ("ingest (wiki)", {"credential": idp.token("writer", "ingest"), "scopes": {"ingest"}, "libraries": {"wiki"}}),
            ("admin", {"credential": idp.token("lead", "search ingest admin"),
                       "scopes": {"search", "ingest", "admin"}, "libraries": None}),
        ]
        sweep("oauth", server, port, tokens)

    header = "| request | " + " | ".join(f"{mode}: {name}" for mode, name in columns) + " |"
    lines = [header, "|" + "---|" * (len(columns) + 1)]
    unexpected = []
    for row, *_ in OPERATIONS:
        shown = []
        for mode, name in columns:
            want, got = cells[(row, mode, name)]
            if want != got:
                unexpected.append((row, mode, name, want, got))
            shown.append(got if want == got else f"**{got}** (expected {want})")
        lines.append(f"| {row} | " + " | ".join(shown) + " |")
    table = "\n".join(lines) + f"\n\n{len(cells)} cells, {len(unexpected)} unexpected ({BACKEND} backend).\n"
    out = ROOT / "target" / f"access-matrix-{BACKEND}.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(table)
    assert unexpected == [], "\n".join(map(str, unexpected))
