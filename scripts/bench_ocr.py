#!/usr/bin/env python3
"""Measures OCR of scanned PDFs: N pages of generated prose (40 lines of
12 pt Helvetica each) are typeset, rendered to grey pixels at 300 dpi by
pdftoppm and stored as an image-only PDF; `folio ingest` reads it through
Tesseract. Reports seconds per page (the same pages as a born-digital PDF are
ingested first as the baseline, model load included in both) and word
recall: the share of the page words found in the OCR text.

usage: ~/.local/share/folio/setup-venv/bin/python scripts/bench_ocr.py BIN [--pages 20] [--dpi 300] [--runs 3]
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "mcp"))
from conftest import pdf, scanned_pdf  # noqa: E402
from speeches import TOPICS, speech_text  # noqa: E402


def page_text(rng):
    words = speech_text(rng.choice(list(TOPICS)), rng, 60).split()
    lines, line = [], []
    for word in words:
        if len(" ".join(line + [word])) > 80:
            lines.append(" ".join(line))
            line = []
            if len(lines) == 40:
                break
        line.append(word)
    return "\n".join(lines)


def normalised(text):
    return [w.strip(".,;:!?()\"'").lower() for w in text.split() if w.strip(".,;:!?()\"'")]


def ingest(binary, env, path, library):
    started = time.perf_counter()
    done = subprocess.run([binary, "ingest", str(path), "--library", library, "--force", "--json"],
                          env=env, capture_output=True, text=True, check=True)
    elapsed = time.perf_counter() - started
    return elapsed, json.loads(done.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--pages", type=int, default=20)
    ap.add_argument("--dpi", type=int, default=300)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()

    rng = random.Random(11)
    texts = [page_text(rng) for _ in range(a.pages)]
    work = Path(tempfile.mkdtemp(prefix="folio-bench-ocr-"))
    env = dict(os.environ, FOLIO_DATA_DIR=str(work / "data"), FOLIO_LOG="warn")
    digital = work / "digital.pdf"
    digital.write_bytes(pdf(texts))
    scan = work / "scan.pdf"
    scan.write_bytes(scanned_pdf(texts, dpi=a.dpi))
    print(f"{a.pages} pages, scan of {scan.stat().st_size / 1e6:.1f} MB at {a.dpi} dpi")

    baseline, ocr = [], []
    for _ in range(a.runs):
        baseline.append(ingest(a.binary, env, digital, "digital")[0])
        elapsed, report = ingest(a.binary, env, scan, "scans")
        ocr.append(elapsed)
    document_id = report["items"][0]["document_id"]
    document = json.loads(subprocess.run([a.binary, "get", document_id, "--text", "--json"], env=env,
                                         capture_output=True, text=True, check=True).stdout)
    read = set(normalised(document["text"]))
    expected = normalised("\n".join(texts))
    recall = sum(w in read for w in expected) / len(expected)
    b, o = statistics.median(baseline), statistics.median(ocr)
    print(f"born-digital ingest  median {b:6.2f} s ({a.runs} runs)")
    print(f"scanned ingest       median {o:6.2f} s ({a.runs} runs)")
    print(f"OCR per page         {(o - b) / a.pages:6.2f} s  ({a.pages / (o - b):.2f} pages/s, {os.cpu_count()} cores)")
    print(f"word recall          {recall:.4f}  (confidence {document['metadata']['ocr'].get('confidence')})")


if __name__ == "__main__":
    main()
