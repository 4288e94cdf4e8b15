#!/usr/bin/env python3
"""The reference BM25 of a BEIR directory (scripts/bm25_reference.py's
tokenisation, k1 1.2, b 0.75) scored three ways, to see what tantivy's
one-byte lengths do to a ranking: with exact lengths; with each length
rounded down as tantivy stores it and the average of the exact lengths
(folio until 2026-12-04); and with the rounded lengths and their own
average (folio since). Prints nDCG@10 of each.

The rounding table is read from tantivy's source in the cargo registry
(`fieldnorm/code.rs`), where folio's build put it.

    python3 scripts/bm25_rounded_lengths.py /tmp/fl/ru --language ru
"""

import argparse
import bisect
import glob
import math
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bm25_reference import default_split, ndcg, read_jsonl, read_qrels, tokenizer  # noqa: E402


def rounding_table():
    sources = sorted(glob.glob(str(Path.home() / ".cargo/registry/src/*/tantivy-0.*/src/fieldnorm/code.rs")))
    if not sources:
        sys.exit("tantivy's source is not in the cargo registry: build folio first")
    body = open(sources[-1]).read().split("FIELD_NORMS_TABLE: [u32; 256] = [")[1].split("];")[0]
    return [int(x.replace("_", "")) for x in re.findall(r"[\d_]+", body)]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory")
    parser.add_argument("--language", default="en")
    args = parser.parse_args()
    table = rounding_table()
    directory = Path(args.directory)
    corpus = read_jsonl(directory / "corpus.jsonl")
    queries = {q["_id"]: q["text"] for q in read_jsonl(directory / "queries.jsonl")}
    qrels = read_qrels(directory, default_split(directory))
    ids = [d["_id"] for d in corpus]
    tokenize = tokenizer(args.language)
    documents = tokenize([(d.get("title") or "") + " " + d["text"] for d in corpus])
    frequencies = [Counter(d) for d in documents]
    exact = [len(d) for d in documents]
    rounded = [table[bisect.bisect_right(table, n) - 1] for n in exact]
    n = len(documents)
    df = Counter(t for f in frequencies for t in f)
    postings = defaultdict(list)
    for i, f in enumerate(frequencies):
        for term, tf in f.items():
            postings[term].append((i, tf))
    judged = [q for q in qrels if q in queries]
    query_terms = tokenize([queries[q] for q in judged])

    def score(lengths, average, k1=1.2, b=0.75):
        total = 0.0
        for query, terms in zip(judged, query_terms):
            scores = defaultdict(float)
            for term in terms:
                if term not in df:
                    continue
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                for i, tf in postings[term]:
                    scores[i] += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[i] / average))
            ranked = sorted(scores, key=lambda i: (-scores[i], i))[:10]
            total += ndcg([ids[i] for i in ranked], qrels[query])
        return round(total / len(judged), 4)

    print({"exact": score(exact, sum(exact) / n),
           "rounded_exact_average": score(rounded, sum(exact) / n),
           "rounded_rounded_average": score(rounded, sum(rounded) / n)})


if __name__ == "__main__":
    main()
