#!/usr/bin/env python3
"""Quote lookup at its limits (issue 16): ten documents of 50,000
characters, and passages of 800, 1,600 and 5,000 characters taken from one
of them — verbatim, with 5 % and with 15 % of their characters edited —
looked up with `folio quote`. Prints the median and worst time per case
and whether the right document and offsets came back, as JSON.

usage: scripts/bench_quote.py [--repeat 3]
       (FOLIO_BIN selects the binary; default target/release/folio)"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

root = Path(__file__).resolve().parents[1]
parser = argparse.ArgumentParser()
parser.add_argument("--repeat", type=int, default=3)
args = parser.parse_args()
binary = os.environ.get("FOLIO_BIN", str(root / "target/release/folio"))
rng = random.Random(16)
# A Zipf-distributed vocabulary of 4,000 pseudo-words, as text has.
syllables = ["ka", "lo", "mi", "ter", "an", "sol", "vi", "ren", "da", "qu", "est", "or", "ul", "ne", "ph", "is"]
vocabulary = sorted({"".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(6000)})[:4000]
rng.shuffle(vocabulary)


def document(n):
    words, length = [], 0
    while length < 50_000:
        word = vocabulary[min(int(rng.paretovariate(1.0)) - 1, len(vocabulary) - 1)]
        words.append(word)
        length += len(word) + 1
    text = " ".join(words)[:50_000]
    return f"# Document {n}\n\n" + "\n\n".join(text[i:i + 600] for i in range(0, len(text), 600))


def edit(passage, fraction):
    chars = list(passage)
    for _ in range(int(len(chars) * fraction)):
        at = rng.randrange(len(chars))
        choice = rng.random()
        if choice < 0.4:
            chars[at] = rng.choice("abcdefghijklmnopqrstuvwxyz")
        elif choice < 0.7:
            del chars[at]
        else:
            chars.insert(at, rng.choice("abcdefghijklmnopqrstuvwxyz"))
    return "".join(chars)


with tempfile.TemporaryDirectory() as work:
    work = Path(work)
    env = dict(os.environ, FOLIO_DATA_DIR=str(work / "data"), FOLIO_LOG="error")
    docs = work / "docs"
    docs.mkdir()
    texts = []
    for n in range(10):
        text = document(n)
        texts.append(text)
        (docs / f"doc-{n}.md").write_text(text)
    started = time.monotonic()
    subprocess.run([binary, "ingest", str(docs), "--library", "quotes"], env=env, check=True, capture_output=True)
    ingest_s = time.monotonic() - started
    results = []
    for length in [800, 1600, 5000]:
        for fraction in [0.0, 0.05, 0.15]:
            times, found = [], []
            for _ in range(args.repeat):
                source = rng.randrange(10)
                body = texts[source].split("\n\n", 1)[1]
                start = rng.randrange(len(body) - length)
                passage = edit(body[start:start + length].strip(), fraction)[:5000]
                began = time.monotonic()
                out = subprocess.run([binary, "quote", passage, "--library", "quotes", "--json", "--min-score", "0.5"],
                                     env=env, capture_output=True, text=True)
                times.append(time.monotonic() - began)
                matches = json.loads(out.stdout).get("matches", []) if out.returncode == 0 else []
                found.append(bool(matches) and matches[0]["source"].endswith(f"doc-{source}.md"))
            results.append({"passage_chars": length, "edited": fraction, "median_s": round(statistics.median(times), 3),
                            "max_s": round(max(times), 3), "found": f"{sum(found)}/{len(found)}"})
    print(json.dumps({"documents": 10, "chars_per_document": 50_000, "ingest_s": round(ingest_s, 1), "lookups": results}, indent=2))
