#!/usr/bin/env python3
"""The plain fusions a hybrid retriever must beat, on a BEIR directory: a
lexical run — the reference BM25 (bm25s, as scripts/bm25_reference.py), or
with --lexical-run folio's own (`folio eval --mode lexical --run FILE`) —
and folio's dense run (`folio eval --mode dense --run FILE`), each cut to
its top `--depth` documents (100, the depth of folio's served search), fused
per document by a 50/50 min-max sum (a document missing from one list
scores 0 there) and by RRF (k 60). Prints nDCG@10 of each input, each
fusion and, with --hybrid-run, of folio's served hybrid
(`folio eval --run FILE`) on the same queries, with the served hybrid
compared to the min-max fusion query by query (`bm25_reference.paired`).

    folio eval DIR --mode dense --run /tmp/dense-run.json
    folio eval DIR --mode lexical --run /tmp/lexical-run.json
    folio eval DIR --run /tmp/hybrid-run.json
    python scripts/fusion_reference.py DIR /tmp/dense-run.json \
        --lexical-run /tmp/lexical-run.json --hybrid-run /tmp/hybrid-run.json
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bm25_reference import default_split, ndcg, paired, ranked, read_qrels, retrieve  # noqa: E402


def minmax(scores):
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    span = hi - lo
    return {d: (s - lo) / span if span > 0 else 1.0 for d, s in scores.items()}


def top(run, depth):
    return dict(sorted(run.items(), key=lambda x: (-x[1], x[0]))[:depth])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory")
    parser.add_argument("dense_run", help="the --run file of folio eval --mode dense")
    parser.add_argument("--lexical-run", help="the --run file of folio eval --mode lexical (default: the reference BM25)")
    parser.add_argument("--hybrid-run", help="the --run file of folio eval (the served hybrid), to score beside")
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--split", default=None)
    parser.add_argument("--language", default="en", help="the reference BM25's language (bm25_reference.py)")
    parser.add_argument("--strip-marks", action="store_true", help="the reference reads text without combining marks")
    args = parser.parse_args()
    dense_run = json.load(open(args.dense_run))
    if args.lexical_run:
        lexical_run = json.load(open(args.lexical_run))
        split = args.split or default_split(args.directory)
        qrels = read_qrels(args.directory, split)
        ranked_queries = [(q, list(lexical_run.get(q, {}).items())) for q in dense_run if q in qrels]
        lexical_name = "folio_lexical"
    else:
        split, qrels, ranked_queries = retrieve(args.directory, args.split, k=args.depth, only=dense_run,
                                                language=args.language, strip_marks=args.strip_marks)
        lexical_name = "bm25"
    hybrid_run = json.load(open(args.hybrid_run)) if args.hybrid_run else None
    totals = {lexical_name: 0.0, "dense": 0.0, "minmax_50_50": 0.0, "rrf_60": 0.0}
    if hybrid_run is not None:
        totals["served_hybrid"] = 0.0
    served, plain = [], []
    for query, hits in ranked_queries:
        lexical = top(dict(hits), args.depth)
        dense = top(dense_run[query], args.depth)
        ln, dn = minmax(lexical), minmax(dense)
        fused = {d: 0.5 * ln.get(d, 0.0) + 0.5 * dn.get(d, 0.0) for d in set(ln) | set(dn)}
        lr = {d: i + 1 for i, d in enumerate(ranked(lexical))}
        dr = {d: i + 1 for i, d in enumerate(ranked(dense))}
        rrf = {d: (1 / (60 + lr[d]) if d in lr else 0) + (1 / (60 + dr[d]) if d in dr else 0) for d in set(lr) | set(dr)}
        judgements = qrels[query]
        totals[lexical_name] += ndcg(ranked(lexical), judgements)
        totals["dense"] += ndcg(ranked(dense), judgements)
        totals["minmax_50_50"] += ndcg(ranked(fused), judgements)
        totals["rrf_60"] += ndcg(ranked(rrf), judgements)
        if hybrid_run is not None:
            served.append(ndcg(ranked(hybrid_run.get(query, {})), judgements))
            plain.append(ndcg(ranked(fused), judgements))
            totals["served_hybrid"] += served[-1]
    n = len(ranked_queries)
    # The served hybrid against the 50/50 min-max fusion, query by query.
    comparison = {"served_against_minmax": paired(served, plain)} if served else {}
    print(json.dumps({"split": split, "queries": n, "depth": args.depth,
                      **{f"ndcg_at_10_{k}": v / n for k, v in totals.items()}, **comparison}, indent=1))


if __name__ == "__main__":
    main()
