#!/usr/bin/env python3
"""What keys cost a search: the same library served twice at once, once
with `--auth none` and once with `--auth keys --audit-log FILE --rate
1000000/min`; one client alternates identical `search` calls between the
two (raw JSON-RPC over HTTP, one session each) and the difference of the
round-trip medians and p95s is the overhead of authentication, the rate
bucket and the audit line.

Usage: scripts/bench_auth.py [--bin target/release/folio] [--calls 1000]
       [--corpus DIR]   (default: samples/)
"""

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from load_keys import ROOT, WORDS, free_port, post, result_of


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def session(port, key):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
    }
    status, sid, _, _ = post(port, init, headers)
    assert status == 200, status
    headers.update({"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})
    post(port, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    return headers


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=str(ROOT / "target/release/folio"))
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--corpus", default=str(ROOT / "samples"))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="folio-auth-"))
    env = dict(os.environ, FOLIO_DATA_DIR=str(work / "data"), FOLIO_LOG="warn")
    run = lambda *a: subprocess.run([args.bin, *a], env=env, check=True, capture_output=True, text=True).stdout.strip()
    run("ingest", args.corpus, "--library", "wiki")
    key = run("keys", "create", "bench", "--scope", "search")
    # Two readers of one data directory: both read-only, so neither owns it.
    open_port, keys_port = free_port(), free_port()
    servers = [
        subprocess.Popen([args.bin, "serve", "--read-only", "--http", f"127.0.0.1:{open_port}", "--auth", "none"], env=env, stderr=subprocess.DEVNULL),
        subprocess.Popen(
            [args.bin, "serve", "--read-only", "--http", f"127.0.0.1:{keys_port}", "--auth", "keys", "--audit-log", str(work / "audit.jsonl"), "--rate", "1000000/min"],
            env=env,
            stderr=subprocess.DEVNULL,
        ),
    ]
    try:
        for port in (open_port, keys_port):
            deadline = time.time() + 60
            while time.time() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.1)
        targets = {"none": (open_port, session(open_port, None)), "keys": (keys_port, session(keys_port, key))}
        rng = random.Random(7)
        queries = [" ".join(rng.sample(WORDS, 3)) + f" {i}" for i in range(args.calls)]
        times = {"none": [], "keys": []}
        for i, query in enumerate([queries[0]] * 20 + queries):
            order = ["none", "keys"] if i % 2 == 0 else ["keys", "none"]
            for name in order:
                port, headers = targets[name]
                body = {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": {"name": "search", "arguments": {"library": "wiki", "query": query, "top_k": 5}}}
                started = time.perf_counter()
                status, _, _, text = post(port, body, headers)
                elapsed = (time.perf_counter() - started) * 1e3
                assert status == 200 and "result" in result_of(text), (name, status, text[:200])
                if i >= 20:
                    times[name].append(elapsed)
    finally:
        for server in servers:
            server.terminate()
            server.wait(timeout=30)
    report = {
        name: {"p50_ms": round(statistics.median(t), 3), "p95_ms": round(percentile(t, 95), 3)} for name, t in times.items()
    }
    report["overhead_p50_ms"] = round(report["keys"]["p50_ms"] - report["none"]["p50_ms"], 3)
    report["overhead_p95_ms"] = round(report["keys"]["p95_ms"] - report["none"]["p95_ms"], 3)
    report["calls"] = args.calls
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
