#!/usr/bin/env python3
"""Two `folio eval --run` files compared query by query: nDCG@10 of each on
the queries both judged, the ratio of the first to the second with a 95 %
bootstrap interval, and the paired randomisation test of
`bm25_reference.paired`. The two runs may be of different collections
that ask the same questions (ids), as a cross-language set and its
same-language twin are (`scripts/multilingual_collections.py`: `ddtp-de-en`
asks `ddtp-de`'s questions of the English descriptions).

    folio --data-dir /tmp/a eval /tmp/fl/ddtp-de-en --json --run /tmp/cross.json
    folio --data-dir /tmp/b eval /tmp/fl/ddtp-de --json --run /tmp/same.json
    python3 scripts/paired_runs.py /tmp/fl/ddtp-de-en /tmp/cross.json /tmp/fl/ddtp-de /tmp/same.json
"""

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bm25_reference import default_split, ndcg, paired, ranked, read_qrels  # noqa: E402


def per_query(directory, run_path):
    qrels = read_qrels(directory, default_split(directory))
    run = json.load(open(run_path))
    return {q: ndcg(ranked(run.get(q, {})), judged) for q, judged in qrels.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("first_directory")
    parser.add_argument("first_run")
    parser.add_argument("second_directory")
    parser.add_argument("second_run")
    args = parser.parse_args()
    first = per_query(args.first_directory, args.first_run)
    second = per_query(args.second_directory, args.second_run)
    queries = sorted(set(first) & set(second))
    a = [first[q] for q in queries]
    b = [second[q] for q in queries]
    rng = random.Random(11)
    ratios = []
    for _ in range(2000):
        sample = [rng.randrange(len(queries)) for _ in queries]
        below = sum(b[i] for i in sample)
        if below > 0:
            ratios.append(sum(a[i] for i in sample) / below)
    ratios.sort()
    print(json.dumps({"queries": len(queries), "ndcg_at_10_first": sum(a) / len(a),
                      "ndcg_at_10_second": sum(b) / len(b), "ratio": round(sum(a) / sum(b), 4),
                      "ratio_interval_95": [round(ratios[int(0.025 * len(ratios))], 4),
                                            round(ratios[int(0.975 * len(ratios)) - 1], 4)],
                      **paired(a, b)}, indent=1))


if __name__ == "__main__":
    main()
