#!/usr/bin/env python3
"""Measures folio's MCP server: cold start (process start -> initialize ->
tools/list answered, model not loaded) and search latency through MCP
against the engine's own time for the same query, for the owner's client and
for a client attached over the local socket.

usage: scripts/bench_mcp.py BIN DATASET_DIR [--docs 2000] [--queries 200] [--starts 20]
Raw newline-delimited JSON-RPC over pipes, so no client SDK time is counted.
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


class Server:
    def __init__(self, binary, env, *args):
        self.started = time.perf_counter()
        self.p = subprocess.Popen([binary, "serve", "--stdio", *args], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.next_id = 0

    def send(self, message):
        self.p.stdin.write(json.dumps(message) + "\n")
        self.p.stdin.flush()

    def request(self, method, params=None):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}})
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("server closed")
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(reply["error"])
                return reply["result"]

    def initialize(self):
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("dataset")
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--starts", type=int, default=20)
    a = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="folio-bench-mcp-"))
    env = dict(os.environ, FOLIO_DATA_DIR=str(work / "data"))
    corpus = work / "corpus"
    corpus.mkdir()
    with open(Path(a.dataset) / "corpus.jsonl") as f:
        for i, line in enumerate(f):
            if i >= a.docs:
                break
            doc = json.loads(line)
            (corpus / f"{doc['_id']}.md").write_text(f"# {doc.get('title') or doc['_id']}\n\n{doc['text']}\n")
    queries = []
    with open(Path(a.dataset) / "queries.jsonl") as f:
        for line in f:
            queries.append(json.loads(line)["text"])
            if len(queries) >= a.queries:
                break
    t = time.perf_counter()
    subprocess.run([a.binary, "ingest", str(corpus), "--library", "bench"], env=env, check=True, stdout=subprocess.DEVNULL)
    print(f"ingested {a.docs} documents in {time.perf_counter() - t:.1f} s")

    init_ms, list_ms = [], []
    for _ in range(a.starts):
        s = Server(a.binary, env)
        s.initialize()
        init_ms.append((time.perf_counter() - s.started) * 1e3)
        s.request("tools/list")
        list_ms.append((time.perf_counter() - s.started) * 1e3)
        s.close()
    print(f"cold start, {a.starts} runs: initialize answered at median {statistics.median(init_ms):.1f} ms (p95 {pct(init_ms, 95):.1f}); "
          f"tools/list answered at median {statistics.median(list_ms):.1f} ms (p95 {pct(list_ms, 95):.1f})")

    owner = Server(a.binary, env)
    owner.initialize()
    attached = Server(a.binary, env)
    attached.initialize()
    for name, server in [("owner", owner), ("attached", attached)]:
        args = lambda q: {"name": "search", "arguments": {"library": "bench", "query": q, "response_mode": "preview", "top_k": 10}}
        server.request("tools/call", args(queries[0]))  # loads the model
        total, engine, overhead = [], [], []
        for q in queries:
            t = time.perf_counter()
            result = server.request("tools/call", args(q))
            ms = (time.perf_counter() - t) * 1e3
            data = result["structuredContent"]
            inside = data["embed_ms"] + data["search_ms"]
            total.append(ms)
            engine.append(inside)
            overhead.append(ms - inside)
        print(f"search via MCP ({name}, {len(queries)} queries): round trip p50 {pct(total, 50):.2f} / p95 {pct(total, 95):.2f} ms; "
              f"engine p50 {pct(engine, 50):.2f} / p95 {pct(engine, 95):.2f} ms; "
              f"overhead p50 {pct(overhead, 50):.2f} / p95 {pct(overhead, 95):.2f} ms")
    attached.close()
    owner.close()


if __name__ == "__main__":
    main()
