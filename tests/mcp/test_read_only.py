"""Issue 26 §1: a read-only server never writes. Every write tool of every
toolset and every write route is refused before any work, on both backends,
and on PostgreSQL a read-only server neither creates nor migrates the
schema."""

import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError
from conftest import BACKEND, BIN, POSTGRES, HttpServer, _databases, call, folio_env, http_mcp, ok, run, stdio, store_url
from test_compat import upload

# The toolsets in two servers: native and mcpvectordb both define `search`.
GROUPS = [["native", "citeloom", "bmcis", "hansard"], ["mcpvectordb"]]

# Arguments each writer would succeed with on a writable server, so a
# refusal is the server's read-only promise and not a bad call.
ARGUMENTS = {
    "ingest": {"library": "l", "content": {"name": "b.txt", "text": "a second text about rivers"}},
    "store_chunks": {"project": "l", "items": []},
    "delete_document": {"document_id": None},
    "delete_library": {"library": "l"},
    "ingest_from_source": {"project": "l", "source": "/nonexistent"},
    "ingest_speech": {
        "speech_id": "s1",
        "title": "A speech",
        "full_text": "Mr Speaker, the river floods every spring.",
        "speaker": "Ann Smith",
        "date": "2024-05-01",
        "chamber": "House",
    },
    "ingest_content": {"content": "a pasted text about deltas", "source": "paste", "library": "l"},
    "ingest_file": {"path": "/nonexistent.txt", "library": "l"},
    "ingest_url": {"url": "https://example.org/", "library": "l"},
    "ingest_folder": {"folder": "/nonexistent", "library": "l"},
}


async def snapshot(client):
    """What a client can see of the store (both dialects name these tools
    and this argument alike)."""
    return await ok(client, "list_libraries"), await ok(client, "list_documents", {"library": "l"})


def test_read_only_servers_refuse_every_write(data):
    async def seed():
        async with stdio(data) as c:
            written = await ok(c, "ingest", {"library": "l", "content": {"name": "a.txt", "text": "alpha beta gamma"}})
            ARGUMENTS["delete_document"]["document_id"] = written["items"][0]["document_id"]

    run(seed())

    for group in GROUPS:
        toolsets = ",".join(group)

        async def writers():
            async with stdio(data, "--toolsets", toolsets) as c:
                return [t.name for t in (await c.list_tools()).tools if not t.annotations.read_only_hint]

        names = run(writers())
        assert names, f"{toolsets} has writers"
        with HttpServer(data, "--read-only", "--toolsets", toolsets) as server:

            async def attempt():
                async with http_mcp(server.url) as c:
                    listed = {t.name for t in (await c.list_tools()).tools}
                    assert not listed & set(names), f"a read-only server lists writers: {listed & set(names)}"
                    before = await snapshot(c)
                    for name in names:
                        # Refused as a tool error or, for a tool the server
                        # does not list, as a JSON-RPC error.
                        try:
                            is_error, body = await call(c, name, ARGUMENTS.get(name, {}))
                        except MCPError as e:
                            is_error, body = True, str(e)
                        assert is_error, f"{name} wrote on a read-only server: {body}"
                    assert await snapshot(c) == before

            run(attempt())

            # /upload is the mcpvectordb contract's route: absent elsewhere,
            # refused (403, before the body is read) on a read-only server.
            status, body = upload(server.url, [("file", ("note.txt", b"a note about rivers")), ("library", "l")])
            if "mcpvectordb" in group:
                assert status == 403 and body["code"] == "read_only", (status, body)
                request = urllib.request.Request(server.url + "/upload", data=b"not a form", method="POST")
                with pytest.raises(urllib.error.HTTPError) as refused:
                    urllib.request.urlopen(request, timeout=30)
                assert refused.value.code == 403
            else:
                assert status == 404, (status, body)

    async def after():
        async with stdio(data, "--read-only") as c:
            listed = await ok(c, "list_documents", {"library": "l"})
            assert len(listed["documents"]) == 1

    run(after())


def test_upload_is_served_only_with_its_toolset(data):
    with HttpServer(data, "--toolsets", "native") as server:
        status, _ = upload(server.url, [("file", ("note.txt", b"a note about rivers"))])
        assert status == 404


def sql(database, query):
    out = subprocess.run([str(POSTGRES), "sql", database, query], capture_output=True, text=True, check=True)
    return out.stdout.strip()


@pytest.mark.skipif(BACKEND != "postgres", reason="about the PostgreSQL schema")
def test_a_read_only_server_creates_and_migrates_nothing(tmp_path):
    empty = tmp_path / "empty"
    store_url(empty)
    database = _databases[str(Path(empty).resolve())][0]
    out = subprocess.run([BIN, "serve", "--http", "127.0.0.1:1", "--read-only"], env=folio_env(empty), capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "read-only" in out.stderr, out.stderr
    assert sql(database, "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'folio%'") == "0"

    older = tmp_path / "older"

    async def seed():
        async with stdio(older) as c:
            await ok(c, "ingest", {"library": "l", "content": {"name": "a.txt", "text": "alpha beta gamma"}})

    run(seed())
    database = _databases[str(Path(older).resolve())][0]
    current = sql(database, "SELECT value FROM folio_meta WHERE key = 'schema_version'")
    sql(database, "UPDATE folio_meta SET value = '3' WHERE key = 'schema_version'")
    out = subprocess.run([BIN, "serve", "--http", "127.0.0.1:1", "--read-only"], env=folio_env(older), capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "does not migrate" in out.stderr, out.stderr
    assert sql(database, "SELECT value FROM folio_meta WHERE key = 'schema_version'") == "3"
    sql(database, f"UPDATE folio_meta SET value = '{current}' WHERE key = 'schema_version'")
    with HttpServer(older, "--read-only", "--toolsets", "native") as server:

        async def search():
            async with http_mcp(server.url) as c:
                assert (await ok(c, "search", {"library": "l", "query": "beta"}))["hits"]

        run(search())
