"""A kill -9 campaign against folio's writes (issue 14): deletes, replaced
documents (re-ingest of changed content), record updates and library
deletes, each killed at a random moment while a read-only server is
attached to the data directory; after every kill the store is reopened as a
reader and as a writer, and every library must be whole in SQLite, the
lexical index and the vector index, with searches answering.

Used by tests/mcp/test_crash.py (a short campaign in the suite) and
scripts/bench_crash.py (hundreds of kills, outside the suite)."""

import json
import random
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

from conftest import HttpServer, folio_env

WORDS = ("river delta sediment erosion glacier basalt granite aquifer monsoon estuary lagoon "
         "tundra plateau canyon fjord meander floodplain watershed moraine dune").split()

SCHEMA = """
text = "text"
key = "id"
unknown_fields = "reject"
[fields.id]
type = "keyword"
[fields.text]
type = "text"
[fields.version]
type = "integer"
"""


def note(rng, i, version=0):
    words = " ".join(rng.choice(WORDS) for _ in range(60))
    return f"# Note {i}\n\nVersion {version}. Entry {i} on {words}.\n\n## Details\n\n{words} {i}.\n"


class Campaign:
    def __init__(self, bin_path, work, documents, seed):
        self.bin = bin_path
        self.work = Path(work)
        self.data = self.work / "data"
        self.notes = self.work / "notes"
        self.scratch = self.work / "scratch"
        self.records = self.work / "records.jsonl"
        self.rng = random.Random(seed)
        self.documents = documents
        self.version = 0
        self.counts = Counter()
        self.failures = []
        self.durations = {}

    def folio(self, *args, timeout=600):
        return subprocess.run([self.bin, *args], env=folio_env(self.data), capture_output=True, text=True, timeout=timeout)

    def must(self, *args):
        out = self.folio(*args)
        assert out.returncode == 0, f"folio {' '.join(args)}: {out.stderr[-800:]}"
        return out

    def write_records(self):
        with self.records.open("w") as f:
            for i in range(30):
                f.write(json.dumps({"id": f"r{i}", "text": f"Record {i} version {self.version}: " + " ".join(self.rng.choice(WORDS) for _ in range(30)), "version": self.version}) + "\n")

    def prepare(self):
        self.notes.mkdir(parents=True)
        self.scratch.mkdir()
        for i in range(self.documents):
            (self.notes / f"note-{i:04d}.md").write_text(note(self.rng, i))
        for i in range(5):
            (self.scratch / f"s-{i}.md").write_text(note(self.rng, 1000 + i))
        self.must("ingest", str(self.notes), "--library", "wiki")
        schema = self.work / "schema.toml"
        schema.write_text(SCHEMA)
        self.must("schema", "records", str(schema))
        self.write_records()
        self.must("ingest", str(self.records), "--library", "records")
        self.must("ingest", str(self.scratch), "--library", "scratch")

    def document_ids(self, library):
        out = self.must("ls", library, "--json", "--limit", "100000")
        listed = json.loads(out.stdout)
        return [d["id"] for d in listed["documents"]]

    def operation(self, kind):
        """The command of one operation, and the state it may change."""
        if kind == "rm":
            ids = self.document_ids("wiki")
            return ["rm", self.rng.choice(ids)]
        if kind == "replace":
            i = self.rng.randrange(self.documents)
            self.version += 1
            path = self.notes / f"note-{i:04d}.md"
            path.write_text(note(self.rng, i, self.version))
            return ["ingest", str(path), "--library", "wiki"]
        if kind == "records":
            self.version += 1
            self.write_records()
            return ["ingest", str(self.records), "--library", "records"]
        if kind == "rm_library":
            return ["rm", "--library", "scratch"]
        raise ValueError(kind)

    def calibrate(self):
        """How long each operation takes unkilled: kills land within it."""
        for kind in ["replace", "records", "rm_library", "rm"]:
            started = time.monotonic()
            self.must(*self.operation(kind))
            self.durations[kind] = time.monotonic() - started
            if kind == "rm_library":
                self.must("ingest", str(self.scratch), "--library", "scratch")

    def check(self, run, kind):
        """Reopens as a reader, then as a writer, and checks every library."""
        problems = []
        for role in ["reader", "writer"]:
            if role == "writer":
                # Any write opens the store for writing and catches it up.
                out = self.folio("ingest", str(self.notes / "note-0000.md"), "--library", "wiki")
                if out.returncode != 0:
                    problems.append(f"writer open failed: {out.stderr[-300:]}")
            libraries = [entry["name"] for entry in json.loads(self.must("ls", "--json").stdout)]
            for library in libraries:
                out = self.folio("check", library, "--json")
                if out.returncode != 0:
                    problems.append(f"{role}: check {library}: {out.stdout[-500:]} {out.stderr[-500:]}")
                search = self.folio("search", "river delta", "--library", library, "--json", "--mode", "lexical")
                if search.returncode != 0:
                    problems.append(f"{role}: search {library}: {search.stderr[-300:]}")
        if problems:
            self.failures.append({"run": run, "kind": kind, "problems": problems})
        return not problems

    def run(self, runs, kinds=("rm", "replace", "records", "rm_library")):
        self.prepare()
        with HttpServer(self.data, "--read-only"):
            self.calibrate()
            for run in range(runs):
                kind = kinds[run % len(kinds)]
                if kind == "rm_library" and "scratch" not in [e["name"] for e in json.loads(self.must("ls", "--json").stdout)]:
                    self.must("ingest", str(self.scratch), "--library", "scratch")
                command = self.operation(kind)
                process = subprocess.Popen([self.bin, *command], env=folio_env(self.data), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(self.rng.uniform(0, self.durations[kind] * 1.1))
                finished = process.poll() is not None
                if not finished:
                    process.send_signal(signal.SIGKILL)
                process.wait()
                self.counts[f"{kind} {'finished' if finished else 'killed'}"] += 1
                whole = self.check(run, kind)
                self.counts["whole" if whole else "broken"] += 1
        return self.counts, self.failures
