#!/usr/bin/env python3
"""Writes a small BEIR collection cut from a large one: a seeded sample of
queries that have relevance judgements, every document judged for them,
and seeded distractors up to a corpus size. For measurements too slow to
run on a whole collection (an encoder under CPU emulation); compare runs on
the same cut, never a cut against the whole collection.

    python3 scripts/beir_subset.py ../shared/datasets/scifact-train /tmp/scifact-cut --queries 150 --docs 500
    folio eval /tmp/scifact-cut --mode dense
"""

import argparse
import json
import random
from pathlib import Path


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", help="a BEIR directory (corpus.jsonl, queries.jsonl, qrels/*.tsv)")
    parser.add_argument("target", help="the directory to write")
    parser.add_argument("--queries", type=int, default=150)
    parser.add_argument("--docs", type=int, default=500, help="corpus size, judged documents included")
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    source, target = Path(args.source), Path(args.target)
    qrels_files = sorted((source / "qrels").glob("*.tsv"))
    if len(qrels_files) != 1:
        raise SystemExit(f"expected one qrels file in {source / 'qrels'}, found {len(qrels_files)}")
    judged = {}
    with open(qrels_files[0]) as f:
        header = f.readline().split("\t")
        if header[0] != "query-id":
            raise SystemExit(f"{qrels_files[0]}: expected a query-id header")
        for line in f:
            qid, did, score = line.rstrip("\n").split("\t")
            judged.setdefault(qid, []).append((did, score))
    rng = random.Random(args.seed)
    chosen = set(rng.sample(sorted(judged), min(args.queries, len(judged))))
    needed = {did for qid in chosen for did, _ in judged[qid]}
    with open(source / "corpus.jsonl") as f:
        corpus = [json.loads(line) for line in f if line.strip()]
    others = [d["_id"] for d in corpus if d["_id"] not in needed]
    room = max(0, args.docs - len(needed))
    keep = needed | set(rng.sample(others, min(room, len(others))))
    (target / "qrels").mkdir(parents=True, exist_ok=True)
    with open(target / "corpus.jsonl", "w") as f:
        for d in corpus:
            if d["_id"] in keep:
                f.write(json.dumps(d) + "\n")
    with open(source / "queries.jsonl") as f, open(target / "queries.jsonl", "w") as out:
        for line in f:
            if line.strip() and json.loads(line)["_id"] in chosen:
                out.write(line if line.endswith("\n") else line + "\n")
    with open(target / "qrels" / qrels_files[0].name, "w") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for qid in sorted(chosen):
            for did, score in judged[qid]:
                f.write(f"{qid}\t{did}\t{score}\n")
    print(f"{len(chosen)} queries, {len(keep)} documents ({len(needed)} judged) in {target}")


if __name__ == "__main__":
    main()
