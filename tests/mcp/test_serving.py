"""HTTP safety, and many stdio clients on one data directory."""

import asyncio
import contextlib
import http.client
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import BIN, HttpServer, fails, folio_env, ok, run, stdio

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}


def request(port, method="POST", path="/mcp", body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    conn.request(method, path, body=data, headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **(headers or {})})
    response = conn.getresponse()
    response.read()
    return response.status


def oversized_status(port, size, headers):
    """The status a POST of `size` bytes gets from a server that stops
    reading at its body limit: the body is sent a slice at a time while the
    answer is awaited, and the answer is read as soon as it arrives (a
    client that only writes meets a closed connection instead)."""
    head = "".join(f"{k}: {v}\r\n" for k, v in {
        "Host": f"127.0.0.1:{port}", "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream", "Content-Length": str(size), **headers}.items())
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(f"POST /mcp HTTP/1.1\r\n{head}\r\n".encode())
        piece, sent = b"x" * 65536, 0
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            readable, writable, _ = select.select([s], [s] if sent < size else [], [], 1)
            if readable:
                answer = s.recv(64)
                return int(answer.split(b" ")[1])
            if writable:
                try:
                    sent += s.send(piece[: size - sent])
                except (BrokenPipeError, ConnectionResetError):
                    sent = size  # closed for writing: the answer is due
        raise AssertionError("no answer to an oversized request")


def test_http_guards_host_origin_token_and_body_size(data):
    with HttpServer(data, "--token", "s3cret") as server:
        auth = {"Authorization": "Bearer s3cret"}
        assert request(server.port, body=INIT, headers=auth) == 200
        assert request(server.port, body=INIT) == 401
        assert request(server.port, body=INIT, headers={"Authorization": "Bearer wrong"}) == 401
        assert request(server.port, body=INIT, headers={**auth, "Host": "evil.example:80"}) == 403
        assert request(server.port, body=INIT, headers={**auth, "Origin": "http://evil.example"}) == 403
        assert request(server.port, body=INIT, headers={**auth, "Origin": f"http://localhost:{server.port}"}) == 200
        assert request(server.port, method="GET", path="/health", headers={"Host": "attacker.test"}) == 403
        assert request(server.port, method="POST", path="/upload", body=b"x", headers={"Host": "attacker.test"}) == 403
        assert oversized_status(server.port, 17 * 1024 * 1024, auth) == 413
        # Still serving after all that.
        assert request(server.port, body=INIT, headers=auth) == 200


def test_three_stdio_clients_share_one_data_directory(data):
    async def client(n):
        async with stdio(data) as c:
            for i in range(4):
                text = f"# Report {n}-{i}\n\nClient {n} wrote note {i} about topic{n}x{i} and shared storage."
                out = await ok(c, "ingest", {"library": "shared", "content": {"name": f"c{n}/note{i}.md", "text": text}})
                assert out["indexed"] == 1, out
                hits = await ok(c, "search", {"library": "shared", "query": f"topic{n}x{i}", "mode": "lexical", "response_mode": "metadata"})
                assert hits["hits"][0]["source"] == f"c{n}/note{i}.md"
            return n

    async def go():
        done = await asyncio.gather(*(client(n) for n in range(3)))
        assert sorted(done) == [0, 1, 2]
        async with stdio(data) as c:
            listing = await ok(c, "list_documents", {"library": "shared", "limit": 100})
            assert listing["total"] == 12
            assert sorted(d["source"] for d in listing["documents"]) == sorted(f"c{n}/note{i}.md" for n in range(3) for i in range(4))

    run(go())


@contextlib.contextmanager
def short_data_dir():
    """A data directory with a short path, so the owner's socket sits beside
    the data where the tests look; removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix="folio-", dir="/tmp"))
    try:
        yield root / "data"
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextlib.asynccontextmanager
async def owning(data):
    """A `folio serve --stdio` with no client of its own, once it owns `data`
    (its socket exists); killed on the way out if still alive."""
    owner = subprocess.Popen([BIN, "serve", "--stdio"], env=folio_env(data), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 20
        while not (data / "folio.sock").exists():
            assert time.time() < deadline, "the first server did not become the owner"
            await asyncio.sleep(0.05)
        yield owner
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()


@pytest.mark.embedded_only
def test_attached_clients_survive_their_owner():
    """The owner is killed while clients are attached: they carry on."""

    async def go(data):
        async with owning(data) as owner, stdio(data) as a, stdio(data) as b:
            await ok(a, "ingest", {"library": "l", "content": {"name": "a.md", "text": "alpha document text"}})
            os.kill(owner.pid, signal.SIGKILL)
            owner.wait()
            # Both re-elect: one becomes the owner, the other attaches to it.
            await ok(b, "ingest", {"library": "l", "content": {"name": "b.md", "text": "beta document text"}})
            await ok(a, "ingest", {"library": "l", "content": {"name": "c.md", "text": "gamma document text"}})
            listing = await ok(b, "list_documents", {"library": "l"})
            assert listing["total"] == 3
            err = await fails(a, "get_document", {"document_id": "0" * 16})
            assert err["error"]["code"] == "NOT_FOUND"

    with short_data_dir() as data:
        run(go(data))


@pytest.mark.embedded_only
def test_a_call_in_flight_when_the_owner_dies_is_answered():
    """Issue 26 §5: a call an attached client had in flight when the owner
    was killed was never answered. A write idempotent by content hash is
    sent again to the next owner and answered."""
    words = "glacier moraine basalt aquifer monsoon estuary lagoon tundra plateau canyon fjord meander".split()
    long_text = "# Field notes\n\n" + "\n\n".join(
        f"## Site {i}\n\n" + " ".join(words[(i * 7 + j) % len(words)] for j in range(180)) for i in range(60)
    )

    async def go(data):
        async with owning(data) as owner, stdio(data) as a:
            await ok(a, "ingest", {"library": "l", "content": {"name": "warm.md", "text": "warm up the model"}})
            call = asyncio.create_task(ok(a, "ingest", {"library": "l", "content": {"name": "notes.md", "text": long_text}}))
            await asyncio.sleep(1.0)
            assert not call.done(), "the call must still be in flight when the owner dies"
            os.kill(owner.pid, signal.SIGKILL)
            owner.wait()
            answered = await asyncio.wait_for(call, timeout=240)
            assert answered["items"][0]["status"] in ("indexed", "skipped"), answered
            listing = await ok(a, "list_documents", {"library": "l"})
            assert listing["total"] == 2

    with short_data_dir() as data:
        run(go(data))


def test_the_cli_writes_beside_a_connected_agent(data, corpus, tmp_path):
    """Issue 16: with an agent's `folio serve --stdio` running, every CLI
    write waited 30 s and failed "locked by another folio process". The
    server takes the write lock per write, so the CLI ingests, deletes and
    searches beside it, and the agent sees what the CLI wrote."""
    import json
    import subprocess

    from conftest import BIN, folio_env, ok, run, stdio

    def folio(*args):
        return subprocess.run([BIN, *args], env=folio_env(data, FOLIO_LOCK_WAIT_MS=5000), capture_output=True, text=True, timeout=300)

    async def go():
        async with stdio(data) as agent:
            first = await ok(agent, "ingest", {"library": "team", "paths": [str(corpus / "dropout.md")]})
            assert first["indexed"] == 1
            bulk = folio("ingest", str(corpus), "--library", "team", "--json")
            assert bulk.returncode == 0, bulk.stderr
            report = json.loads(bulk.stdout)
            assert report["indexed"] == 4 and report["skipped"] == 1, report
            listed = await ok(agent, "list_documents", {"library": "team"})
            assert listed["total"] == 5
            found = folio("search", "dropout", "--library", "team", "--json")
            assert found.returncode == 0 and json.loads(found.stdout)["hits"], found.stderr
            gone = next(d["document_id"] for d in listed["documents"] if d["source"].endswith("optimisers.txt"))
            removed = folio("rm", gone)
            assert removed.returncode == 0, removed.stderr
            assert (await ok(agent, "list_documents", {"library": "team"}))["total"] == 4
            # The agent still writes after the CLI did.
            again = await ok(agent, "ingest", {"library": "team", "paths": [str(corpus / "optimisers.txt")]})
            assert again["indexed"] == 1
            check = folio("check", "team", "--json")
            assert check.returncode == 0 and json.loads(check.stdout)["problems"] == [], check.stdout

    run(go())
