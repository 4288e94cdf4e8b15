"""The transports themselves, from the official client SDK: handshake or
discovery, ping, paginated tools/list, unknown tools, invalid params,
progress notifications, and HTTP session handling."""

import http.client
import json

import pytest
from mcp.shared.exceptions import MCPError

from conftest import MODES, HttpServer, fails, http_mcp, ok, run, stdio

ALL = ["--toolsets", "native,citeloom,bmcis"]


async def exercise(client, mode, corpus):
    if mode == "legacy":
        assert client.server_info.name == "folio"
        assert "folio" in client.instructions
        assert client.protocol_version == "2025-11-25"
        await client.send_ping()
    else:
        assert client.protocol_version == "2026-07-28"

    # Pagination: four tools a page, followed to the end, in a stable order.
    names, cursor, pages = [], None, 0
    while True:
        page = await client.list_tools(cursor=cursor)
        pages += 1
        assert len(page.tools) <= 4
        names += [t.name for t in page.tools]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert pages == 7
    assert len(names) == len(set(names)) == 26
    assert names[:3] == ["search", "get_document", "get_chunks"]
    search = next(t for t in (await client.list_tools()).tools if t.name == "search")
    assert search.output_schema["type"] == "object"
    assert search.annotations.read_only_hint is True
    assert search.input_schema["properties"]["top_k"]["maximum"] == 100

    with pytest.raises(MCPError) as unknown:
        await client.call_tool("no_such_tool", {})
    assert unknown.value.error.code == -32602
    assert "no_such_tool" in unknown.value.error.message

    bad = await fails(client, "search", {"library": "x", "query": "q", "top_k": "many"})
    assert bad["error"]["code"] == "INVALID_ARGUMENT"
    assert "top_k" in bad["error"]["message"]

    # Progress notifications on a folder ingest.
    seen = []

    async def progress(done, total, message):
        seen.append((done, total))

    report = await ok(client, "ingest", {"library": "papers", "paths": [str(corpus)]}, progress_callback=progress)
    assert report["indexed"] == 5 and report["failed"] == 0
    assert seen, "no progress notifications"
    assert seen[-1][0] == 5 and all(t == 5 for _, t in seen if t is not None)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


@pytest.mark.parametrize("mode", MODES)
def test_stdio_transport(mode, data, corpus):
    async def go():
        async with stdio(data, *ALL, mode=mode, env={"FOLIO_TOOLS_PAGE_SIZE": 4}) as client:
            await exercise(client, mode, corpus)

    run(go())


@pytest.mark.parametrize("mode", MODES)
def test_http_transport(mode, data, corpus):
    with HttpServer(data, *ALL, env={"FOLIO_TOOLS_PAGE_SIZE": 4}) as server:

        async def go():
            async with http_mcp(server.url, mode=mode) as client:
                await exercise(client, mode, corpus)

        run(go())


def post(port, body, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request(
        "POST",
        "/mcp",
        body=json.dumps(body),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **(headers or {}),
        },
    )
    response = conn.getresponse()
    return response, response.read().decode()


def test_http_sessions_for_2025_and_stateless_2026(data):
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    with HttpServer(data) as server:
        response, body = post(server.port, init)
        assert response.status == 200, body
        session = response.getheader("Mcp-Session-Id")
        assert session, "a 2025-11-25 initialize opens a session"
        assert "2025-11-25" in body
        headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        response, _ = post(server.port, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
        assert response.status == 202
        response, body = post(server.port, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers)
        assert response.status == 200 and '"search"' in body
        # An unknown session is refused, not silently served.
        response, _ = post(
            server.port,
            {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
            {"Mcp-Session-Id": "not-a-session", "MCP-Protocol-Version": "2025-11-25"},
        )
        assert response.status == 404
        # Closing the session ends it.
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request("DELETE", "/mcp", headers=headers)
        assert conn.getresponse().status in (200, 202, 204)
        response, _ = post(server.port, {"jsonrpc": "2.0", "id": 4, "method": "tools/list"}, headers)
        assert response.status == 404


def test_resources_expose_libraries_and_documents(data):
    async def go():
        async with stdio(data) as client:
            await ok(
                client,
                "ingest",
                {"library": "notes", "content": {"name": "n.md", "text": "# Note\n\nResource text here."}},
            )
            templates = await client.list_resource_templates()
            uris = [t.uri_template for t in templates.resource_templates]
            assert uris == ["folio://library/{library}", "folio://document/{document_id}",
                            "folio://document/{document_id}/page/{page}{?chunk}", "folio://entity/{library}/{name}"]
            listed = await client.list_resources()
            assert [str(r.uri) for r in listed.resources] == ["folio://library/notes"]
            library = await client.read_resource("folio://library/notes")
            body = json.loads(library.contents[0].text)
            assert body["document_count"] == 1
            document = await client.read_resource(body["documents"][0]["uri"])
            assert "Resource text here." in document.contents[0].text
            with pytest.raises(MCPError):
                await client.read_resource("folio://document/0000000000000000")

    run(go())


def test_stdio_answers_malformed_lines_and_keeps_serving(data):
    """Issue 16: one line of invalid UTF-8 killed `folio serve --stdio`;
    non-JSON, an open brace, a NUL, deep nesting, trailing garbage and a lone
    surrogate got no answer. Each gets its JSON-RPC error and the session
    carries on."""
    import subprocess

    from conftest import BIN, folio_env

    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
    bad = [
        (b"\xff\xfe\xfd not utf-8", -32700),
        (b"this is not json", -32700),
        (b"{", -32700),
        (b'{"jsonrpc":"2.0","id":7,"method":"ping"}\x00', -32700),
        (b"[" * 100_000 + b"]" * 100_000, -32700),
        (b'{"jsonrpc":"2.0","id":8,"method":"ping"} trailing', -32700),
        (b'{"jsonrpc":"2.0","id":9,"method":"ping","params":{"s":"\\ud800"}}', -32700),
        (b"[1,2,3]", -32600),
    ]
    process = subprocess.Popen([BIN, "serve", "--stdio"], env=folio_env(data), stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        def send(line):
            process.stdin.write(line + b"\n")
            process.stdin.flush()

        def answer():
            line = process.stdout.readline()
            assert line, "the server closed its output"
            return json.loads(line)

        send(json.dumps(init).encode())
        assert answer()["result"]["serverInfo"]["name"]
        send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        for line, code in bad:
            send(line)
            got = answer()
            assert got["error"]["code"] == code, (line[:40], got)
            assert got["id"] is None
        send(b'{"jsonrpc":"2.0","id":42,"method":"ping"}')
        pong = answer()
        assert pong["id"] == 42 and "result" in pong, pong
        send(b'{"jsonrpc":"2.0","id":43,"method":"tools/list"}')
        assert answer()["result"]["tools"]
    finally:
        process.kill()
        process.wait()


def test_a_kept_connection_gets_each_answer_at_once(data):
    """An agent's host keeps its HTTP connection: each answer must leave
    the server when it is ready. Without TCP_NODELAY on the server's
    sockets the answer's last write waited for the client's delayed
    acknowledgement, 40 ms a call whatever the work (44 ms a search on a
    library whose search takes 3)."""
    import socket
    import statistics
    import time

    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "0"}}}
    with HttpServer(data) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        conn.connect()
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

        def send(message, headers):
            conn.request("POST", "/mcp", body=json.dumps(message), headers={**base, **headers})
            response = conn.getresponse()
            return response, response.read().decode()

        response, _ = send(init, {})
        headers = {"Mcp-Session-Id": response.getheader("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"}
        send({"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
        times = []
        for i in range(30):
            started = time.perf_counter()
            response, body = send({"jsonrpc": "2.0", "id": 10 + i, "method": "ping"}, headers)
            times.append((time.perf_counter() - started) * 1e3)
            assert response.status == 200 and '"result"' in body, body
        assert statistics.median(times) < 20, sorted(times)
