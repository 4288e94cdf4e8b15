"""Ingest throughput against the encoder's own: `folio ingest` of a folder of
Markdown files made from a BEIR corpus, and `folio bench encoder` on the same
documents, back to back, with the same model and threads.

    python3 scripts/bench_ingest.py --bin target/release/folio \
        --corpus ../shared/datasets/scifact-train/corpus.jsonl --docs 1000 [--runs 2] \
        [--precision int8] [--store-url postgres://...] [--format pdf]

Prints JSON: per run, ingest seconds and peak resident memory, chunks, the
tokens the encoder ran (each chunk's tokens as `folio inspect` counts them,
context header included, plus the model's two special tokens, as the encoder
benchmark counts its sequences), tokens/s and chunks/s; the encoder's tokens/s
on the same documents (ONNX Runtime, same precision and threads), measured
right after; and their ratio. The encoder benchmark cuts each whole document
to the window, ingest encodes chunks with their context header: the ratio
compares tokens through the network per second.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "mcp"))
from pdfs import pdf  # noqa: E402

# [CLS] and [SEP]: what the encoder runs beyond a chunk's counted tokens.
SPECIAL_TOKENS = 2


def pdf_of_lines(lines, per_page=40):
    """A PDF of Helvetica text lines (ASCII), 40 lines a page: what a word
    processor's plain export holds."""
    return pdf(["\n".join(lines[i:i + per_page]) for i in range(0, len(lines), per_page)] or [""])


def make_folder(corpus, docs, out, form):
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(corpus) as f:
        for line in f:
            d = json.loads(line)
            title = d.get("title") or d["_id"]
            if form == "pdf":
                text = (title + "\n\n" + d["text"]).encode("ascii", "replace").decode()
                lines = [w for para in text.split("\n") for w in textwrap.wrap(para, 90) or [""]]
                (out / f"{d['_id']}.pdf").write_bytes(pdf_of_lines(lines))
            else:
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


def peak_rss_mb(cmd, env):
    """Runs cmd and returns its own peak resident memory in MB (wait4)."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)}: {err.read().decode(errors='replace')}")
    return round(usage.ru_maxrss / 1024, 1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default="target/release/folio")
    p.add_argument("--corpus", default="../shared/datasets/scifact-train/corpus.jsonl")
    p.add_argument("--docs", type=int, default=1000)
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--precision", default="fp32", choices=["fp32", "int8"])
    p.add_argument("--store-url", help="a PostgreSQL server instead of a data directory")
    p.add_argument("--format", default="md", choices=["md", "pdf"],
                   help="the files made of the corpus: Markdown, or PDFs of its text")
    args = p.parse_args()
    env = dict(os.environ, FOLIO_THREADS=str(args.threads), FOLIO_BACKEND="onnx",
               FOLIO_MODEL_PRECISION=args.precision)
    work = Path(tempfile.mkdtemp(prefix="folio-bench-ingest-"))
    try:
        folder = work / "docs"
        count = make_folder(args.corpus, args.docs, folder, args.format)
        runs = []
        for i in range(args.runs):
            library = f"bench-{os.getpid()}-{i}"
            store = (["--store-url", args.store_url] if args.store_url
                     else ["--data-dir", str(work / f"data{i}")])
            started = time.monotonic()
            peak = peak_rss_mb([args.bin, *store, "ingest", str(folder), "--library", library], env)
            seconds = time.monotonic() - started
            info = json.loads(run([args.bin, *store, "--json", "inspect", library], env))
            if args.store_url:
                run([args.bin, *store, "rm", "--library", library], env)
            encoder = json.loads(run([args.bin, "bench", "encoder", args.corpus, "--docs", str(count),
                                      "--threads", str(args.threads), "--backends", "onnx"], env))
            chunks = info["info"]["chunk_count"]
            encoded = info["total_tokens"] + SPECIAL_TOKENS * chunks
            ingest_tps = encoded / seconds
            encoder_tps = encoder["onnxruntime"]["tokens_per_s"]
            runs.append({
                "ingest_seconds": round(seconds, 2),
                "peak_rss_mb": peak,
                "chunks": chunks,
                "chunk_tokens": info["total_tokens"],
                "encoded_tokens": encoded,
                "ingest_tokens_per_s": round(ingest_tps),
                "ingest_chunks_per_s": round(chunks / seconds, 1),
                "encoder_tokens_per_s": round(encoder_tps),
                "ratio": round(ingest_tps / encoder_tps, 3),
            })
        print(json.dumps({"documents": count, "format": args.format, "threads": args.threads,
                          "precision": args.precision,
                          "store": "postgresql" if args.store_url else "embedded", "runs": runs}, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
