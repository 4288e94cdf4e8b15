#!/usr/bin/env python3
"""How much of the exact top 10 each form of a vector index's codes keeps
among the first N of an exhaustive scan by those codes: the question behind
the vector index's codes (i8 below 250,000 vectors, 4-bit above).

Vectors are drawn as `folio bench search` draws them: 200 unit centroids,
each vector a centroid plus 0.08 times approximate normal noise (a sum of
four uniforms less two), normalised; 100 queries the same way. Codes are
scaled per vector (largest component at the top level) as the store
scales them. "asymmetric" scores the f32 query against the codes (how the
store rescores candidates), "symmetric" the query's own codes against them
(how the graph's walk compares vectors).

usage: scripts/code_recall.py [--vectors 200000] [--dim 384] [--seed 1]
needs numpy (the set-up's virtual environment has it).
"""

import argparse

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vectors", type=int, default=200_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    n, d, clusters = args.vectors, args.dim, 200

    def unit(a):
        return a / np.linalg.norm(a, axis=1, keepdims=True)

    def noise(*shape):
        return rng.uniform(0, 1, shape + (4,)).sum(-1) - 2

    centroids = unit(noise(clusters, d)).astype(np.float32)
    vectors = unit(centroids[rng.integers(0, clusters, n)] + 0.08 * noise(n, d)).astype(np.float32)
    queries = unit(centroids[rng.integers(0, clusters, 100)] + 0.08 * noise(100, d)).astype(np.float32)
    truth = np.argsort(-(vectors @ queries.T), axis=0)[:10].T
    firsts = (30, 40, 60, 100, 330)

    def kept(scores):
        order = np.argsort(-scores, axis=0).T
        return {f: round(float(np.mean([len(set(truth[q]) & set(order[q, :f])) / 10 for q in range(100)])), 3)
                for f in firsts}

    def levels(a, top):
        return np.round(a / np.abs(a).max(axis=1, keepdims=True) * top)

    rotation = np.linalg.qr(rng.standard_normal((d, d)))[0].astype(np.float32)
    rows = [
        ("i8, asymmetric", unit(levels(vectors, 127)) @ queries.T),
        ("4-bit, asymmetric", unit(levels(vectors, 7)) @ queries.T),
        ("4-bit, symmetric", unit(levels(vectors, 7)) @ unit(levels(queries, 7)).T),
        ("binary (signs), asymmetric", np.sign(vectors) @ queries.T),
        (f"i8 of a random projection to {d // 2} dimensions",
         unit(levels(vectors @ rotation[:, : d // 2], 127)) @ unit(queries @ rotation[:, : d // 2]).T),
    ]
    print(f"{n} vectors of {d} dimensions; share of the exact top 10 among the first N by each code")
    print(f"{'codes':<48}" + "".join(f"{f:>8}" for f in firsts))
    for name, scores in rows:
        found = kept(scores)
        print(f"{name:<48}" + "".join(f"{found[f]:>8.3f}" for f in firsts))


if __name__ == "__main__":
    main()
