#!/usr/bin/env python3
"""The plain fusions a hybrid retriever must beat, on a BEIR directory: the
reference BM25 (bm25s, as scripts/bm25_reference.py) and folio's dense
ranking (`folio eval --mode dense --json`, all-MiniLM-L6-v2 with masked mean
pooling), each cut to its top 100 documents, fused per document by a 50/50
min-max sum (a document missing from one list scores 0 there) and by RRF
(k 60). Prints nDCG@10 of each input and each fusion.

    folio eval DIR --mode dense --json > /tmp/dense.json
    /tmp/ref/bin/python scripts/fusion_reference.py DIR /tmp/dense.json
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bm25_reference import ndcg, read_jsonl, read_qrels  # noqa: E402

import bm25s  # noqa: E402
import Stemmer  # noqa: E402


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
    parser.add_argument("dense_run", help="folio eval --mode dense --json output")
    parser.add_argument("--split", default=None)
    args = parser.parse_args()
    directory = Path(args.directory)
    split = args.split or sorted(p.stem for p in (directory / "qrels").glob("*.tsv"))[0]
    corpus = read_jsonl(directory / "corpus.jsonl")
    queries = {q["_id"]: q["text"] for q in read_jsonl(directory / "queries.jsonl")}
    qrels = read_qrels(directory, split)
    dense_run = json.load(open(args.dense_run))["run"]
    stemmer = Stemmer.Stemmer("english")
    ids = [d["_id"] for d in corpus]
    texts = [(d.get("title") or "") + " " + d["text"] for d in corpus]
    retriever = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    judged = [q for q in qrels if q in queries and q in dense_run]
    tokens = bm25s.tokenize([queries[q] for q in judged], stopwords="en", stemmer=stemmer, show_progress=False)
    results, scores = retriever.retrieve(tokens, k=100, show_progress=False)
    totals = {"bm25": 0.0, "dense": 0.0, "minmax_50_50": 0.0, "rrf_60": 0.0}
    for row, query in enumerate(judged):
        lexical = {ids[j]: float(s) for j, s in zip(results[row], scores[row]) if s > 0}
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
    n = len(judged)
    print(json.dumps({"split": split, "queries": n, **{f"ndcg_at_10_{k}": v / n for k, v in totals.items()}}, indent=1))


if __name__ == "__main__":
    main()
