#!/usr/bin/env python3
"""A team's server under load: 16 HTTP clients with 4 keys for 2 minutes
(`--seconds`), one key limited to `--rate` calls a minute.

Checks, and prints as JSON:
- the limited key is admitted within 5 % of what its rate allows (its burst
  plus the refill over the run), and refused 429 with Retry-After beyond;
- the other keys get no error at all;
- the audit log holds every tool call that reached a tool exactly once, by
  key.

Usage: scripts/load_keys.py [--bin target/release/folio] [--seconds 120] [--rate 120]
(with FOLIO_STORE_URL set, on that PostgreSQL database; else an embedded
store in a temporary folder).
"""

import argparse
import http.client
import json
import os
import random
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORDS = "river delta silt glacier moraine tide moon dropout attention sequence network".split()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(port, body, headers):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request(
        "POST",
        "/mcp",
        body=json.dumps(body),
        headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
    )
    response = conn.getresponse()
    text = response.read().decode()
    conn.close()
    return response.status, response.getheader("Mcp-Session-Id"), response.getheader("Retry-After"), text


def session(port, key=None):
    """An initialised MCP session on `port` (with `key` as the bearer
    token): the headers its requests carry."""
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


def session_when_up(port, seconds=60, key=None):
    """`session`, once a server just started on `port` answers."""
    deadline = time.time() + seconds
    while True:
        try:
            return session(port, key)
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.1)


def result_of(text):
    """The JSON-RPC message of a response body (JSON, or one SSE event)."""
    for line in text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            return json.loads(line[5:])
    return json.loads(text) if text.strip() else None


class Client(threading.Thread):
    def __init__(self, port, key, name, until):
        super().__init__(daemon=True)
        self.port, self.key, self.name, self.until = port, key, name, until
        self.admitted = self.limited = self.errors = self.calls = 0
        self.retry_after_ok = True

    def send(self, body, headers):
        while True:
            status, session, retry, text = post(self.port, body, {"Authorization": f"Bearer {self.key}", **headers})
            if status == 429:
                self.limited += 1
                self.retry_after_ok &= retry is not None and int(retry) >= 1
                if time.time() > self.until:
                    return None
                time.sleep(0.05)
                continue
            if status in (200, 202):
                self.admitted += 1
            else:
                self.errors += 1
            return status, session, text

    def run(self):
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": self.name, "version": "0"}},
        }
        sent = self.send(init, {})
        if sent is None:
            return
        session = sent[1]
        headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        if self.send({"jsonrpc": "2.0", "method": "notifications/initialized"}, headers) is None:
            return
        n = 1
        while time.time() < self.until:
            query = " ".join(random.sample(WORDS, 3))
            body = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "search", "arguments": {"library": "wiki", "query": query, "top_k": 3}}}
            n += 1
            sent = self.send(body, headers)
            if sent is None:
                return
            status, _, text = sent
            message = result_of(text) if status == 200 else None
            if message is None or "result" not in message or message["result"].get("isError"):
                self.errors += status == 200
                continue
            self.calls += 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.environ.get("FOLIO_BIN", str(ROOT / "target/release/folio")))
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--rate", type=int, default=120)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="folio-load-"))
    env = dict(os.environ, FOLIO_DATA_DIR=str(work / "data"), FOLIO_LOG="warn")
    folio = lambda *a: subprocess.run([args.bin, *a], env=env, check=True, capture_output=True, text=True).stdout.strip()
    folio("ingest", str(ROOT / "samples"), "--library", "wiki")
    keys = {f"k{i}": folio("keys", "create", f"k{i}", "--scope", "search") for i in range(1, 4)}
    keys["limited"] = folio("keys", "create", "limited", "--scope", "search", "--rate", f"{args.rate}/min")
    audit = work / "audit.jsonl"
    port = free_port()
    server = subprocess.Popen(
        [args.bin, "serve", "--http", f"127.0.0.1:{port}", "--auth", "keys", "--audit-log", str(audit)],
        env=env,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        # Warm the model so the run measures serving, not loading.
        warm = Client(port, keys["k1"], "warm", time.time() + 1)
        warm.run()
        started = time.time()
        until = started + args.seconds
        clients = [Client(port, key, f"{name}-{i}", until) for name, key in keys.items() for i in range(4)]
        for c in clients:
            c.start()
        for c in clients:
            c.join()
        elapsed = time.time() - started
    finally:
        server.terminate()
        server.wait(timeout=30)

    by_key = {}
    for c in clients:
        name = c.name.rsplit("-", 1)[0]
        totals = by_key.setdefault(name, {"admitted": 0, "limited": 0, "errors": 0, "tool_calls": 0})
        totals["admitted"] += c.admitted
        totals["limited"] += c.limited
        totals["errors"] += c.errors
        totals["tool_calls"] += c.calls
    audited = {}
    for line in audit.read_text().splitlines():
        entry = json.loads(line)
        if entry["operation"] == "search":
            audited[entry["caller"]] = audited.get(entry["caller"], 0) + 1
    warm_calls = warm.calls
    audited["k1"] = audited.get("k1", 0) - warm_calls
    allowed = args.rate + args.rate * elapsed / 60  # burst, then the refill
    limited = by_key["limited"]
    report = {
        "seconds": round(elapsed, 1),
        "rate_per_minute": args.rate,
        "by_key": by_key,
        "audited_tool_calls": audited,
        "limited_admitted_vs_allowed": round(limited["admitted"] / allowed, 4),
        "retry_after_always_given": all(c.retry_after_ok for c in clients),
    }
    print(json.dumps(report, indent=2))
    failures = []
    if abs(limited["admitted"] / allowed - 1) > 0.05:
        failures.append("the limited key's admissions are not within 5 % of its rate")
    if any(by_key[k]["errors"] or by_key[k]["limited"] for k in ("k1", "k2", "k3")):
        failures.append("an unlimited key saw an error or a refusal")
    if any(audited.get(k, 0) != by_key[k]["tool_calls"] for k in by_key):
        failures.append("the audit log does not hold every tool call exactly once")
    if not report["retry_after_always_given"]:
        failures.append("a 429 came without Retry-After")
    if failures:
        raise SystemExit("; ".join(failures))


if __name__ == "__main__":
    main()
