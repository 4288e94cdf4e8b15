#!/usr/bin/env python3
"""The entity graph, measured (issue 30) on a generated knowledge base:

1. find_vendor_info for every declared vendor, over MCP (streamable HTTP,
   raw JSON-RPC, one session): the documents it lists against an
   independent oracle (a case-insensitive, word-bounded search of each
   document's text for the vendor's name and aliases), and the round-trip
   latency (median, p95).
2. Ingest throughput with entity extraction on and off ([ingest] entities),
   the same corpus into two fresh data directories, run alternately.
3. The graph's size on disk: the SQLite file with entities on less the one
   with them off, per chunk, scaled to 100k chunks.

The knowledge base: `--vendors` organizations, each with aliases (a short
form, a company form); `--documents` notes that mention 0 to 4 vendors by
any of their names, in any case, with distractors that must not match (a
vendor's name inside a longer word, a similar name of no vendor), and
people's names.

Usage: scripts/bench_entities.py [--bin target/release/folio]
       [--documents 2000] [--vendors 200] [--runs 2]
"""

import argparse
import json
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

from load_keys import ROOT, free_port, post, result_of, session

STEMS = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark", "Wayne", "Tyrell", "Cyberdyne",
         "Soylent", "Wonka", "Gringotts", "Oscorp", "Pied", "Aperture", "Massive", "Virtucon", "Nakatomi", "Zorg"]
SECOND = ["Holdings", "Logistics", "Systems", "Analytics", "Foods", "Energy", "Robotics", "Textiles", "Marine", "Labs"]
FORMS = ["Inc.", "Ltd", "GmbH", "LLC", "Corp."]
FIRST = ["Anne", "Bob", "Chloe", "David", "Emma", "Farid", "Grace", "Hamish", "Isla", "Jack"]
LAST = ["Albright", "Brennan", "Chen", "Dawson", "Evans", "Fraser", "Gupta", "Hughes", "Ito", "Jones"]
TOPICS = ["turbine maintenance", "invoice disputes", "delivery schedules", "security audits", "pricing terms",
          "data retention", "onboarding", "warranty claims", "shipping delays", "contract renewal"]


def vendors(count, rng):
    out, seen = [], set()
    while len(out) < count:
        stem, second = rng.choice(STEMS), rng.choice(SECOND)
        name = f"{stem} {second}"
        if name in seen:
            continue
        seen.add(name)
        form = rng.choice(FORMS)
        aliases = [f"{stem} {second} {form}", f"{stem[:3].upper()}{second[:2].upper()}"]
        out.append({"name": name, "type": "organization", "aliases": aliases,
                    "attributes": {"tier": rng.randint(1, 3)}})
    return out


def surface(vendor, rng):
    text = rng.choice([vendor["name"], *vendor["aliases"]])
    return rng.choice([text, text.upper(), text.lower()]) if rng.random() < 0.3 else text


def documents(count, vendor_list, rng):
    docs = []
    for i in range(count):
        topic = rng.choice(TOPICS)
        named = rng.sample(vendor_list, rng.choice([0, 1, 1, 2, 2, 3, 4]))
        person = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        lines = [f"# Note {i}: {topic}", "", f"Note {i} records {topic} for the quarter, written by {person}."]
        for v in named:
            s = surface(v, rng)
            lines.append(f"We discussed {topic} with {s} at length. The account at {s} is in good standing.")
        # Distractors: a stem inside a longer word, a name of no vendor.
        stem = rng.choice(STEMS)
        lines.append(f"See also the {stem}grid portal and {stem} Partners, neither of them a vendor.")
        lines.append(f"{person} will follow up on {topic} next week.")
        docs.append((f"note-{i:05}.md", "\n".join(lines) + "\n"))
    return docs


def oracle(docs, vendor):
    names = [vendor["name"], *vendor["aliases"]]
    # Names as folio folds them: case, and a company form's period aside.
    patterns = [re.compile(r"(?<!\w)" + re.escape(n.rstrip(".")) + r"\.?(?!\w)", re.IGNORECASE) for n in names]
    return {name for name, text in docs if any(p.search(text) for p in patterns)}


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def env(data, config):
    e = dict(os.environ, FOLIO_DATA_DIR=str(data), FOLIO_CONFIG=str(config), FOLIO_LOG="warn")
    e.pop("FOLIO_STORE_URL", None)
    return e


def ingest(binary, data, config, corpus):
    started = time.perf_counter()
    out = subprocess.run([binary, "--json", "ingest", str(corpus), "--library", "kb"], env=env(data, config),
                         capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    return elapsed, report


def sqlite_bytes(data):
    import sqlite3
    path = Path(data) / "folio.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = db.execute("PRAGMA page_count").fetchone()[0] - db.execute("PRAGMA freelist_count").fetchone()[0]
        size = db.execute("PRAGMA page_size").fetchone()[0]
    return pages * size


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=str(ROOT / "target" / "release" / "folio"))
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--vendors", type=int, default=200)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=30)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    vendor_list = vendors(args.vendors, rng)
    docs = documents(args.documents, vendor_list, rng)
    work = Path(tempfile.mkdtemp(prefix="folio-bench-entities-"))
    try:
        corpus = work / "kb"
        corpus.mkdir()
        for name, text in docs:
            (corpus / name).write_text(text)
        list_path = work / "vendors.jsonl"
        list_path.write_text("".join(json.dumps(v) + "\n" for v in vendor_list))

        # 2 and 3: ingest on and off, alternately.
        times = {True: [], False: []}
        chunks = 0
        sizes = {}
        for run in range(args.runs):
            for on in (True, False) if run % 2 == 0 else (False, True):
                data = work / f"data-{on}-{run}"
                config = work / f"config-{on}.toml"
                config.write_text(f"[ingest]\nentities = {'true' if on else 'false'}\n")
                elapsed, report = ingest(args.bin, data, config, corpus)
                chunks = sum(i.get("chunks") or 0 for i in report["items"])
                times[on].append(elapsed)
                sizes[on] = sqlite_bytes(data)
                if run < args.runs - 1 or not on:
                    shutil.rmtree(data)
        on_s, off_s = statistics.median(times[True]), statistics.median(times[False])
        graph = sizes[True] - sizes[False]

        # 1: find_vendor_info for every vendor, on the entities-on data.
        data = work / f"data-True-{args.runs - 1}"
        config = work / "config-serve.toml"
        config.write_text('[serve]\nbmcis_library = "kb"\n')
        out = subprocess.run([args.bin, "--json", "entities", "import", str(list_path), "--library", "kb"],
                             env=env(data, config), capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        port = free_port()
        server = subprocess.Popen([args.bin, "serve", "--http", f"127.0.0.1:{port}", "--toolsets", "bmcis"],
                                  env=env(data, config), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.time() + 60
            while True:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
                    break
                except OSError:
                    if time.time() > deadline:
                        raise
                    time.sleep(0.1)
            headers = session(port)
            latencies, served = [], []
            expected_total = found_total = right_total = 0
            misses = []
            for n, vendor in enumerate([None, *vendor_list]):
                target = vendor or vendor_list[0]
                call = {"jsonrpc": "2.0", "id": n + 1, "method": "tools/call",
                        "params": {"name": "find_vendor_info", "arguments": {"vendor_name": target["name"], "top_k": 10}}}
                started = time.perf_counter()
                status, _, _, text = post(port, call, headers)
                elapsed = (time.perf_counter() - started) * 1e3
                result = result_of(text)["result"]
                assert status == 200 and not result.get("isError"), text[:500]
                if vendor is None:
                    continue  # warm-up: the model loads on the first search
                body = result["structuredContent"]
                latencies.append(elapsed)
                served.append(body["execution_time_ms"])
                expected = oracle(docs, vendor)
                found = {d["source_file"].rsplit("/", 1)[-1] for d in body["documents"]}
                assert body["total_documents"] <= 100, "a vendor in more documents than one answer lists"
                expected_total += len(expected)
                found_total += len(found)
                right_total += len(found & expected)
                if found != expected:
                    misses.append((vendor["name"], sorted(expected - found)[:3], sorted(found - expected)[:3]))
        finally:
            server.terminate()
            server.wait(timeout=30)

        print(f"knowledge base: {args.documents} documents, {chunks} chunks, {args.vendors} vendors "
              f"(3 names each), {expected_total} vendor-document pairs by the oracle")
        print(f"find_vendor_info: recall {right_total / max(expected_total, 1):.4f}, "
              f"precision {right_total / max(found_total, 1):.4f}, {len(misses)} vendors with a difference")
        for m in misses[:5]:
            print("  ", m)
        print(f"  round trip ms: median {statistics.median(latencies):.1f}, p95 {percentile(latencies, 95):.1f}, "
              f"max {max(latencies):.1f}; server execution_time_ms median {statistics.median(served):.1f}, "
              f"p95 {percentile(served, 95):.1f}")
        print(f"ingest seconds (median of {args.runs}): entities on {on_s:.1f}, off {off_s:.1f} "
              f"({(on_s / off_s - 1) * 100:+.1f} %); runs on {[round(t, 1) for t in times[True]]}, "
              f"off {[round(t, 1) for t in times[False]]}")
        print(f"graph on disk: {graph / 1e6:.2f} MB for {chunks} chunks = "
              f"{graph / max(chunks, 1) * 1e5 / 1e6:.1f} MB per 100k chunks "
              f"(database {sizes[True] / 1e6:.1f} MB on, {sizes[False] / 1e6:.1f} MB off)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
