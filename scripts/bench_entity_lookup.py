#!/usr/bin/env python3
"""Entity lookup against the size of the declared list (issue 46 §6).

For each size, a fresh data directory: a few notes that mention some of
the declared vendors, then `--sizes` organizations declared from a CSV
("Vendor 000042 Ltd", alias "V42"). Measured:

1. `folio entity LIBRARY vend` as a whole process (engine opened, the
   declared list read and indexed, the card built): the seconds of each run.
2. Over MCP (streamable HTTP, raw JSON-RPC, one session of `folio serve`):
   the `entity` tool for a prefix every declared name shares ("vend"), for
   a typo ("vendor 00004 ltx"), and `entities` with a prefix query; the
   round-trip latency of each call (median, p95). The first call of a
   server builds the index; it is reported apart.

Usage: scripts/bench_entity_lookup.py [--bin target/release/folio]
       [--sizes 2000,8000,20000,100000] [--calls 40]
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from load_keys import ROOT, free_port, post, result_of, session_when_up


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def run(binary, data, *args):
    env = dict(os.environ, FOLIO_DATA_DIR=str(data), FOLIO_CONFIG="", FOLIO_LOG="warn")
    started = time.perf_counter()
    done = subprocess.run([binary, *args], env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    assert done.returncode == 0, done.stderr
    return elapsed, done.stdout


def call(port, headers, n, name, arguments):
    body = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    started = time.perf_counter()
    status, _, _, text = post(port, body, headers)
    elapsed = time.perf_counter() - started
    message = result_of(text)
    assert status == 200 and not message["result"].get("isError"), text[:500]
    return elapsed, message["result"]["structuredContent"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=str(ROOT / "target" / "release" / "folio"))
    parser.add_argument("--sizes", default="2000,8000,20000,100000")
    parser.add_argument("--calls", type=int, default=40)
    args = parser.parse_args()
    for size in map(int, args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            notes = tmp / "notes"
            notes.mkdir()
            for i in range(20):
                vendor = f"Vendor {i * 37 % size:06d} Ltd"
                (notes / f"n{i}.md").write_text(
                    f"# Note {i}\n\n{vendor} shipped the order late. We asked {vendor} for a refund.\n")
            data = tmp / "data"
            run(args.bin, data, "ingest", str(notes), "--library", "ent")
            declared = tmp / "vendors.csv"
            with declared.open("w") as f:
                f.write("name,type,aliases\n")
                for i in range(size):
                    f.write(f"Vendor {i:06d} Ltd,organization,V{i}\n")
            run(args.bin, data, "entities", "import", str(declared), "--library", "ent")
            cli = [run(args.bin, data, "--json", "entity", "ent", "vend")[0] for _ in range(3)]
            port = free_port()
            server = subprocess.Popen([args.bin, "serve", "--http", f"127.0.0.1:{port}"],
                                      env=dict(os.environ, FOLIO_DATA_DIR=str(data), FOLIO_CONFIG="", FOLIO_LOG="warn"),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                headers = session_when_up(port)
                first, card = call(port, headers, 1, "entity", {"library": "ent", "name": "vend"})
                row = {"declared": size, "cli_seconds": [round(c, 3) for c in cli],
                       "first_call_ms": round(first * 1e3, 1), "card": card.get("name")}
                for label, name, arguments in [
                    ("entity_prefix", "entity", {"library": "ent", "name": "vend"}),
                    ("entity_typo", "entity", {"library": "ent", "name": "vendor 000004 ltx"}),
                    ("entities_prefix", "entities", {"library": "ent", "query": "vendor 0000", "limit": 10}),
                ]:
                    times = [call(port, headers, 2 + n, name, arguments)[0] * 1e3 for n in range(args.calls)]
                    row[label] = {"median_ms": round(statistics.median(times), 2), "p95_ms": round(percentile(times, 95), 2)}
                print(json.dumps(row), flush=True)
            finally:
                server.terminate()
                server.wait(timeout=30)


if __name__ == "__main__":
    main()
