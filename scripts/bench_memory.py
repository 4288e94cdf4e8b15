#!/usr/bin/env python3
"""A server's memory as it is used: `folio serve --http` on a data
directory, driven through MCP (the client of scripts/bench_throughput.py),
with its resident memory read from /proc after each step: started, the
first lexical search (the library opened), the first dense search (the
model loaded), 30 hybrid searches, --more hybrid searches, and 50 searches
with a filter each new. RSS is split into anonymous memory (the process's
own) and file-backed pages (mapped files as they are read: indexes,
weights, libraries).

usage: scripts/bench_memory.py BIN --data-dir D --library L [--more 200] [--json]

Questions are made-up words (as bench_throughput.py makes them), so they
touch many word pieces of the model's vocabulary. The filter is on the
`group` field of `folio bench search`'s synthetic libraries; on another
library it matches nothing, which is still a search.
"""

import argparse
import importlib.util
import json
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def throughput_module():
    sys.dont_write_bytecode = True  # no __pycache__ left in scripts/
    spec = importlib.util.spec_from_file_location("bench_throughput", os.path.join(HERE, "bench_throughput.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def memory(pid):
    """RSS, anonymous and file-backed, in MB, from /proc/PID/status."""
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            fields[name] = value.strip()
    kb = lambda name: int(fields[name].split()[0])
    return {"rss_mb": round(kb("VmRSS") / 1024, 1), "anonymous_mb": round(kb("RssAnon") / 1024, 1),
            "file_mb": round(kb("RssFile") / 1024, 1)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--library", required=True)
    ap.add_argument("--more", type=int, default=200)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    bt = throughput_module()
    port = bt.free_port()
    server = subprocess.Popen([args.binary, "--data-dir", args.data_dir, "serve", "--http", f"127.0.0.1:{port}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    steps = []
    try:
        for _ in range(600):
            try:
                session = bt.Session(port)
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise SystemExit("the server did not start")
        rng = random.Random(3)
        ask = lambda mode: session.search(args.library, bt.question(rng), mode)
        steps.append(("started", memory(server.pid)))
        ask("lexical")
        steps.append(("first lexical search", memory(server.pid)))
        ask("dense")
        steps.append(("first dense search", memory(server.pid)))
        for _ in range(30):
            ask("hybrid")
        steps.append(("30 hybrid searches", memory(server.pid)))
        for _ in range(args.more):
            ask("hybrid")
        steps.append((f"{30 + args.more} hybrid searches", memory(server.pid)))
        for i in range(50):
            answer = session.request("tools/call", {"name": "search", "arguments": {
                "library": args.library, "query": bt.question(rng), "response_mode": "metadata",
                "filter": {"group": [f"g{i % 10}", f"none{i}"]}}})
            assert answer and "result" in answer and not answer["result"].get("isError"), answer
        steps.append(("50 filtered searches", memory(server.pid)))
    finally:
        server.terminate()
        server.wait()
    if args.json:
        print(json.dumps([{"step": step, **m} for step, m in steps], indent=1))
    else:
        print(f"{'step':<28} {'RSS':>9} {'anonymous':>10} {'file':>8}")
        for step, m in steps:
            print(f"{step:<28} {m['rss_mb']:>6.0f} MB {m['anonymous_mb']:>7.0f} MB {m['file_mb']:>5.0f} MB")


if __name__ == "__main__":
    main()
