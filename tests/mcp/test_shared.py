"""Several folio processes writing one library at once: four CLI ingests of
overlapping file sets (each file given to two of them, in opposite orders)
index every document exactly once, and writers killed mid-document leave
no partial document. Runs on both backends (FOLIO_MCP_BACKEND)."""

import json
import random
import signal
import subprocess
import time

from conftest import BIN, folio_env, ok, run, stdio

TOPICS = ("glacier moraine basalt aquifer monsoon estuary lagoon tundra plateau canyon fjord meander "
          "floodplain watershed dune delta sediment erosion granite river").split()


def token(i):
    """A word only document i contains (letters ending in k: no stemmer rule shortens it)."""
    return "zq" + "".join(chr(ord("a") + d) for d in (i // 676, i // 26 % 26, i % 26)) + "k"


def write_note(path, i, rng, paragraphs):
    body = []
    for p in range(paragraphs):
        words = " ".join(rng.choice(TOPICS) for _ in range(70))
        body.append(f"## Part {p}\n\nNote {token(i)} part {p}: {words}.")
    path.write_text(f"# Note {i}\n\n" + "\n\n".join(body) + "\n")


def folio(data, *args, timeout=600):
    return subprocess.run([BIN, *args], env=folio_env(data, FOLIO_LOCK_WAIT_MS=120000), capture_output=True,
                          text=True, timeout=timeout)


def spawn(data, *args):
    return subprocess.Popen([BIN, *args], env=folio_env(data, FOLIO_LOCK_WAIT_MS=120000), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def listed(data, library):
    out = folio(data, "ls", library, "--json", "--limit", "100000")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["documents"]


def whole(data, library):
    out = folio(data, "check", library, "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    assert json.loads(out.stdout)["problems"] == []


def test_four_writers_and_a_killed_one_share_one_library(data, tmp_path):
    rng = random.Random(11)
    notes = tmp_path / "notes"
    notes.mkdir()
    files = []
    for i in range(40):
        files.append(notes / f"note-{i:02d}.md")
        write_note(files[-1], i, rng, paragraphs=3)

    # Four writers at once; each file is given to two of them.
    writers = []
    for k in range(4):
        mine = [files[(10 * k + j) % 40] for j in range(20)]
        if k % 2:
            mine.reverse()
        writers.append(spawn(data, "ingest", *map(str, mine), "--library", "shared", "--json"))
    reports = []
    for process in writers:
        stdout, stderr = process.communicate(timeout=900)
        assert process.returncode == 0, stderr[-2000:]
        reports.append(json.loads(stdout))
    assert sum(r["indexed"] for r in reports) == 40, reports
    assert sum(r["skipped"] for r in reports) == 40, reports
    assert sum(r.get("failed", 0) for r in reports) == 0, reports

    documents = listed(data, "shared")
    assert sorted(d["source"] for d in documents) == sorted(str(f) for f in files)
    whole(data, "shared")

    # Writers killed at random moments while ingesting long documents.
    long_notes = tmp_path / "long"
    long_notes.mkdir()
    for i in range(40, 52):
        write_note(long_notes / f"long-{i}.md", i, rng, paragraphs=40)
    for attempt in range(3):
        process = spawn(data, "ingest", str(long_notes), "--library", "shared")
        time.sleep(rng.uniform(0.5, 4.0))
        process.send_signal(signal.SIGKILL)
        process.communicate()
        whole(data, "shared")
        for document in listed(data, "shared"):
            if "long-" in document["source"]:
                # A document either has all its chunks or is absent: read
                # from its chunks, not from the count its row records.
                out = folio(data, "get", document["id"], "--chunks", "--json")
                assert out.returncode == 0, out.stderr
                chunks = json.loads(out.stdout)["chunks"]
                assert [c["index"] for c in chunks] == list(range(document["chunk_count"])), document
                assert len(chunks) >= 40, document
    finished = folio(data, "ingest", str(long_notes), "--library", "shared", "--json")
    assert finished.returncode == 0, finished.stderr
    report = json.loads(finished.stdout)
    assert report["indexed"] + report["skipped"] == 12, report
    documents = listed(data, "shared")
    assert len(documents) == 52 and len({d["source"] for d in documents}) == 52
    whole(data, "shared")

    # Every search is consistent: a document's own word finds that document only.
    async def go():
        async with stdio(data) as client:
            by_source = {d["source"]: d["id"] for d in documents}
            for i, path in [(i, files[i]) for i in range(0, 40, 3)] + [(i, long_notes / f"long-{i}.md") for i in range(40, 52)]:
                found = await ok(client, "search", {"library": "shared", "query": token(i), "mode": "lexical",
                                                    "top_k": 50, "group_by_document": False})
                assert {h["document_id"] for h in found["hits"]} == {by_source[str(path)]}, (i, found["hits"][:3])

    run(go())


def test_copy_moves_a_library_between_stores_with_its_vectors(tmp_path, corpus):
    """`folio copy` from an embedded data directory into the suite's store
    (and, on PostgreSQL, back into a fresh data directory): the same
    documents, chunks and scores, resumable, and bad sources refused."""
    source, target, back = tmp_path / "source", tmp_path / "target", tmp_path / "back"

    def cli(data, *args, backend=None):
        return subprocess.run([BIN, *args], env=folio_env(data, backend=backend), capture_output=True, text=True,
                              timeout=600)

    made = cli(source, "ingest", str(corpus), "--library", "papers", "--json", backend="embedded")
    assert made.returncode == 0, made.stderr
    documents = json.loads(made.stdout)["indexed"]
    # Declared entities travel with the library, and so do the mentions.
    declared = tmp_path / "declared.jsonl"
    declared.write_text('{"name": "Dropout", "type": "other", "aliases": ["dropout"], "attributes": {"year": 2014}}\n')
    imported = cli(source, "entities", "import", str(declared), "--library", "papers", "--json", backend="embedded")
    assert imported.returncode == 0, imported.stderr
    card = json.loads(cli(source, "entity", "papers", "Dropout", "--json", backend="embedded").stdout)
    assert card["mentions"] > 0 and card["attributes"] == {"year": 2014}

    def answers(data, backend=None):
        found = {}
        for mode in ("lexical", "dense", "hybrid"):
            out = cli(data, "search", "positional encodings for attention", "--library", "papers", "--mode", mode,
                      "--json", backend=backend)
            assert out.returncode == 0, out.stderr
            found[mode] = [(h["chunk_id"], round(h.get("lexical_score") or h.get("dense_score") or h["score"], 4))
                           for h in json.loads(out.stdout)["hits"]]
        return found

    expected = answers(source, backend="embedded")
    copied = cli(target, "copy", "--from", str(source), "--library", "papers", "--json")
    assert copied.returncode == 0, copied.stderr
    report = json.loads(copied.stdout)
    assert (report["copied"], report["unchanged"]) == (documents, 0), report
    assert answers(target) == expected
    copied_card = json.loads(cli(target, "entity", "papers", "dropout", "--json").stdout)
    assert (copied_card["mentions"], copied_card["attributes"], copied_card["matched_by"]) == (card["mentions"], {"year": 2014}, "name")
    again = json.loads(cli(target, "copy", "--from", str(source), "--library", "papers", "--json").stdout)
    assert (again["copied"], again["unchanged"]) == (0, documents), again

    from conftest import BACKEND, store_url
    if BACKEND == "postgres":
        home = cli(back, "copy", "--from-url", store_url(target), "--library", "papers", "--json", backend="embedded")
        assert home.returncode == 0, home.stderr
        assert json.loads(home.stdout)["copied"] == documents
        assert answers(back, backend="embedded") == expected

    # Bad sources: a clear error, nothing created.
    missing = cli(target, "copy", "--from", str(tmp_path / "nowhere"), "--library", "papers2", "--json")
    assert missing.returncode != 0 and "nowhere" in missing.stderr, missing.stderr
    unknown = cli(target, "copy", "--from", str(source), "--library", "nosuch", "--json")
    assert unknown.returncode != 0 and "nosuch" in unknown.stderr, unknown.stderr
    libraries = [entry["name"] for entry in json.loads(cli(target, "ls", "--json").stdout)]
    assert libraries == ["papers"], libraries


def test_a_restarted_database_server_is_survived(data, corpus):
    """PostgreSQL only: with the server down a call fails with a clear
    storage error (no password in it) and changes nothing; once the server
    is back the same client process writes and searches again."""
    import pytest

    from conftest import BACKEND, fails, postgres

    if BACKEND != "postgres":
        pytest.skip("restarts the PostgreSQL server")

    async def go():
        async with stdio(data) as client:
            first = await ok(client, "ingest", {"library": "l", "paths": [str(corpus / "dropout.md")]})
            assert first["indexed"] == 1
            postgres("stop")
            try:
                down = await fails(client, "ingest", {"library": "l", "paths": [str(corpus / "optimisers.txt")]})
                assert down["error"]["code"] == "STORAGE", down
                assert "password" not in json.dumps(down).lower()
            finally:
                postgres("start")
            again = await ok(client, "ingest", {"library": "l", "paths": [str(corpus / "optimisers.txt")]})
            assert again["indexed"] == 1
            listed = await ok(client, "list_documents", {"library": "l"})
            assert listed["total"] == 2
            found = await ok(client, "search", {"library": "l", "query": "dropout", "mode": "lexical"})
            assert found["hits"]

    run(go())
