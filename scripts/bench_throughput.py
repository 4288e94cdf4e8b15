#!/usr/bin/env python3
"""Searches per second through folio's MCP server over streamable HTTP,
with 1, 4 and 16 clients searching at once, each client a session of its
own keeping one HTTP connection (as an agent's host does).

usage: scripts/bench_throughput.py BIN [--data-dir D] [--store-url URL]
           [--library bench.synthetic-100000] [--clients 1,4,16]
           [--seconds 20] [--mode hybrid] [--json]

The library is the one `folio bench search --chunks N` builds (run it
first with the same --data-dir / --store-url). Three passes per client
count: "uncached", every search a question not asked before (its query
is embedded); "vector cached", questions whose vectors the server holds
(asked with top_k 1 just before the pass, so their responses are not
cached; each pass asks with a top_k of its own, 10 + pass; at most 600,
so the server's 1,024 cached vectors hold them all, and a question asked
again in the pass finds its response gone from the 256 cached); and "response cached", 50
questions asked again and again (the server's response cache answers
while nothing is written). Searches per second
are completed calls over the wall time; latencies are per call, as the
client sees them (HTTP and JSON included). The clients run in this
process's threads, on the same machine as the server.
"""

import argparse
import http.client
import json
import random
import socket
import statistics
import subprocess
import threading
import time

SYLLABLES = ["ka", "lo", "mi", "ren", "sa", "tu", "vel", "no", "pra", "gi", "dor", "be", "xu", "fen",
             "qua", "ly", "mar", "ton", "si", "hep", "ro", "din", "cal", "mo"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Session:
    """One MCP session over one kept-alive HTTP connection."""

    def __init__(self, port):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.conn.connect()
        # Requests leave at once (no Nagle wait on the client's side).
        self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.session = None
        self.next_id = 0
        answer = self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                             "clientInfo": {"name": "bench", "version": "1"}})
        assert "result" in answer, answer
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def post(self, message):
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                   "MCP-Protocol-Version": "2025-11-25"}
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        self.conn.request("POST", "/mcp", body=json.dumps(message), headers=headers)
        r = self.conn.getresponse()
        body = r.read().decode()
        self.session = self.session or r.getheader("mcp-session-id")
        for line in body.splitlines():
            line = line[5:].strip() if line.startswith("data:") else line.strip()
            if line.startswith("{"):
                answer = json.loads(line)
                if answer.get("id") == message.get("id"):
                    return answer
        return None

    def request(self, method, params):
        self.next_id += 1
        return self.post({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})

    def search(self, library, query, mode, top_k=10):
        answer = self.request("tools/call", {"name": "search", "arguments": {
            "library": library, "query": query, "mode": mode, "top_k": top_k, "response_mode": "metadata"}})
        result = answer and answer.get("result")
        assert result and not result.get("isError"), answer
        return result


def question(rng):
    return " ".join("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))) for _ in range(6))


def run_pass(port, library, clients, seconds, mode, asked, top_k=10, once=None):
    """`clients` threads search for `seconds`; questions fresh when `asked`
    is None, else drawn from it; or taken in turn from `once`."""
    sessions = [Session(port) for _ in range(clients)]
    latencies, errors = [], []
    lock = threading.Lock()
    start = threading.Barrier(clients + 1)
    deadline = [0.0]
    taken = [0]

    def client(i, session):
        rng = random.Random(1000 * clients + i + (0 if asked is None else 7))
        mine = []
        start.wait()
        while time.perf_counter() < deadline[0]:
            if once is not None:
                with lock:
                    query = once[taken[0] % len(once)]
                    taken[0] += 1
            else:
                query = question(rng) if asked is None else rng.choice(asked)
            t = time.perf_counter()
            try:
                session.search(library, query, mode, top_k)
            except Exception as e:  # noqa: BLE001 - counted and reported
                with lock:
                    errors.append(repr(e))
                continue
            mine.append((time.perf_counter() - t) * 1e3)
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(i, s)) for i, s in enumerate(sessions)]
    for t in threads:
        t.start()
    deadline[0] = time.perf_counter() + seconds
    began = time.perf_counter()
    start.wait()
    for t in threads:
        t.join()
    wall = time.perf_counter() - began
    latencies.sort()
    pick = lambda p: latencies[min(len(latencies) - 1, int(p / 100 * len(latencies)))] if latencies else None
    return {"clients": clients, "searches": len(latencies), "errors": len(errors),
            "searches_per_second": round(len(latencies) / wall, 1),
            "p50_ms": pick(50), "p95_ms": pick(95),
            "mean_ms": statistics.fmean(latencies) if latencies else None,
            "reused": max(0, taken[0] - len(once)) if once is not None else 0}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--data-dir")
    ap.add_argument("--store-url")
    ap.add_argument("--library", default="bench.synthetic-100000")
    ap.add_argument("--clients", default="1,4,16")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--mode", default="hybrid")
    ap.add_argument("--known", type=int, default=600,
                    help="questions whose vectors are cached first (the vector-cached passes)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    port = free_port()
    command = [args.binary]
    if args.data_dir:
        command += ["--data-dir", args.data_dir]
    if args.store_url:
        command += ["--store-url", args.store_url]
    command += ["serve", "--http", f"127.0.0.1:{port}"]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            try:
                warm = Session(port)
                break
            except (ConnectionError, OSError):
                time.sleep(0.1)
        else:
            raise SystemExit("the server did not start")
        rng = random.Random(5)
        asked = [question(rng) for _ in range(50)]
        for query in asked:  # loads the model and the indexes; fills the caches
            warm.search(args.library, query, args.mode)
        known = [question(rng) for _ in range(args.known)]
        rows = []
        for n, clients in enumerate(int(c) for c in args.clients.split(",")):
            for name, pool, once in (("uncached", None, None), ("vector cached", None, known),
                                     ("response cached", asked, None)):
                if once is not None:  # the uncached pass pushed them out
                    for query in once:
                        warm.search(args.library, query, args.mode, top_k=1)
                row = run_pass(port, args.library, clients, args.seconds, args.mode, pool,
                               top_k=10 + n, once=once)
                row["pass"] = name
                rows.append(row)
                if not args.json:
                    print(f"{clients:3d} clients, {name:15s}: {row['searches_per_second']:7.1f}/s  "
                          f"p50 {row['p50_ms']:.1f} ms  p95 {row['p95_ms']:.1f} ms  "
                          f"({row['searches']} searches, {row['errors']} errors, "
                          f"{row['reused']} questions reused)", flush=True)
        if args.json:
            print(json.dumps({"mode": args.mode, "library": args.library, "rows": rows}, indent=1))
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
