#!/usr/bin/env python3
"""Makes a folder of N small text notes, one sentence of a BEIR corpus each
(numbered, so no two are the same), 1,000 to a subfolder: the many-small-
files case of ingest's memory and throughput measurements.

    python3 scripts/make_notes.py 100000 /tmp/notes-100k [--corpus ../shared/datasets/scifact-train/corpus.jsonl]
"""
import argparse
import json
import os
import re


def main():
    p = argparse.ArgumentParser()
    p.add_argument("count", type=int)
    p.add_argument("out")
    p.add_argument("--corpus", default=os.path.join(os.path.dirname(__file__),
                                                    "../../shared/datasets/scifact-train/corpus.jsonl"))
    a = p.parse_args()
    sentences = []
    with open(a.corpus) as f:
        for line in f:
            d = json.loads(line)
            sentences += [s for s in re.split(r"(?<=[.!?])\s+", d["text"]) if len(s) > 40]
    for i in range(a.count):
        sub = os.path.join(a.out, f"{i // 1000:03d}")
        os.makedirs(sub, exist_ok=True)
        with open(os.path.join(sub, f"note-{i:06d}.txt"), "w") as out:
            out.write(f"Note {i}. {sentences[i % len(sentences)]}\n")
    print(f"{a.count} notes from {len(sentences)} sentences in {a.out}")


if __name__ == "__main__":
    main()
