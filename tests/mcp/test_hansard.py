"""The hansard toolset (seed 002) through the official MCP client, on a
generated speeches corpus loaded with `folio ingest records.jsonl`. Expected
facets, filters and neighbours are computed here from the same records."""

import collections
import hashlib
import subprocess
import tomllib
from pathlib import Path

from conftest import BIN, folio_env, ok, run, stdio
from speeches import document_id, generate, speech_id, write_jsonl

SCHEMA = Path(__file__).resolve().parents[2] / "examples" / "hansard-schema.toml"
TOOLS = ["search_speeches", "get_speech", "ingest_speech", "list_speakers"]


def load(data, records, tmp_path):
    path = write_jsonl(tmp_path / "speeches.jsonl", records)
    done = subprocess.run(
        [BIN, "ingest", str(path), "--library", "hansard", "--schema", str(SCHEMA), "--json"],
        env=folio_env(data), capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    return path


async def refused(client, name, arguments):
    """A FastMCP-style tool error: isError with the message as text."""
    result = await client.call_tool(name, arguments)
    assert result.is_error, f"{name} should have failed: {arguments}"
    return result.content[0].text


def expected_speakers(records, chamber=None, party=None, min_speeches=1):
    groups = collections.defaultdict(list)
    for r in records:
        if chamber and r["chamber"] != chamber:
            continue
        if party and r["party"].lower() != party.lower():
            continue
        groups[(r["speaker"], r["party"], r["chamber"], r["state"])].append(r)
    out = []
    for key, rs in groups.items():
        if len(rs) < min_speeches:
            continue
        topics = collections.Counter(t for r in rs for t in r["topic_tags"])
        electorates = [r["electorate"] for r in rs if r.get("electorate")]
        out.append({
            "speaker": key[0], "party": key[1], "chamber": key[2], "state": key[3],
            "electorate": max(electorates) if electorates else None,
            "speech_count": len(rs),
            "first_speech_date": min(r["date"] for r in rs),
            "last_speech_date": max(r["date"] for r in rs),
            "total_words": sum(r["word_count"] for r in rs),
            "top_topics": [t for t, _ in sorted(topics.items(), key=lambda x: (-x[1], x[0]))[:5]],
        })
    out.sort(key=lambda s: (-s["speech_count"], s["speaker"], s["party"], s["chamber"], s["state"]))
    return out


def expected_context(records, speech):
    """The seed's SQL: the nearest strictly earlier (later) date in the same
    chamber; among speeches of that date, the last (first) by document id."""
    same = [r for r in records if r["chamber"] == speech["chamber"]]
    key = lambda r: (r["date"], document_id("hansard", r["speech_id"]))
    earlier = sorted((r for r in same if r["date"] < speech["date"]), key=key)
    later = sorted((r for r in same if r["date"] > speech["date"]), key=key)
    before = earlier[-1]["speech_id"] if earlier else None
    after = later[0]["speech_id"] if later else None
    return before, after


NEW = {
    "title": "Water security in the basin",
    "full_text": "Mr Speaker, the Murray-Darling basin plan must return water to the rivers. " * 40,
    "speaker": "Zed Newman", "party": "Greens", "chamber": "Senate", "state": "SA",
    "date": "2025-02-03", "hansard_reference": "S-2025-001", "topic_tags": ["water", "environment"],
}


def test_hansard_contract(data, tmp_path):
    records = generate(120, seed=11)
    # Two speeches of one chamber on one day: neither is the other's neighbour.
    records[1]["chamber"], records[1]["date"] = records[0]["chamber"], records[0]["date"]
    load(data, records, tmp_path)
    by_id = {r["speech_id"]: r for r in records}
    messages = []

    async def log(params):
        messages.append(params.data)

    async def go():
        async with stdio(data, "--toolsets", "hansard", logging_callback=log) as c:
            tools = (await c.list_tools()).tools
            assert [t.name for t in tools] == TOOLS
            annotations = {t.name: t.annotations.read_only_hint for t in tools}
            assert annotations == {"search_speeches": True, "get_speech": True, "ingest_speech": False, "list_speakers": True}

            # list_speakers against an independent computation.
            for args in [{}, {"chamber": "Senate"}, {"party": "labor", "min_speeches": 3}, {"min_speeches": 2, "limit": 5}]:
                got = await ok(c, "list_speakers", args)
                want = expected_speakers(records, args.get("chamber"), args.get("party"), args.get("min_speeches", 1))
                assert got["total_speakers"] == len(want), args
                assert got["speakers"] == want[: args.get("limit", 100)], args
            for bad in [{"min_speeches": 0}, {"limit": 501}, {"chamber": "Lords"}, {"limit": "x"}, {"bogus": 1}]:
                assert "Invalid input" in await refused(c, "list_speakers", bad)

            # search_speeches: relevance, filters, bounds.
            found = await ok(c, "search_speeches", {"query": "Murray-Darling basin irrigation licences", "limit": 5})
            assert set(found) == {"results", "total_found", "query_embedding_time_ms", "search_time_ms"}
            assert 1 <= len(found["results"]) <= 5 and found["total_found"] >= len(found["results"])
            top = found["results"][0]
            assert "water" in top["topic_tags"], top
            scores = [r["relevance_score"] for r in found["results"]]
            assert scores == sorted(scores, reverse=True) and all(0 <= s <= 1 for s in scores)
            for r in found["results"]:
                source = by_id[r["speech_id"]]
                assert source["full_text"].startswith(r["excerpt"][:50]) or r["excerpt"][:50] in source["full_text"]
                assert len(r["excerpt"]) <= 800 and r["full_text"] is None
                assert (r["speaker"], r["party"], r["chamber"], r["date"], r["hansard_reference"]) == (
                    source["speaker"], source["party"], source["chamber"], source["date"], source["hansard_reference"])
                assert r["topic_tags"] == source["topic_tags"] and r["title"] == source["title"]
                assert len(r["chunk_id"]) == 36 and r["chunk_index"] >= 0

            person = records[0]["speaker"]
            filtered = await ok(c, "search_speeches", {
                "query": "the government must act", "speaker": person.upper(), "limit": 50, "include_full_text": True})
            mine = {r["speech_id"] for r in records if r["speaker"] == person}
            assert filtered["results"] and {r["speech_id"] for r in filtered["results"]} <= mine
            assert all(r["full_text"] == by_id[r["speech_id"]]["full_text"] for r in filtered["results"])

            ranged = await ok(c, "search_speeches", {
                "query": "budget", "chamber": "Senate", "date_from": "2024-03-01", "date_to": "2024-06-30",
                "topic_tags": ["economy", "housing"], "party": "LIBERAL", "limit": 50})
            for r in ranged["results"]:
                assert r["chamber"] == "Senate" and "2024-03-01" <= r["date"] <= "2024-06-30"
                assert {"economy", "housing"} & set(r["topic_tags"]) and r["party"] == "Liberal"
            eligible = [r for r in records if r["chamber"] == "Senate" and "2024-03-01" <= r["date"] <= "2024-06-30"
                        and {"economy", "housing"} & set(r["topic_tags"]) and r["party"] == "Liberal"]
            assert bool(ranged["results"]) == bool(eligible)

            # Any string of 1 to 1,000 characters is a query (the seed's
            # model); blank ones find nothing.
            blank = await ok(c, "search_speeches", {"query": " "})
            assert blank["results"] == [] and blank["total_found"] == 0, blank
            for bad in [{"query": ""}, {"query": "x" * 1001}, {"query": "x", "limit": 0}, {"query": "x", "limit": 51},
                        {"query": "x", "chamber": "Lords"}, {"query": "x", "date_from": "2024-13-01"},
                        {"query": "x", "topic_tags": [str(i) for i in range(11)]}, {"query": "x", "speaker": "s" * 201},
                        {"query": "x", "date_from": "2024-05-01", "date_to": "2024-01-01"}, {"limit": 3}]:
                assert "Invalid input" in await refused(c, "search_speeches", bad), bad

            # get_speech: every field, chunks, context.
            speech = records[5]
            got = await ok(c, "get_speech", {"speech_id": speech["speech_id"], "include_chunks": True, "include_context": True})
            for key in ["title", "full_text", "word_count", "speaker", "party", "chamber", "state", "date", "hansard_reference", "topic_tags"]:
                assert got[key] == speech[key], key
            assert got["electorate"] == speech.get("electorate") and got["source_url"] is None
            assert got["ingestion_timestamp"].startswith("20")
            assert [ch["chunk_index"] for ch in got["chunks"]] == list(range(len(got["chunks"])))
            assert all(ch["chunk_size"] == len(ch["chunk_text"]) for ch in got["chunks"])
            # Every speech's neighbours, ties on dates included.
            tied = 0
            for speech in records:
                got_context = (await ok(c, "get_speech", {"speech_id": speech["speech_id"], "include_context": True}))["context"]
                before, after = expected_context(records, speech)
                assert (got_context["previous_speech"] or {}).get("speech_id") == before, speech["speech_id"]
                assert (got_context["next_speech"] or {}).get("speech_id") == after, speech["speech_id"]
                for neighbour in (got_context["previous_speech"], got_context["next_speech"]):
                    assert neighbour is None or neighbour["date"] != speech["date"]
                tied += sum(1 for r in records if r is not speech and r["date"] == speech["date"] and r["chamber"] == speech["chamber"])
            assert tied > 0, "the corpus should have speeches of one chamber on one date"
            speech = records[5]
            plain = await ok(c, "get_speech", {"speech_id": speech["speech_id"]})
            assert plain["chunks"] is None and plain["context"] is None
            missing = await c.call_tool("get_speech", {"speech_id": "00000000-0000-4000-8000-000000000000"})
            assert missing.is_error and "Speech not found" in missing.content[0].text
            assert "Invalid input" in await refused(c, "get_speech", {"speech_id": "not-a-uuid"})

            # ingest_speech: created, skipped, re-created; invalid input changes nothing.
            before_count = (await ok(c, "list_speakers", {"limit": 500}))["total_speakers"]
            progress = []

            async def on_progress(done, total, message):
                progress.append((done, total))

            created = await ok(c, "ingest_speech", NEW, progress_callback=on_progress)
            assert created["status"] == "created" and created["speech_id"] == speech_id(NEW["full_text"])
            assert created["content_hash"] == hashlib.sha256(NEW["full_text"].encode()).hexdigest()
            assert created["chunks_created"] == created["embeddings_generated"] >= 2
            assert created["word_count"] == len(NEW["full_text"].split())
            assert created["total_time_ms"] >= created["embedding_time_ms"] > 0
            # The seed's six steps, in order, and its info messages.
            assert progress == [(step, 5) for step in range(6)], progress
            chunks = created["chunks_created"]
            for text in [f"Created speech: {created['speech_id']}", f"Generated {chunks} chunks",
                         f"Generated {chunks} embeddings"]:
                assert text in messages, (text, messages)
            again = await ok(c, "ingest_speech", NEW)
            assert again["status"] == "skipped" and again["chunks_created"] == 0 and again["speech_id"] == created["speech_id"]
            # skip_if_duplicate false inserts a new speech, as the seed's INSERT does.
            duplicate = await ok(c, "ingest_speech", {**NEW, "party": "Independent", "skip_if_duplicate": False})
            assert duplicate["status"] == "created" and duplicate["speech_id"] != created["speech_id"]
            assert duplicate["content_hash"] == created["content_hash"]
            first = await ok(c, "get_speech", {"speech_id": created["speech_id"]})
            second = await ok(c, "get_speech", {"speech_id": duplicate["speech_id"]})
            assert (first["party"], second["party"]) == ("Greens", "Independent")
            assert second["full_text"] == first["full_text"]
            # Any speech with the same text is a duplicate from now on.
            assert (await ok(c, "ingest_speech", {**NEW, "party": "Labor"}))["status"] == "skipped"
            after_count = (await ok(c, "list_speakers", {"limit": 500}))["total_speakers"]
            assert after_count == before_count + 2

            invalid = [
                ({"chamber": "Lords"}, "chamber"), ({"chamber": "Senate "}, "chamber"), ({"state": "XX"}, "state"),
                ({"state": "nsw"}, "state"), ({"date": "2024-02-30"}, "date"),
                ({"full_text": "short"}, "full_text"), ({"title": "t" * 501}, "title"), ({"topic_tags": ["t"] * 21}, ""),
                ({"speaker": ""}, "speaker"),
            ]
            for change, field in invalid:
                bad = {**NEW, **change, "full_text": change.get("full_text", "A different valid speech text.")}
                result = await c.call_tool("ingest_speech", bad)
                assert result.is_error, change
                assert field in result.content[0].text, (change, result.content[0].text)
            missing_field = {k: v for k, v in NEW.items() if k != "speaker"}
            assert (await c.call_tool("ingest_speech", missing_field)).is_error
            assert (await ok(c, "list_speakers", {"limit": 500}))["total_speakers"] == after_count

            stats = await ok(c, "list_speakers", {"party": "independent", "chamber": "Senate", "limit": 500})
            zed = [s for s in stats["speakers"] if s["speaker"] == "Zed Newman"]
            assert zed and zed[0]["top_topics"] == ["environment", "water"] and zed[0]["first_speech_date"] == "2025-02-03"

    run(go())
    assert any("Searching for" in str(m) for m in messages), messages
    assert any("Ingestion complete" in str(m) for m in messages), messages


def test_the_native_inspect_shows_the_declared_schema_and_languages(data, tmp_path):
    records = generate(12)
    load(data, records, tmp_path)
    declared = tomllib.loads(SCHEMA.read_text())

    async def go():
        async with stdio(data) as c:
            stats = await ok(c, "inspect_library", {"library": "hansard"})
            schema = stats["record_schema"]
            assert (schema["text"], schema["title"], schema["key"]) == (declared["text"], declared["title"],
                                                                      declared["key"])
            assert {name: spec["type"] for name, spec in schema["fields"].items()} == \
                {name: spec["type"] for name, spec in declared["fields"].items()}
            # Every speech is English: one language, counting every record.
            assert stats["languages"] == {"en": len(records)}, stats["languages"]

    run(go())
