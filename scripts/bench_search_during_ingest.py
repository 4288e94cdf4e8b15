#!/usr/bin/env python3
"""Search latency while another process ingests, against the same store idle.

A `folio serve --stdio` server on DATA_DIR answers `search` calls on LIBRARY
(queries from a BEIR queries.jsonl, cycled); the latency of each call is
timed at the client. First with nothing else running, then while a
`folio ingest FOLDER` runs in another process on the same data directory
(into a library of its own, so the library searched does not change), once
at each nice value asked for (`FOLIO_INGEST_NICE`; folio's default is 10).

    python3 scripts/bench_search_during_ingest.py target/release/folio \\
        --data-dir D --library notes --queries ../shared/datasets/scifact-train/queries.jsonl \\
        --ingest-folder F [--nice 0 --nice 10] [--idle 300]

D holds LIBRARY (100,000 chunks for the measurement in docs/benchmarks-history.md);
F is a folder of documents not yet in D (each run ingests it into a fresh
library, removed afterwards). Prints JSON: per phase, queries answered and
p50 / p95 / p99 / max milliseconds, and the ingest's seconds.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_mcp import Server, pct  # noqa: E402


def summary(latencies):
    return {
        "queries": len(latencies),
        "p50_ms": round(pct(latencies, 50), 2),
        "p95_ms": round(pct(latencies, 95), 2),
        "p99_ms": round(pct(latencies, 99), 2),
        "max_ms": round(max(latencies), 2),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--library", required=True)
    ap.add_argument("--queries", required=True, help="a BEIR queries.jsonl")
    ap.add_argument("--ingest-folder", required=True)
    ap.add_argument("--nice", type=int, action="append", help="FOLIO_INGEST_NICE of the ingest (repeatable)")
    ap.add_argument("--idle", type=int, default=300, help="queries timed with nothing else running")
    a = ap.parse_args()
    env = dict(os.environ, FOLIO_DATA_DIR=a.data_dir)
    with open(a.queries) as f:
        queries = [json.loads(line)["text"] for line in f if line.strip()]

    server = Server(a.binary, env)
    server.initialize()
    turn = [0]

    def search():
        q = queries[turn[0] % len(queries)]
        turn[0] += 1
        t = time.perf_counter()
        server.request("tools/call", {"name": "search", "arguments": {
            "library": a.library, "query": q, "response_mode": "preview", "top_k": 10}})
        return (time.perf_counter() - t) * 1e3

    for _ in range(20):  # loads the model and the indexes
        search()
    report = {"library": a.library, "phases": {}}
    report["phases"]["idle"] = summary([search() for _ in range(a.idle)])
    for nice in a.nice or [10]:
        library = f"ingest-{os.getpid()}-{nice}"
        ingest_env = dict(env, FOLIO_INGEST_NICE=str(nice))
        started = time.perf_counter()
        ingest = subprocess.Popen([a.binary, "ingest", a.ingest_folder, "--library", library],
                                  env=ingest_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        latencies = []
        while ingest.poll() is None:
            latencies.append(search())
        seconds = time.perf_counter() - started
        if ingest.returncode != 0:
            raise SystemExit(f"ingest failed with {ingest.returncode}")
        phase = summary(latencies)
        phase["ingest_seconds"] = round(seconds, 1)
        report["phases"][f"during ingest, nice {nice}"] = phase
        subprocess.run([a.binary, "rm", "--library", library], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    report["phases"]["idle, after"] = summary([search() for _ in range(a.idle)])
    server.close()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
