#!/usr/bin/env python3
"""What keys or OAuth tokens cost a search: the same library served twice
at once, once with `--auth none` and once with `--auth keys` (or `--auth
oauth`, against the test identity provider of tests/oidc) with `--audit-log
FILE --rate 1000000/min`; one client alternates identical `search` calls
between the two (raw JSON-RPC over HTTP, one session each) and the
difference of the round-trip medians and p95s is the overhead of
authentication, the rate bucket and the audit line.

Usage: scripts/bench_auth.py [--bin target/release/folio] [--calls 1000]
       [--mode keys|oauth]
       [--corpus DIR]                  (default: samples/, ingested first)
       [--data DIR --library NAME]     (an existing data directory instead,
                                        e.g. one `folio bench search
                                        --chunks 100000` built)
OAuth mode needs the set-up virtualenv's python (PyJWT, cryptography) and
Node with tests/oidc installed (scripts/setup.sh).
"""

import argparse
import base64
import json
import os
import random
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

from load_keys import ROOT, WORDS, free_port, post, result_of, session


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def identity_provider(work, folio_port):
    """tests/oidc's provider with a fresh RSA key; a token of its `lead`
    client for folio on `folio_port`; folio's OAuth flags."""
    from cryptography.hazmat.primitives.asymmetric import rsa
    from jwt.algorithms import RSAAlgorithm

    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(RSAAlgorithm.to_jwk(private))
    jwk.update(kid="bench", alg="RS256", use="sig")
    keys = work / "provider-keys.json"
    keys.write_text(json.dumps({"keys": [jwk]}))
    port = free_port()
    resource = f"http://127.0.0.1:{folio_port}/mcp"
    process = subprocess.Popen(["node", str(ROOT / "tests/oidc/provider.mjs"), str(port), str(keys), resource],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout.readline().strip() == "ready"
    issuer = f"http://127.0.0.1:{port}"
    request = urllib.request.Request(
        issuer + "/token", method="POST",
        data=urllib.parse.urlencode({"grant_type": "client_credentials", "scope": "search"}).encode(),
        headers={"Authorization": "Basic " + base64.b64encode(b"lead:lead-secret").decode(),
                 "Content-Type": "application/x-www-form-urlencoded"})
    with urllib.request.urlopen(request, timeout=30) as r:
        token = json.loads(r.read())["access_token"]
    return process, token, ["--auth", "oauth", "--issuer", issuer, "--resource", resource]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=str(ROOT / "target/release/folio"))
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--corpus", default=str(ROOT / "samples"))
    parser.add_argument("--data", help="an existing data directory (no ingest)")
    parser.add_argument("--library", default="wiki")
    parser.add_argument("--mode", choices=["keys", "oauth"], default="keys")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="folio-auth-"))
    env = dict(os.environ, FOLIO_DATA_DIR=args.data or str(work / "data"), FOLIO_LOG="warn")
    run = lambda *a: subprocess.run([args.bin, *a], env=env, check=True, capture_output=True, text=True).stdout.strip()
    if not args.data:
        run("ingest", args.corpus, "--library", args.library)
    open_port, keys_port = free_port(), free_port()
    provider = None
    if args.mode == "keys":
        key = run("keys", "create", f"bench-{os.getpid()}", "--scope", "search")
        auth = ["--auth", "keys"]
    else:
        provider, key, auth = identity_provider(work, keys_port)
    # Two readers of one data directory: both read-only, so neither owns it.
    servers = [
        subprocess.Popen([args.bin, "serve", "--read-only", "--http", f"127.0.0.1:{open_port}", "--auth", "none"], env=env, stderr=subprocess.DEVNULL),
        subprocess.Popen(
            [args.bin, "serve", "--read-only", "--http", f"127.0.0.1:{keys_port}", *auth, "--audit-log", str(work / "audit.jsonl"), "--rate", "1000000/min"],
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
        targets = {"none": (open_port, session(open_port, None)), args.mode: (keys_port, session(keys_port, key))}
        rng = random.Random(7)
        queries = [" ".join(rng.sample(WORDS, 3)) + f" {i}" for i in range(args.calls)]
        times = {"none": [], args.mode: []}
        for i, query in enumerate([queries[0]] * 20 + queries):
            order = ["none", args.mode] if i % 2 == 0 else [args.mode, "none"]
            for name in order:
                port, headers = targets[name]
                body = {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": {"name": "search", "arguments": {"library": args.library, "query": query, "top_k": 5}}}
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
        if provider is not None:
            provider.terminate()
            provider.wait(timeout=30)
    report = {
        name: {"p50_ms": round(statistics.median(t), 3), "p95_ms": round(percentile(t, 95), 3)} for name, t in times.items()
    }
    report["overhead_p50_ms"] = round(report[args.mode]["p50_ms"] - report["none"]["p50_ms"], 3)
    report["overhead_p95_ms"] = round(report[args.mode]["p95_ms"] - report["none"]["p95_ms"], 3)
    report["calls"] = args.calls
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
