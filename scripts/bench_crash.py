#!/usr/bin/env python3
"""The kill -9 campaign of issue 14 at length: a library of Markdown notes,
a records library and a scratch library, a read-only server attached, and
RUNS kills at random moments of deletes, replaced documents, record updates
and library deletes; after each, a reader and a writer reopen the store and
`folio check` every library. Prints the counts by outcome as JSON.

usage: ~/.local/share/folio/setup-venv/bin/python scripts/bench_crash.py [--runs 200] [--documents 300]
       (FOLIO_BIN selects the binary; default target/release/folio)"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

root = Path(__file__).resolve().parents[1]
os.environ.setdefault("FOLIO_BIN", str(root / "target/release/folio"))
sys.path.insert(0, str(root / "tests/mcp"))

from crash import Campaign  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--runs", type=int, default=200)
parser.add_argument("--documents", type=int, default=300)
parser.add_argument("--seed", type=int, default=1)
args = parser.parse_args()
with tempfile.TemporaryDirectory() as work:
    campaign = Campaign(os.environ["FOLIO_BIN"], work, args.documents, args.seed)
    counts, failures = campaign.run(args.runs)
    print(json.dumps({"runs": args.runs, "documents": args.documents, "counts": dict(counts),
                      "durations_s": campaign.durations, "failures": failures}, indent=2))
    sys.exit(1 if failures else 0)
