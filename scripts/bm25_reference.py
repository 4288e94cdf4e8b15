#!/usr/bin/env python3
"""A reference BM25 on a BEIR directory, to compare `folio eval --mode
lexical` with: the bm25s library (Lucene's BM25: k1 1.2, b 0.75, idf
ln(1 + (N - df + 0.5) / (df + 0.5)), exact document lengths, repeated query
terms counted), English stop words and the Snowball English stemmer, over
"title text" of each document. Prints nDCG@10, Recall@100 and MRR@10 as
`folio eval` computes them.

    python -m venv /tmp/ref && /tmp/ref/bin/pip install bm25s==0.3.16 PyStemmer numpy
    /tmp/ref/bin/python scripts/bm25_reference.py ../shared/datasets/scifact-train [--split train]

In another language (`--language de`): that language's Snowball stemmer and
bm25s's stop words for it; Chinese (`zh`) segmented with jieba (`pip install
jieba`) and bm25s's Chinese stop words; Japanese (`ja`) as pairs of
characters (no stemmer; the portable reference); Arabic with its stemmer.

With `--against RUN` (a `folio eval --run` file), folio's run and the
reference are compared query by query instead: the mean difference, queries
won and lost, a paired randomisation test's p and a 95 % bootstrap interval
(`paired`), so a difference of a few thousandths can be told from the
queries' spread.
"""

import argparse
import json
import math
import random
import re
from pathlib import Path


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def read_qrels(directory, split):
    qrels = {}
    path = Path(directory) / "qrels" / f"{split}.tsv"
    with open(path) as f:
        for i, line in enumerate(f):
            parts = line.rstrip("\n").split("\t")
            if i == 0 and not parts[-1].lstrip("-").isdigit():
                continue  # header
            query, doc, score = parts[0], parts[1], int(parts[2])
            if score > 0:
                qrels.setdefault(query, {})[doc] = score
    return qrels


def ranked(scores):
    """A run's {doc: score} as doc ids, best first (ties by id)."""
    return [d for d, _ in sorted(scores.items(), key=lambda x: (-x[1], x[0]))]


def paired(ours, theirs, rounds=20000, seed=7):
    """Per-query scores of two systems on the same queries compared: the
    mean difference (ours − theirs), queries won and lost, a two-sided
    paired randomisation test's p (each query's pair of scores swapped at
    random, `rounds` times) and a 95 % bootstrap interval of the mean
    difference. Whether a difference of a few thousandths is more than the
    queries' own spread."""
    differences = [a - b for a, b in zip(ours, theirs)]
    n = len(differences)
    observed = sum(differences) / n
    rng = random.Random(seed)
    extreme = 0
    for _ in range(rounds):
        total = sum(d if rng.random() < 0.5 else -d for d in differences)
        if abs(total / n) >= abs(observed) - 1e-12:
            extreme += 1
    means = sorted(sum(rng.choice(differences) for _ in range(n)) / n for _ in range(2000))
    return {"mean_difference": round(observed, 4),
            "won": sum(d > 0 for d in differences), "lost": sum(d < 0 for d in differences),
            "p_randomisation": round((extreme + 1) / (rounds + 1), 4),
            "interval_95": [round(means[49], 4), round(means[1949], 4)]}


def default_split(directory):
    return sorted(p.stem for p in (Path(directory) / "qrels").glob("*.tsv"))[0]


def ndcg(ranked, judged, k=10):
    dcg = sum(judged.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranked[:k]))
    ideal = sorted(judged.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


SNOWBALL = {"en": "english", "de": "german", "fr": "french", "es": "spanish", "ru": "russian",
            "ar": "arabic", "it": "italian", "pt": "portuguese", "nl": "dutch", "sv": "swedish"}


def tokenizer(language):
    """Texts to token lists the way the reference reads `language`."""
    import bm25s
    import Stemmer

    if language == "zh":
        import jieba
        jieba.setLogLevel(60)
        stop = set(bm25s.stopwords.STOPWORDS_CHINESE)
        return lambda texts: [[w for w in (t.lower() for t in jieba.lcut(x)) if w.strip() and re.match(r"\w", w) and w not in stop] for x in texts]
    if language == "ja":
        def pairs(x):
            out = []
            for run in re.findall(r"\w+", x.lower()):
                if re.search(r"[\u3040-\u30ff\u3400-\u9fff]", run):
                    out += [run[i:i + 2] for i in range(max(1, len(run) - 1))]
                elif len(run) > 1:
                    out.append(run)
            return out
        return lambda texts: [pairs(x) for x in texts]
    stemmer = Stemmer.Stemmer(SNOWBALL[language])
    stopwords = language if language in ("en", "de", "nl", "fr", "es", "pt", "it", "ru", "sv", "no") else None

    def tokenize(texts):
        ids = bm25s.tokenize(texts, stopwords=stopwords, stemmer=stemmer, show_progress=False, return_ids=False)
        return ids
    return tokenize


def unmarked(text):
    """`text` without combining marks (Arabic diacritics): Python's `\\w`
    does not match them, so a tokenizer would split words at them."""
    import unicodedata
    return "".join(c for c in text if unicodedata.category(c) != "Mn")


def retrieve(directory, split=None, k1=1.2, b=0.75, k=100, only=None, language="en", strip_marks=False):
    """The reference BM25's top `k` for every judged query of a BEIR
    directory (or those `only` allows): (split, qrels, [(query, [(doc,
    score)])]) with zero scores left out."""
    import bm25s  # only the reference retrieval needs them
    import Stemmer

    directory = Path(directory)
    split = split or default_split(directory)
    corpus = read_jsonl(directory / "corpus.jsonl")
    queries = {q["_id"]: q["text"] for q in read_jsonl(directory / "queries.jsonl")}
    qrels = read_qrels(directory, split)
    ids = [d["_id"] for d in corpus]
    texts = [(d.get("title") or "") + " " + d["text"] for d in corpus]
    retriever = bm25s.BM25(k1=k1, b=b, method="lucene")
    judged = [q for q in qrels if q in queries and (only is None or q in only)]
    if language == "en":
        stemmer = Stemmer.Stemmer("english")
        retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
        tokens = bm25s.tokenize([queries[q] for q in judged], stopwords="en", stemmer=stemmer, show_progress=False)
        results, scores = retriever.retrieve(tokens, k=k, show_progress=False)
    else:
        tokenize = tokenizer(language)
        if strip_marks:
            texts = [unmarked(t) for t in texts]
        retriever.index(tokenize(texts), show_progress=False)
        tokens = [[t for t in q if t in retriever.vocab_dict] for q in tokenize([queries[q] for q in judged])]
        # A query with no term of the corpus finds nothing.
        empty = [row for row, q in enumerate(tokens) if not q]
        some = next(iter(retriever.vocab_dict))
        tokens = [q or [some] for q in tokens]
        results, scores = retriever.retrieve(tokens, k=min(k, len(ids)), show_progress=False)
        scores[empty] = 0
    ranked = [
        (query, [(ids[j], float(s)) for j, s in zip(results[row], scores[row]) if s > 0])
        for row, query in enumerate(judged)
    ]
    return split, qrels, ranked


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory")
    parser.add_argument("--split", default=None, help="qrels/<split>.tsv (default: the only one)")
    parser.add_argument("--k1", type=float, default=1.2)
    parser.add_argument("--b", type=float, default=0.75)
    parser.add_argument("--language", default="en", help="en, de, fr, es, ru, ar, zh, ja, …")
    parser.add_argument("--strip-marks", action="store_true", help="remove combining marks first")
    parser.add_argument("--against", metavar="RUN",
                        help="a --run file of folio eval: its nDCG@10 on the same queries, compared query by query (paired)")
    args = parser.parse_args()
    split, qrels, ranked_queries = retrieve(args.directory, args.split, args.k1, args.b,
                                            language=args.language, strip_marks=args.strip_marks)
    if args.against:
        run = json.load(open(args.against))
        ranked_queries = [(q, hits) for q, hits in ranked_queries if q in run]
        ours = [ndcg(ranked(run[q]), qrels[q]) for q, _ in ranked_queries]
        theirs = [ndcg([d for d, _ in hits], qrels[q]) for q, hits in ranked_queries]
        print(json.dumps({"split": split, "queries": len(ours), "ndcg_at_10_run": sum(ours) / len(ours),
                          "ndcg_at_10_reference": sum(theirs) / len(theirs), **paired(ours, theirs)}, indent=1))
        return
    totals = {"ndcg_at_10": 0.0, "recall_at_100": 0.0, "mrr_at_10": 0.0}
    for query, hits in ranked_queries:
        docs = [doc for doc, _ in hits]
        judged = qrels[query]
        totals["ndcg_at_10"] += ndcg(docs, judged)
        totals["recall_at_100"] += len(set(docs[:100]) & set(judged)) / len(judged)
        totals["mrr_at_10"] += next((1 / (i + 1) for i, d in enumerate(docs[:10]) if d in judged), 0.0)
    n = len(ranked_queries)
    documents = sum(1 for _ in open(Path(args.directory) / "corpus.jsonl") if _.strip())
    print(json.dumps({"split": split, "documents": documents, "queries": n,
                      **{k: v / n for k, v in totals.items()}}, indent=1))


if __name__ == "__main__":
    main()
