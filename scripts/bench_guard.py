#!/usr/bin/env python3
"""What the HTTP guard costs a request, alone: POSTs of a tools/call to /mcp
naming no live session, which the MCP service refuses at once (404) after
the guard has run (Host, Origin, the caller's credentials, the scope the
tool needs), on three servers of one library: --auth none, keys and oauth
(tests/oidc's provider). Calls alternate between the servers over kept-alive
connections; the round-trip medians differ by the guard's work.

Usage (the set-up virtualenv's python, for PyJWT and cryptography):
  scripts/bench_guard.py [--bin target/release/folio] [--calls 6000]
"""
import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_auth import identity_provider  # noqa: E402
from load_keys import ROOT, free_port  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--bin", default=str(ROOT / "target/release/folio"))
parser.add_argument("--calls", type=int, default=6000)
options = parser.parse_args()
BIN = options.bin
work = Path(tempfile.mkdtemp(prefix="folio-guard-"))
data = work / "data"
env = dict(os.environ, FOLIO_DATA_DIR=str(data), FOLIO_LOG="error")
subprocess.run([BIN, "ingest", str(ROOT / "samples"), "--library", "wiki"], env=env, capture_output=True, check=True)
key = subprocess.run([BIN, "keys", "create", f"g{os.getpid()}", "--scope", "search"], env=env, capture_output=True, text=True).stdout.strip()
ports = {m: free_port() for m in ("none", "keys", "oauth")}
provider, token, oauth_args = identity_provider(work, ports["oauth"])
args = {"none": ["--auth", "none"], "keys": ["--auth", "keys"], "oauth": oauth_args}
creds = {"none": None, "keys": key, "oauth": token}
servers = [subprocess.Popen([BIN, "serve", "--read-only", "--http", f"127.0.0.1:{ports[m]}", *args[m]], env=env, stderr=subprocess.DEVNULL) for m in ports]
for port in ports.values():
    deadline = time.time() + 60
    while True:
        try:
            http.client.HTTPConnection("127.0.0.1", port, timeout=1).request("GET", "/health")
            break
        except OSError:
            assert time.time() < deadline, "a server did not start"
            time.sleep(0.1)
body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search", "arguments": {"library": "wiki", "query": "x"}}})
conns = {m: http.client.HTTPConnection("127.0.0.1", ports[m]) for m in ports}
times = {m: [] for m in ports}
statuses = {m: set() for m in ports}
for i in range(options.calls):
    for m in (["none", "keys", "oauth"] if i % 2 else ["oauth", "keys", "none"]):
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Session-Id": "none", "MCP-Protocol-Version": "2025-11-25"}
        if creds[m]: h["Authorization"] = f"Bearer {creds[m]}"
        t = time.perf_counter()
        conns[m].request("POST", "/mcp", body, h)
        r = conns[m].getresponse(); r.read()
        if i >= 200: times[m].append((time.perf_counter() - t) * 1e3)
        statuses[m].add(r.status)
for s in servers: s.terminate()
provider.terminate()
base = statistics.median(times["none"])
for m in ports:
    t = sorted(times[m])
    print(m, "statuses", statuses[m], "p50 %.3f ms p95 %.3f ms, p50 over none %+.3f ms" % (statistics.median(t), t[int(0.95 * len(t))], statistics.median(t) - base))
