#!/usr/bin/env python3
"""Builds a known-item retrieval collection with long, natural-language
queries from a BEIR corpus: for a seeded sample of documents with long
abstracts, three consecutive sentences become the query and are removed
from the document, which is then the query's one relevant document. The
rest of the corpus is kept as distractors. Deterministic for a seed.

    python3 scripts/known_item_collection.py ../shared/datasets/scifact-train /tmp/scifact-known-item
    folio eval /tmp/scifact-known-item --mode lexical
"""

import argparse
import json
import random
import re
from pathlib import Path

SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", help="a BEIR directory (corpus.jsonl)")
    parser.add_argument("target", help="the directory to write")
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    with open(Path(args.source) / "corpus.jsonl") as f:
        corpus = [json.loads(line) for line in f if line.strip()]
    candidates = [i for i, d in enumerate(corpus) if len(SENTENCE.split(d["text"])) >= 8]
    chosen = sorted(random.Random(args.seed).sample(candidates, min(args.queries, len(candidates))))
    queries, qrels = [], []
    for n, i in enumerate(chosen):
        sentences = SENTENCE.split(corpus[i]["text"])
        start = 2 + n % (len(sentences) - 6)
        queries.append({"_id": f"q{n}", "text": " ".join(sentences[start:start + 3])})
        corpus[i] = {**corpus[i], "text": " ".join(sentences[:start] + sentences[start + 3:])}
        qrels.append((f"q{n}", corpus[i]["_id"]))
    target = Path(args.target)
    (target / "qrels").mkdir(parents=True, exist_ok=True)
    with open(target / "corpus.jsonl", "w") as f:
        for d in corpus:
            f.write(json.dumps(d) + "\n")
    with open(target / "queries.jsonl", "w") as f:
        for q in queries:
            f.write(json.dumps(q) + "\n")
    with open(target / "qrels" / "test.tsv", "w") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for q, d in qrels:
            f.write(f"{q}\t{d}\t1\n")
    words = sum(len(q["text"].split()) for q in queries) / len(queries)
    print(f"{len(queries)} queries (mean {words:.0f} words), {len(corpus)} documents in {target}")


if __name__ == "__main__":
    main()
