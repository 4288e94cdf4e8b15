"""Ingest throughput against the encoder's own: `folio ingest` of a folder of
Markdown files made from a BEIR corpus, and `folio bench encoder` on the same
documents, back to back, with the same model and threads.

    python3 scripts/bench_ingest.py --bin target/release/folio \
        --corpus ../shared/datasets/scifact-train/corpus.jsonl --docs 1000 [--runs 2]

Prints JSON: per run, ingest seconds, chunks, chunk tokens (as `folio inspect`
counts them), tokens/s and chunks/s; the encoder's tokens/s on the same
documents (ONNX Runtime); and their ratio. The encoder benchmark cuts each
whole document to the window, ingest encodes chunks with their context
header: the ratio compares tokens encoded per second.
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path


def make_folder(corpus, docs, out):
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(corpus) as f:
        for line in f:
            d = json.loads(line)
            title = d.get("title") or d["_id"]
            (out / f"{d['_id']}.md").write_text(f"# {title}\n\n{d['text']}\n")
            n += 1
            if n >= docs:
                break
    return n


def run(cmd, env):
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: {done.stderr}")
    return done.stdout


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default="target/release/folio")
    p.add_argument("--corpus", default="../shared/datasets/scifact-train/corpus.jsonl")
    p.add_argument("--docs", type=int, default=1000)
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    env = dict(os.environ, FOLIO_THREADS=str(args.threads), FOLIO_BACKEND="onnx")
    work = Path(tempfile.mkdtemp(prefix="folio-bench-ingest-"))
    try:
        folder = work / "docs"
        count = make_folder(args.corpus, args.docs, folder)
        runs = []
        for i in range(args.runs):
            data = work / f"data{i}"
            started = time.monotonic()
            run([args.bin, "--data-dir", str(data), "ingest", str(folder), "--library", "bench"], env)
            seconds = time.monotonic() - started
            info = json.loads(run([args.bin, "--data-dir", str(data), "--json", "inspect", "bench"], env))
            encoder = json.loads(run([args.bin, "bench", "encoder", args.corpus, "--docs", str(count),
                                      "--threads", str(args.threads), "--backends", "onnx"], env))
            ingest_tps = info["total_tokens"] / seconds
            encoder_tps = encoder["onnxruntime"]["tokens_per_s"]
            runs.append({
                "ingest_seconds": round(seconds, 2),
                "chunks": info["info"]["chunk_count"],
                "chunk_tokens": info["total_tokens"],
                "ingest_tokens_per_s": round(ingest_tps),
                "ingest_chunks_per_s": round(info["info"]["chunk_count"] / seconds, 1),
                "encoder_tokens_per_s": round(encoder_tps),
                "ratio": round(ingest_tps / encoder_tps, 3),
            })
        print(json.dumps({"documents": count, "threads": args.threads, "runs": runs}, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
