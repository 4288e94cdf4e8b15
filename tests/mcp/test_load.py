"""Issue 26 §5: under load nothing fails and nothing goes unanswered.
Sixteen HTTP clients search, read and ingest for a bounded time while a
second process (the CLI) writes the same library; every call must be
answered, without error. Runs on both backends (FOLIO_MCP_BACKEND)."""

import asyncio
import random
import subprocess
import time

from conftest import BIN, HttpServer, call, folio_env, http_mcp, ok, run

CLIENTS = 16
SECONDS = 40
CALL_LIMIT = 120
WORDS = "glacier moraine basalt aquifer monsoon estuary lagoon tundra plateau canyon fjord meander delta".split()


def text(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def test_sixteen_clients_and_a_second_writer_get_every_answer(data, tmp_path):
    seed_dir = tmp_path / "seed"
    seed_dir.mkdir()
    rng = random.Random(26)
    for i in range(12):
        (seed_dir / f"seed{i}.md").write_text(f"# Seed {i}\n\n{text(rng, 120)}\n")
    seeded = subprocess.run([BIN, "ingest", str(seed_dir), "--library", "load"], env=folio_env(data),
                            capture_output=True, text=True, timeout=600)
    assert seeded.returncode == 0, seeded.stderr

    with HttpServer(data, "--toolsets", "native", env={"FOLIO_LOCK_WAIT_MS": 120000}) as server:
        counts = {"calls": 0, "errors": [], "unanswered": 0}
        deadline = time.time() + SECONDS

        async def client(n):
            rng = random.Random(n)
            async with http_mcp(server.url) as c:
                ids = [d["document_id"] for d in (await ok(c, "list_documents", {"library": "load", "limit": 50}))["documents"]]
                i = 0
                while time.time() < deadline:
                    i += 1
                    roll = rng.random()
                    if roll < 0.6:
                        name, args = "search", {"library": "load", "query": text(rng, 3), "mode": rng.choice(["hybrid", "lexical", "dense"])}
                    elif roll < 0.8:
                        name, args = "get_document", {"document_id": rng.choice(ids)}
                    elif roll < 0.9:
                        name, args = "list_documents", {"library": "load", "limit": 20}
                    else:
                        name, args = "ingest", {"library": "load", "content": {"name": f"c{n}-{i}.md", "text": f"# Client {n} note {i}\n\n{text(rng, 40)}"}}
                    try:
                        is_error, body = await asyncio.wait_for(call(c, name, args), CALL_LIMIT)
                    except asyncio.TimeoutError:
                        counts["unanswered"] += 1
                        continue
                    counts["calls"] += 1
                    if is_error:
                        counts["errors"].append((name, body))

        # The second writer: CLI ingests beside the server, in turn with it.
        writer_dir = tmp_path / "writer"
        writer_dir.mkdir()
        writes = 0

        async def second_writer():
            nonlocal writes
            rng = random.Random(99)
            while time.time() < deadline:
                writes += 1
                (writer_dir / f"w{writes}.md").write_text(f"# Writer {writes}\n\n{text(rng, 60)}\n")
                done = await asyncio.to_thread(
                    subprocess.run, [BIN, "ingest", str(writer_dir / f"w{writes}.md"), "--library", "load"],
                    env=folio_env(data, FOLIO_LOCK_WAIT_MS=120000), capture_output=True, text=True, timeout=600)
                assert done.returncode == 0, done.stderr

        async def go():
            await asyncio.gather(second_writer(), *(client(n) for n in range(CLIENTS)))

        run(go())
        print(f"load: {counts['calls']} calls answered, {len(counts['errors'])} errors, "
              f"{counts['unanswered']} unanswered, {writes} CLI writes")
        assert counts["calls"] > CLIENTS * 5
        assert counts["errors"] == [], counts["errors"][:5]
        assert counts["unanswered"] == 0
