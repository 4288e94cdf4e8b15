"""Issue 46: a team server that does not leak. Every MCP method is
authorised through one mapping to a scope (resources, prompts and
completion need search; a method folio does not serve is refused); resource
reads are audited; a keyed caller reads no server file without configured
roots; an SSE or streamable HTTP session answers only the credential that
opened it, with that credential's rights of the moment; `server_info` shows
a restricted caller nothing outside its libraries and scopes; an ingest
budget admits each document as it is written. Each refused attempt is
counted; none may succeed."""

import asyncio
import http.client
import json
import subprocess
import threading
import time
import urllib.error
import urllib.request

from mcp.shared.exceptions import MCPError
from conftest import BIN, HttpServer, fails, folio_env, free_port, http_mcp, ok, run, write_config
from test_keys import create_key
from test_oauth import seed


class Rpc:
    """A raw streamable HTTP client: each request as its own POST with a
    bearer key, the answer read from JSON or from the event stream."""

    def __init__(self, url, key):
        self.url, self.key, self.session, self.next_id = url, key, None, 1

    def post(self, message, key=None):
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        }
        key = key or self.key
        if key:
            headers["Authorization"] = f"Bearer {key}"
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        request = urllib.request.Request(self.url + "/mcp", data=json.dumps(message).encode(), headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=60) as r:
                body = r.read().decode()
                session = r.headers.get("mcp-session-id")
                status = r.status
        except urllib.error.HTTPError as e:
            return e.code, None
        if session and not self.session:
            self.session = session
        answers = []
        for line in body.splitlines():
            line = line[5:].strip() if line.startswith("data:") else line.strip()
            if line.startswith("{"):
                answers.append(json.loads(line))
        answer = next((a for a in answers if a.get("id") == message.get("id")), None)
        return status, answer

    def request(self, method, params=None, key=None):
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        return self.post(message, key)

    def open(self):
        status, answer = self.request("initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}})
        assert status == 200 and "result" in answer, (status, answer)
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self


def test_every_method_needs_its_scope_and_resource_reads_are_audited(data, tmp_path):
    hr_doc = seed(data)
    bot = create_key(data, "ci-bot", "--scope", "ingest", "--libraries", "wiki")
    reader = create_key(data, "reader", "--scope", "search", "--libraries", "wiki")
    lead = create_key(data, "lead", "--scope", "search,ingest,admin")
    secret = tmp_path / "folio.toml"
    secret.write_text('[store]\nurl = "postgres://folio:hunter2@db/folio"\n')
    audit = tmp_path / "audit.jsonl"
    attempts = []  # (what, accepted?)
    with HttpServer(data, "--auth", "keys", "--audit-log", str(audit)) as server:

        async def as_bot():
            async with http_mcp(server.url, key=bot) as c:
                for what, read in [
                    ("list resources without search", lambda: c.list_resources()),
                    ("list resource templates without search", lambda: c.list_resource_templates()),
                    ("read a library resource without search", lambda: c.read_resource("folio://library/wiki")),
                    ("read another library's resource without search", lambda: c.read_resource("folio://library/hr")),
                    ("read a document without search", lambda: c.read_resource(f"folio://document/{hr_doc}")),
                    ("read a page image without search",
                     lambda: c.read_resource(f"folio://document/{hr_doc}/page/1?chunk=0")),
                    ("read an entity without search", lambda: c.read_resource("folio://entity/wiki/rivers")),
                ]:
                    try:
                        await read()
                        attempts.append((what, True))
                    except MCPError as e:
                        attempts.append((what, False))
                        assert "search scope" in str(e.error.message) or e.code == -32601, (what, e.error)
                # The server's own files: no roots, no file reading for a key.
                refused = await fails(c, "ingest", {"library": "wiki", "paths": [str(secret)]})
                attempts.append(("ingest the server's config", refused["error"]["code"] != "PATH_NOT_ALLOWED"))
                written = await ok(c, "ingest", {"library": "wiki", "content": {"name": "ci.md", "text": "# Build\n\nGreen."}})
                assert written["indexed"] == 1, "content stays open to an ingest key"

        run(as_bot())

        # Methods without a tool, raw: prompts and completion need search;
        # a method folio does not serve is refused for every caller.
        raw = Rpc(server.url, bot).open()
        for what, method, params in [
            ("list prompts without search", "prompts/list", {}),
            ("get a prompt without search", "prompts/get", {"name": "x"}),
            ("complete without search", "completion/complete", {
                "ref": {"type": "ref/resource", "uri": "folio://library/{library}"},
                "argument": {"name": "library", "value": "h"}}),
            ("subscribe without search", "resources/subscribe", {"uri": "folio://library/hr"}),
        ]:
            status, answer = raw.request(method, params)
            attempts.append((what, status == 200 and answer is not None and "result" in answer))
            assert answer["error"]["data"]["required_scope"] == "search", (what, answer)
        for caller in (bot, lead):
            unserved = Rpc(server.url, caller).open()
            # Tasks only for a client of the Tasks extension (-32021: this
            # one did not declare it); the others for no one.
            for method, code in (("tasks/get", -32021), ("skills/list", -32601), ("folio/anything", -32601)):
                status, answer = unserved.request(method, {"taskId": "1"})
                attempts.append((f"{method} by {caller[:12]}", answer is None or "result" in answer))
                assert answer["error"]["code"] == code, (method, answer)

        async def as_reader():
            async with http_mcp(server.url, key=reader) as c:
                listed = await c.list_resources()
                assert [r.name for r in listed.resources] == ["wiki"]
                library = await c.read_resource("folio://library/wiki")
                assert json.loads(library.contents[0].text)["document_count"] == 2
                for what, uri in [("read another library's document", f"folio://document/{hr_doc}"),
                                  ("read another library's page image", f"folio://document/{hr_doc}/page/1")]:
                    try:
                        await c.read_resource(uri)
                        attempts.append((what, True))
                    except MCPError as e:
                        attempts.append((what, False))
                        assert e.error.message == f"no resource {uri}", e.error

        run(as_reader())

    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    reads = [(l["caller"], l["operation"], l["library"], l["outcome"]) for l in lines if l["operation"].startswith("resources/")]
    assert ("ci-bot", "resources/read", "hr", "forbidden") in reads, reads
    assert ("reader", "resources/read", "wiki", "ok") in reads, reads
    assert ("reader", "resources/list", None, "ok") in reads, reads
    assert ("reader", "resources/read", None, "not_found") in reads, reads
    assert any(l["operation"] == "folio/anything" and l["outcome"] == "unserved" for l in lines), lines
    accepted = [what for what, accepted in attempts if accepted]
    assert len(attempts) >= 16 and accepted == [], (len(attempts), accepted)


def test_ingest_paths_for_keys_only_inside_roots(data, tmp_path):
    root = tmp_path / "shared"
    root.mkdir()
    (root / "inside.md").write_text("# Inside\n\nA note in the shared root.")
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nNot for keys.")
    config = write_config(tmp_path / "roots.toml", f'[ingest]\nroots = ["{root}"]\n')
    bot = create_key(data, "bot", "--scope", "search,ingest")
    with HttpServer(data, "--auth", "keys", config=config) as server:

        async def go():
            async with http_mcp(server.url, key=bot) as c:
                inside = await ok(c, "ingest", {"library": "notes", "paths": [str(root / "inside.md")]})
                assert inside["indexed"] == 1
                # Outside the roots: the item fails, nothing is written.
                refused = await ok(c, "ingest", {"library": "notes", "paths": [str(outside)]})
                assert [i["error"]["code"] for i in refused["items"]] == ["PATH_NOT_ALLOWED"], refused
                assert refused["indexed"] == 0
                info = await ok(c, "server_info", {"check_path": str(outside)})
                assert not info["path_check"]["readable"]
                info = await ok(c, "server_info", {"check_path": str(root / "inside.md")})
                assert info["path_check"]["readable"]

        run(go())
    # mcpvectordb's ingest_folder confines the folder before listing it: a
    # folder outside the roots is refused without a word of what it holds.
    secrets = tmp_path / "secret"
    secrets.mkdir()
    (secrets / "api-keys.yaml").write_text("token: hunter2\n")
    with HttpServer(data, "--auth", "keys", "--toolsets", "mcpvectordb", config=config) as server:

        async def folder():
            async with http_mcp(server.url, key=bot) as c:
                refused = await fails(c, "ingest_folder", {"folder": str(secrets), "library": "notes"})
                assert "api-keys" not in json.dumps(refused) and "outside" in json.dumps(refused), refused
                done = await ok(c, "ingest_folder", {"folder": str(root), "library": "notes"})
                assert done["errors"] == [], done

        run(folder())


def sse_open(port, key):
    """Opens `/sse` with `key`: the connection, its response, and the
    endpoint for messages."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request("GET", "/sse", headers={"Authorization": f"Bearer {key}", "Accept": "text/event-stream"})
    response = connection.getresponse()
    assert response.status == 200, response.status
    endpoint = None
    while endpoint is None:
        line = response.readline().decode()
        if line.startswith("data:"):
            endpoint = line[5:].strip()
    return connection, response, endpoint


def sse_post(port, endpoint, key, message):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{endpoint}", data=json.dumps(message).encode(),
                                     headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def sse_answer(response, id_):
    while True:
        line = response.readline().decode()
        assert line, "the stream ended"
        if line.startswith("data:"):
            message = json.loads(line[5:])
            if message.get("id") == id_:
                return message


def test_sessions_follow_the_credential_of_each_request(data):
    seed(data)
    alice = create_key(data, "alice", "--scope", "search,ingest,admin")
    bob = create_key(data, "bob", "--scope", "search")
    port = free_port()
    attempts = []
    with HttpServer(data, "--auth", "keys", port=port) as server:
        # SSE: a session opened by an admin key; the key is revoked and a
        # search-only key is given the same name.
        connection, response, endpoint = sse_open(port, alice)
        assert sse_post(port, endpoint, alice, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}}) == 202
        assert "result" in sse_answer(response, 1)
        sse_post(port, endpoint, alice, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert sse_post(port, endpoint, bob, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}) == 404, \
            "another key finds no such session"
        subprocess.run([BIN, "keys", "revoke", "alice"], env=folio_env(data), check=True, capture_output=True)
        renamed = create_key(data, "alice", "--scope", "search", "--libraries", "wiki")
        time.sleep(2.5)
        status = sse_post(port, endpoint, renamed, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                                     "params": {"name": "delete_library", "arguments": {"library": "hr"}}})
        attempts.append(("a new key with a revoked key's name posts to its session", status != 404))
        attempts.append(("the revoked key posts", sse_post(port, endpoint, alice, {"jsonrpc": "2.0", "id": 4, "method": "tools/list"}) != 401))
        # The revoked key's stream ends.
        ended = threading.Event()

        def drain():
            while response.readline():
                pass
            ended.set()

        threading.Thread(target=drain, daemon=True).start()
        attempts.append(("a revoked key's stream stays open", not ended.wait(30)))
        connection.close()

        # Streamable HTTP: a session answers the key that opened it only.
        carol = create_key(data, "carol", "--scope", "search,ingest,admin")
        opened = Rpc(server.url, carol).open()
        status, answer = opened.request("tools/list", key=bob)
        attempts.append(("another key uses a streamable session", status != 404))
        status, answer = opened.request("tools/list")
        assert status == 200 and "result" in answer

        async def check():
            async with http_mcp(server.url, key=carol) as c:
                assert (await ok(c, "inspect_library", {"library": "hr"}))["document_count"] == 1

        run(check())
    accepted = [what for what, accepted in attempts if accepted]
    assert accepted == [], accepted


def test_server_info_shows_a_restricted_caller_its_own(data, tmp_path):
    seed(data)
    board = tmp_path / "board"
    board.mkdir()
    (board / "minutes.md").write_text("# Minutes\n\nThe board met.")
    wiki = tmp_path / "wikidocs"
    wiki.mkdir()
    (wiki / "page.md").write_text("# Page\n\nA wiki page.")
    reader = create_key(data, "reader", "--scope", "search", "--libraries", "wiki")
    editor = create_key(data, "editor", "--scope", "search,ingest", "--libraries", "wiki")
    lead = create_key(data, "lead", "--scope", "search,ingest,admin")
    with HttpServer(data, "--auth", "keys", "--watch", f"{board}=board", "--watch", f"{wiki}=wiki") as server:

        async def go():
            async with http_mcp(server.url, key=reader) as c:
                info = await ok(c, "server_info", {"check_path": str(board / "minutes.md")})
                assert [w["library"] for w in info["watches"]] == ["wiki"], info["watches"]
                assert info["watches"][0]["folder"] == "", "a search key is not told the folder"
                assert info["data_dir"] == "" and info.get("model_dir") in (None, "")
                # Nothing names the server's folders (the path asked about is
                # the caller's own words, echoed).
                shown = json.dumps({k: v for k, v in info.items() if k != "path_check"})
                assert str(data) not in shown and str(tmp_path) not in shown, shown
                assert info["path_check"] == {"path": str(board / "minutes.md"), "readable": False,
                                              "error": "check_path needs the ingest scope"}
            async with http_mcp(server.url, key=editor) as c:
                info = await ok(c, "server_info")
                assert [w["folder"] for w in info["watches"]] == [str(wiki)]
            async with http_mcp(server.url, key=lead) as c:
                info = await ok(c, "server_info")
                assert {w["library"] for w in info["watches"]} == {"board", "wiki"}
                assert info["data_dir"] == str(data)

        run(go())


def test_an_ingest_budget_admits_each_document_once(data, tmp_path):
    bot = create_key(data, "bot", "--scope", "search,ingest")
    speech = "The member spoke at length about the levee and the river. " * 90  # ~5 KB
    with HttpServer(data, "--auth", "keys", "--toolsets", "hansard", "--ingest-rate", "1000B/h") as server:

        async def one(i):
            async with http_mcp(server.url, key=bot) as c:
                result = await c.call_tool("ingest_speech", {
                    "title": f"Levees {i}", "full_text": f"Speech {i}. {speech}", "speaker": "Member", "party": "Ind",
                    "chamber": "Senate", "state": "NSW", "date": "2024-03-01", "hansard_reference": f"S-{i}"})
                return result.is_error, result.structured_content or result.content[0].text

        async def go():
            return await asyncio.gather(*(one(i) for i in range(3)))

        results = run(go())
        accepted = [body for is_error, body in results if not is_error]
        assert len(accepted) == 1, results
        for is_error, body in results:
            if is_error:
                assert "bytes for this hour" in json.dumps(body), body


def test_metrics_listener_checks_host_and_rate_needs_keys(data):
    scrape = free_port()
    with HttpServer(data, "--metrics-addr", f"127.0.0.1:{scrape}"):
        def get(host):
            connection = http.client.HTTPConnection("127.0.0.1", scrape, timeout=30)
            connection.request("GET", "/metrics", headers={"Host": host})
            return connection.getresponse().status

        assert get(f"127.0.0.1:{scrape}") == 200
        assert get(f"localhost:{scrape}") == 200
        assert get(f"rebound.example:{scrape}") == 403, "a DNS-rebinding page is refused"
    for auth in (["--auth", "none"], ["--auth", "token", "--token", "t"]):
        done = subprocess.run([BIN, "serve", "--http", "127.0.0.1:9", *auth, "--rate", "60/min"],
                              env=folio_env(data), capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and "--rate" in done.stderr, (auth, done.stderr)
