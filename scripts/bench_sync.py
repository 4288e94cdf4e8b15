#!/usr/bin/env python3
"""Folders that stay indexed (issue 31), measured with the release binary:

1. Catch-up: `folio sync` over a folder of `--files` unchanged files
   already indexed: time, and bytes read (the report's read_bytes).
2. Edit to searchable: `folio serve --http --watch FOLDER=LIBRARY`; a
   one-page Markdown file is saved with a new word `--edits` times, and
   each time a lexical search is polled (every 20 ms) until it finds the
   word: p50 and p95 of the delay.
3. A storm: random creates, edits, deletes, renames and folder moves on the
   folder while the server watches, then more with the server stopped, then
   the server started again (catch-up); once quiet the library must equal
   the folder exactly (every supported file once, at its path, no deleted
   file), and the chunks embedded (the server's /metrics) must be those of
   created and edited files only: moves embed nothing. Searches are sent
   throughout and must all answer.
4. Idle: CPU seconds the watching server uses over `--idle` seconds with
   three folders watched and nothing changing.

Usage: scripts/bench_sync.py [--bin target/release/folio] [--files 10000]
       [--edits 50] [--storm 400] [--idle 30]
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from load_keys import ROOT, free_port, post, result_of, session

WORDS = ("river delta silt glacier moraine tide moon orchard harbour lantern quarry meadow thistle "
         "copper saffron granite willow ember falcon cedar").split()


def env(data, config=None):
    e = dict(os.environ, FOLIO_DATA_DIR=str(data), FOLIO_LOG="warn")
    e.pop("FOLIO_STORE_URL", None)
    if config:
        e["FOLIO_CONFIG"] = str(config)
    return e


def page(rng, token=""):
    words = " ".join(rng.choice(WORDS) for _ in range(60))
    return f"# Note\n\n{words} {token}\n"


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def cli(binary, data, *args):
    out = subprocess.run([binary, "--json", *args], env=env(data), capture_output=True, text=True)
    assert out.returncode in (0, 3), out.stderr
    return json.loads(out.stdout)


class Server:
    def __init__(self, binary, data, watches):
        self.port, self.metrics = free_port(), free_port()
        args = [binary, "serve", "--http", f"127.0.0.1:{self.port}", "--metrics-addr", f"127.0.0.1:{self.metrics}"]
        for folder, library in watches:
            args += ["--watch", f"{folder}={library}"]
        self.process = subprocess.Popen(args, env=env(data), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=1)
                break
            except OSError:
                assert time.time() < deadline and self.process.poll() is None, "the server did not start"
                time.sleep(0.1)
        self.headers = session(self.port)
        self.calls = 0

    def call(self, name, arguments):
        self.calls += 1
        body = {"jsonrpc": "2.0", "id": self.calls, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
        status, _, _, text = post(self.port, body, self.headers)
        assert status == 200, text[:300]
        return result_of(text)["result"]

    def sources(self, query, library="notes"):
        result = self.call("search", {"library": library, "query": query, "mode": "lexical", "top_k": 100})
        if result.get("isError"):
            return None
        return [h["source"] for h in result["structuredContent"]["hits"]]

    def counter(self, name):
        text = urllib.request.urlopen(f"http://127.0.0.1:{self.metrics}/metrics", timeout=5).read().decode()
        for line in text.splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                return float(line.rsplit(" ", 1)[1])
        return 0.0

    def cpu_seconds(self):
        with open(f"/proc/{self.process.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


def library_sources(binary, data, library="notes"):
    listed = cli(binary, data, "ls", library, "--limit", "100000")
    return sorted(d["source"] for d in listed["documents"])


def folder_files(folder):
    return sorted(str(p.resolve()) for p in Path(folder).rglob("*.md")
                  if not any(part.startswith(".") for part in p.relative_to(folder).parts))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=str(ROOT / "target" / "release" / "folio"))
    parser.add_argument("--files", type=int, default=10000)
    parser.add_argument("--edits", type=int, default=50)
    parser.add_argument("--storm", type=int, default=400)
    parser.add_argument("--idle", type=int, default=30)
    parser.add_argument("--seed", type=int, default=31)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="folio-bench-sync-"))
    try:
        folder, data = work / "notes", work / "data"
        for i in range(args.files):
            path = folder / f"d{i % 50:02}" / f"n{i:05}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(page(rng, f"note{i}"))
        started = time.perf_counter()
        first = cli(args.bin, data, "sync", str(folder), "--library", "notes")
        print(f"initial sync: {len(first['added'])} files in {time.perf_counter() - started:.0f} s")

        # 1. Catch-up over unchanged files.
        times = []
        for _ in range(3):
            started = time.perf_counter()
            again = cli(args.bin, data, "sync", str(folder), "--library", "notes")
            times.append(time.perf_counter() - started)
            assert not again["added"] and not again["replaced"] and again["read_bytes"] == 0, again
        print(f"catch-up of {args.files} unchanged files: median {statistics.median(times):.2f} s "
              f"(runs {[round(t, 2) for t in times]}; the pass itself {again['elapsed_ms']} ms), "
              f"bytes read {again['read_bytes']}")

        # 2. Edit to searchable, with the server watching.
        server = Server(args.bin, data, [(folder, "notes")])
        target = folder / "edited.md"
        target.write_text(page(rng, "warmup"))
        while server.sources("warmup") != [str(target.resolve())]:
            time.sleep(0.05)
        delays = []
        for n in range(args.edits):
            token = f"edit{n}x{rng.randrange(10**6)}"
            saved = time.perf_counter()
            target.write_text(page(rng, token))
            while server.sources(token) != [str(target.resolve())]:
                assert time.perf_counter() - saved < 30, token
                time.sleep(0.02)
            delays.append(time.perf_counter() - saved)
        print(f"edit to searchable over {args.edits} edits: p50 {statistics.median(delays):.2f} s, "
              f"p95 {percentile(delays, 95):.2f} s, max {max(delays):.2f} s")

        # 3. The storm.
        chunks_before = server.counter("folio_ingest_chunks_total")
        embedded_expected = 0
        stop_searching = threading.Event()
        answered, failed_searches = [0], [0]

        def searcher():
            while not stop_searching.is_set():
                try:
                    result = server.call("search", {"library": "notes", "query": rng.choice(WORDS)})
                    answered[0] += 0 if result.get("isError") else 1
                    failed_searches[0] += 1 if result.get("isError") else 0
                except Exception:
                    failed_searches[0] += 1
                time.sleep(0.05)

        def storm(ops):
            nonlocal embedded_expected
            moved = 0
            for _ in range(ops):
                files = [p for p in folder.rglob("*.md")]
                op = rng.random()
                if op < 0.25:
                    d = folder / f"d{rng.randrange(60):02}"
                    d.mkdir(exist_ok=True)
                    (d / f"new{rng.randrange(10**9)}.md").write_text(page(rng, f"fresh{rng.randrange(10**9)}"))
                    embedded_expected += 1
                elif op < 0.45 and files:
                    p = rng.choice(files)
                    p.write_text(page(rng, f"changed{rng.randrange(10**9)}"))
                    embedded_expected += 1
                elif op < 0.65 and files:
                    rng.choice(files).unlink()
                elif op < 0.9 and files:
                    p = rng.choice(files)
                    d = folder / f"d{rng.randrange(60):02}"
                    d.mkdir(exist_ok=True)
                    p.rename(d / f"moved{rng.randrange(10**9)}.md")
                    moved += 1
                else:
                    dirs = [d for d in folder.iterdir() if d.is_dir()]
                    if dirs:
                        d = rng.choice(dirs)
                        d.rename(folder / f"renamed{rng.randrange(10**9)}")
                        moved += 1
            return moved

        search_thread = threading.Thread(target=searcher, daemon=True)
        search_thread.start()
        moved = storm(args.storm // 2)
        time.sleep(2)
        stop_searching.set()
        search_thread.join()
        chunks_watching = server.counter("folio_ingest_chunks_total") - chunks_before
        server.stop()
        moved += storm(args.storm // 2)  # while folio is stopped
        server = Server(args.bin, data, [(folder, "notes")])
        chunks_before = server.counter("folio_ingest_chunks_total")
        deadline = time.time() + 600
        while library_sources(args.bin, data) != folder_files(folder):
            assert time.time() < deadline, "the library never caught up"
            time.sleep(1)
        time.sleep(2)
        chunks_catchup = server.counter("folio_ingest_chunks_total") - chunks_before
        equal = library_sources(args.bin, data) == folder_files(folder)
        embedded = chunks_watching + chunks_catchup
        print(f"storm: {args.storm} operations ({moved} moves or folder renames), half with folio stopped; "
              f"library equals folder: {equal} ({len(folder_files(folder))} files); chunks embedded "
              f"{embedded:.0f} for {embedded_expected} created or edited files (moves embed nothing); "
              f"searches answered {answered[0]}, failed {failed_searches[0]}")
        server.stop()

        # 4. Idle with three folders watched.
        others = [work / "other1", work / "other2"]
        for o in others:
            o.mkdir()
            (o / "x.md").write_text(page(rng))
        server = Server(args.bin, data, [(folder, "notes"), (others[0], "o1"), (others[1], "o2")])
        time.sleep(10)
        before = server.cpu_seconds()
        time.sleep(args.idle)
        used = server.cpu_seconds() - before
        print(f"idle with 3 folders watched: {used:.2f} CPU s over {args.idle} s ({used / args.idle * 100:.2f} % of a core)")
        server.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
