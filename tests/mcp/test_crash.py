"""A short kill -9 campaign over deletes, replaced documents, record
updates and library deletes (issue 14); scripts/bench_crash.py runs the
long one. Every kill must leave each library whole in SQLite, the lexical
index and the vector index, readable by a reader and a writer."""

from conftest import BIN
from crash import Campaign


def test_kill_9_during_writes_leaves_every_library_whole(tmp_path):
    counts, failures = Campaign(BIN, tmp_path, documents=24, seed=14).run(runs=12)
    assert not failures, failures
    assert counts["whole"] == 12, counts
