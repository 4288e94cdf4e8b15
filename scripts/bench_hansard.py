#!/usr/bin/env python3
"""Measures the hansard toolset on a generated corpus of speeches: loads
N speeches with `folio ingest speeches.jsonl`, then times, through MCP over
stdio (raw JSON-RPC, no SDK time counted), search_speeches with and without
filters (every query new: uncached), common queries repeated (a Zipf mix of
20 queries: answered from the cache after their first time), get_speech with
chunks and context, list_speakers, and ingest_speech of ~12,000-character
speeches.

usage: scripts/bench_hansard.py BIN [--speeches 10000] [--queries 200] [--ingests 10] [--work DIR]
(--work keeps the corpus in DIR; a later run with the same DIR and --speeches
skips the load.)
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "mcp"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_mcp import Server, pct  # noqa: E402
from speeches import TOPICS, generate, speech_text, write_jsonl  # noqa: E402

SCHEMA = Path(__file__).resolve().parents[1] / "examples" / "hansard-schema.toml"


def summary(name, values):
    return f"{name:<34} n={len(values):<4} p50 {statistics.median(values):7.1f} ms   p95 {pct(values, 95):7.1f} ms   max {max(values):7.1f} ms"


def timed(server, tool, arguments):
    started = time.perf_counter()
    result = server.request("tools/call", {"name": tool, "arguments": arguments})
    elapsed = (time.perf_counter() - started) * 1e3
    if result.get("isError"):
        raise RuntimeError(f"{tool} failed: {result}")
    return elapsed, result["structuredContent"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--speeches", type=int, default=10000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--ingests", type=int, default=10)
    ap.add_argument("--work", type=Path)
    a = ap.parse_args()

    work = a.work or Path(tempfile.mkdtemp(prefix="folio-bench-hansard-"))
    work.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, FOLIO_DATA_DIR=str(work / "data"), FOLIO_LOG="warn")
    records = generate(a.speeches, seed=3, speaker_count=300)
    loaded = work / f"loaded-{a.speeches}"
    if loaded.exists():
        print(f"reusing the {a.speeches} speeches loaded in {work}")
    else:
        path = write_jsonl(work / "speeches.jsonl", records)
        started = time.perf_counter()
        subprocess.run([a.binary, "ingest", str(path), "--library", "hansard", "--schema", str(SCHEMA), "--json"],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        load_s = time.perf_counter() - started
        loaded.touch()
        print(f"loaded {a.speeches} speeches in {load_s:.1f} s ({a.speeches / load_s:.0f} speeches/s)")

    rng = random.Random(5)
    server = Server(a.binary, env, "--toolsets", "native,hansard")
    server.initialize()
    timed(server, "search_speeches", {"query": "warm-up"})  # loads the model
    topics = list(TOPICS)
    plain, filtered = [], []
    for i in range(a.queries):
        topic = rng.choice(topics)
        # A new text each time: these measure uncached searches.
        query = f"what has been said about {TOPICS[topic].split(',')[rng.randrange(2)]} ({i})"
        plain.append(timed(server, "search_speeches", {"query": query, "limit": 10})[0])
        r = rng.choice(records)
        filters = rng.choice([
            {"speaker": r["speaker"].lower()},
            {"party": r["party"], "chamber": r["chamber"]},
            {"date_from": "2024-01-01", "date_to": "2024-06-30", "topic_tags": [topic]},
            {"chamber": "Senate", "topic_tags": [topic, rng.choice(topics)]},
        ])
        filtered.append(timed(server, "search_speeches", {"query": query, "limit": 10, **filters})[0])
    # Common queries: 20 texts, the k-th asked with weight 1/k.
    common = [f"the government's position on {TOPICS[t].split(',')[0]} {k}" for k, t in enumerate(topics * 3)][:20]
    before = timed(server, "server_info", {})[1]["cache"]
    seen, first, repeat = set(), [], []
    for query in rng.choices(common, weights=[1 / (k + 1) for k in range(len(common))], k=a.queries):
        elapsed = timed(server, "search_speeches", {"query": query, "limit": 10})[0]
        (repeat if query in seen else first).append(elapsed)
        seen.add(query)
    after = timed(server, "server_info", {})[1]["cache"]
    hits = after["result_hits"] - before["result_hits"]
    misses = after["result_misses"] - before["result_misses"]
    gets, gets_full = [], []
    for r in rng.sample(records, min(a.queries, len(records))):
        gets.append(timed(server, "get_speech", {"speech_id": r["speech_id"]})[0])
        gets_full.append(timed(server, "get_speech", {"speech_id": r["speech_id"], "include_chunks": True, "include_context": True})[0])
    speakers = [timed(server, "list_speakers", {"limit": 100})[0] for _ in range(20)]
    speakers_filtered = [timed(server, "list_speakers", {"chamber": "Senate", "party": "labor", "min_speeches": 20})[0] for _ in range(20)]
    ingests, embed, chunks = [], [], []
    for i in range(a.ingests):
        text = f"[bench {i} {time.time_ns()}] " + speech_text(rng.choice(topics), rng, 200)
        text = text[:12000]
        elapsed, out = timed(server, "ingest_speech", {
            "title": f"Long speech {i}", "full_text": text, "speaker": "Bench Speaker", "party": "Labor",
            "chamber": "Senate", "state": "NSW", "date": "2025-01-01", "hansard_reference": f"B-{i}",
            "topic_tags": ["bench"]})
        assert out["status"] == "created", out
        ingests.append(elapsed)
        embed.append(out["embedding_time_ms"])
        chunks.append(out["chunks_created"])
    server.close()

    print(f"corpus: {a.speeches} speeches; {a.queries} queries each")
    print(summary("search_speeches (no filter)", plain))
    print(summary("search_speeches (filters)", filtered))
    print(summary("common queries, first time", first))
    print(summary("common queries, repeated", repeat) + f"   cache hit rate {hits / max(1, hits + misses):.0%}")
    print(summary("get_speech", gets))
    print(summary("get_speech (chunks + context)", gets_full))
    print(summary("list_speakers", speakers))
    print(summary("list_speakers (filters)", speakers_filtered))
    print(summary("ingest_speech (12,000 chars)", ingests) + f"   embedding p50 {statistics.median(embed):.0f} ms, {statistics.median(chunks):.0f} chunks")


if __name__ == "__main__":
    main()
