#!/usr/bin/env python3
"""The plain fusions a hybrid retriever must beat, on a BEIR directory: the
reference BM25 (bm25s, as scripts/bm25_reference.py) and folio's dense
ranking (`folio eval --mode dense --run FILE`, all-MiniLM-L6-v2 with masked mean
pooling), each cut to its top 100 documents, fused per document by a 50/50
min-max sum (a document missing from one list scores 0 there) and by RRF
(k 60). Prints nDCG@10 of each input and each fusion.

    folio eval DIR --mode dense --run /tmp/dense-run.json
    /tmp/ref/bin/python scripts/fusion_reference.py DIR /tmp/dense-run.json
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bm25_reference import ndcg, retrieve  # noqa: E402


def minmax(scores):
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    span = hi - lo
    return {d: (s - lo) / span if span > 0 else 1.0 for d, s in scores.items()}


def ranked(scores):
    return [d for d, _ in sorted(scores.items(), key=lambda x: (-x[1], x[0]))]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory")
    parser.add_argument("dense_run", help="the --run file of folio eval --mode dense")
    parser.add_argument("--split", default=None)
    args = parser.parse_args()
    dense_run = json.load(open(args.dense_run))
    split, qrels, ranked_queries = retrieve(args.directory, args.split, only=dense_run)
    totals = {"bm25": 0.0, "dense": 0.0, "minmax_50_50": 0.0, "rrf_60": 0.0}
    for query, hits in ranked_queries:
        lexical = dict(hits)
        dense = dict(sorted(dense_run[query].items(), key=lambda x: -x[1])[:100])
        ln, dn = minmax(lexical), minmax(dense)
        fused = {d: 0.5 * ln.get(d, 0.0) + 0.5 * dn.get(d, 0.0) for d in set(ln) | set(dn)}
        lr = {d: i + 1 for i, d in enumerate(ranked(lexical))}
        dr = {d: i + 1 for i, d in enumerate(ranked(dense))}
        rrf = {d: (1 / (60 + lr[d]) if d in lr else 0) + (1 / (60 + dr[d]) if d in dr else 0) for d in set(lr) | set(dr)}
        judgements = qrels[query]
        totals["bm25"] += ndcg(ranked(lexical), judgements)
        totals["dense"] += ndcg(ranked(dense), judgements)
        totals["minmax_50_50"] += ndcg(ranked(fused), judgements)
        totals["rrf_60"] += ndcg(ranked(rrf), judgements)
    n = len(ranked_queries)
    print(json.dumps({"split": split, "queries": n, **{f"ndcg_at_10_{k}": v / n for k, v in totals.items()}}, indent=1))


if __name__ == "__main__":
    main()
