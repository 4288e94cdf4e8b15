#!/usr/bin/env python3
"""The hostile-file corpus of issue 15: a few hundred generated files —
every kind in tests/mcp/hostile.py at several depths and sizes, plus
truncated and byte-flipped copies of valid PDF, DOCX, EPUB, HTML, ODT,
ODS, RTF, XLSX, PPTX, EML and
Markdown files — each ingested by its own `folio ingest --json`. Prints the
counts by outcome (indexed, refused by error code, crashed, over time) and
the slowest files, as JSON. A crash or an overrun is a failure (exit 1).

usage: scripts/bench_hostile.py [--per-kind 6] [--mutants 200] [--timeout 30]
       (FOLIO_BIN selects the binary; default target/release/folio)"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

root = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(root / "tests/mcp"))
import hostile  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--per-kind", type=int, default=6, help="sizes of each generated kind")
parser.add_argument("--mutants", type=int, default=200, help="damaged copies of valid files")
parser.add_argument("--timeout", type=int, default=30, help="[limits] extract_timeout_secs")
parser.add_argument("--seed", type=int, default=15)
args = parser.parse_args()
binary = os.environ.get("FOLIO_BIN", str(root / "target/release/folio"))
rng = random.Random(args.seed)

SCALED = {
    "pdf_nested_array": lambda s: hostile.pdf_nested_array(10 ** (2 + s % 5)),
    "pdf_nested_dict": lambda s: hostile.pdf_nested_dict(10 ** (2 + s % 4)),
    "pdf_text_bomb": lambda s: hostile.pdf_text_bomb(40 * (1 + s % 4)),
    "pdf_image_bomb": lambda s: hostile.pdf_image_bomb(10_000 * (1 + s % 8)),
    "pdf_many_images": lambda s: hostile.pdf_many_images(10 ** (1 + s % 5)),
    "html_divs": lambda s: hostile.html_nested("div", 10 ** (2 + s % 5)),
    "html_unclosed_b": lambda s: hostile.html_nested("b", 10 ** (2 + s % 5), closed=False),
    "html_tables": lambda s: hostile.html_nested_tables(10 ** (1 + s % 4)),
    "markdown_quotes": lambda s: hostile.markdown_nested_quotes(10 ** (2 + s % 4)),
    "markdown_lists": lambda s: hostile.markdown_nested_lists(100 * (1 + s % 10)),
    "markdown_brackets": lambda s: hostile.markdown_brackets(10 ** (2 + s % 3)),
    "docx_deep": lambda s: hostile.docx_deep(10 ** (2 + s % 4)),
    "docx_bomb": lambda s: hostile.docx_bomb(100 * (1 + s % 6)),
    "docx_nested_zip": lambda s: hostile.docx_nested_zip(1 + 5 * s),
    "epub_deep": lambda s: hostile.epub_deep(10 ** (2 + s % 4)),
    "epub_deep_xml": lambda s: hostile.epub_deep_xml(10 ** (2 + s % 4)),
    "odt_deep": lambda s: hostile.odt_deep(10 ** (2 + s % 4)),
    "odt_bomb": lambda s: hostile.odt_bomb(100 * (1 + s % 6)),
    "odt_repeated": lambda s: hostile.odf_repeated_cells(),
    "ods_repeated": lambda s: hostile.odf_repeated_cells("application/vnd.oasis.opendocument.spreadsheet", "spreadsheet"),
    "rtf_deep": lambda s: hostile.rtf_deep(10 ** (2 + s % 5)),
    "rtf_bin": lambda s: hostile.rtf_bin(),
    "eml_nested": lambda s: hostile.eml_nested(10 ** (1 + s % 5)),
    "mbox_many": lambda s: hostile.mbox_many(10 ** (2 + s % 4)),
    "zip_nested": lambda s: hostile.zip_nested(1 + 4 * s),
    "zip_bomb": lambda s: hostile.zip_bomb(50 * (1 + s % 6)),
    "zip_many": lambda s: hostile.zip_many(10 ** (2 + s % 3)),
    "targz_bomb": lambda s: hostile.tar_gz_bomb(50 * (1 + s % 4)),
    "tar_lying": lambda s: hostile.tar_lying_size(),
}
SUFFIX = {"pdf": ".pdf", "html": ".html", "markdown": ".md", "docx": ".docx", "epub": ".epub", "odt": ".odt",
          "ods": ".ods", "rtf": ".rtf", "eml": ".eml", "mbox": ".mbox", "xlsx": ".xlsx", "pptx": ".pptx",
          "zip": ".zip", "tar": ".tar", "targz": ".tar.gz"}
FIXTURES = root / "crates" / "folio-extract" / "tests" / "fixtures"


def valid_files():
    yield "pdf", hostile.simple_pdf(content=b"BT /F1 12 Tf 72 712 Td (A valid page of text about rivers) Tj ET", compress=True)
    yield "html", b"<html><head><title>Valid</title></head><body><h1>Rivers</h1><p>A valid page about rivers and deltas.</p></body></html>"
    yield "markdown", next((root / "samples").glob("*.md")).read_bytes()
    yield "docx", hostile.docx('<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>valid words</w:t></w:r></w:p></w:body></w:document>')
    yield "epub", hostile.epub("<html><body><p>valid chapter text</p></body></html>")
    # Files of the usual writers (scripts/table_fixtures.py).
    for name in ["report.odt", "stock.ods", "memo.rtf", "prices.xlsx", "parts.pptx", "figures.docx",
                 "figures.epub", "figures.pdf"]:
        yield name.rsplit(".", 1)[1], (FIXTURES / name).read_bytes()
    yield "eml", (b"From: a@example.org\r\nSubject: Valid\r\nMIME-Version: 1.0\r\n"
                  b"Content-Type: multipart/mixed; boundary=\"b\"\r\n\r\n--b\r\nContent-Type: text/html\r\n\r\n"
                  b"<p>valid words</p><table><tr><td>a</td></tr></table>\r\n--b\r\n"
                  b"Content-Type: text/csv; name=\"c.csv\"\r\nContent-Disposition: attachment; filename=\"c.csv\"\r\n\r\n"
                  b"x,y\r\n1,2\r\n--b--\r\n")
    yield "zip", hostile._zip({"a/notes.md": "# Notes\n\nvalid words", "b.csv": "x,y\n1,2\n"})
    yield "targz", __import__("gzip").compress(hostile._tar({"notes.md": b"# Notes\n\nvalid words"}))


def mutate(data):
    data = bytearray(data)
    how = rng.choice(["truncate", "flip", "splice"])
    if how == "truncate":
        return bytes(data[: rng.randrange(1, max(2, len(data)))])
    if how == "flip":
        for _ in range(rng.randrange(1, 20)):
            at = rng.randrange(len(data))
            data[at] = rng.randrange(256)
        return bytes(data)
    at = rng.randrange(len(data))
    return bytes(data[:at] + os.urandom(rng.randrange(1, 200)) + data[at:])


with tempfile.TemporaryDirectory() as work:
    work = Path(work)
    files = work / "files"
    files.mkdir()
    corpus = []
    for kind, make in SCALED.items():
        for size in range(args.per_kind):
            suffix = SUFFIX[kind.split("_")[0]]
            path = files / f"{kind}-{size}{suffix}"
            path.write_bytes(make(size))
            corpus.append((kind, path))
    originals = list(valid_files())
    for n in range(args.mutants):
        kind, data = originals[n % len(originals)]
        path = files / f"mutant-{kind}-{n}{SUFFIX[kind]}"
        path.write_bytes(mutate(data))
        corpus.append((f"mutant_{kind}", path))
    config = work / "folio.toml"
    config.write_text(f"[limits]\nextract_timeout_secs = {args.timeout}\n")
    env = dict(os.environ, FOLIO_DATA_DIR=str(work / "data"), FOLIO_CONFIG=str(config), FOLIO_LOG="error")
    outcomes, by_kind, slowest, failures = Counter(), {}, [], []
    started_all = time.monotonic()
    for kind, path in corpus:
        started = time.monotonic()
        try:
            out = subprocess.run([binary, "ingest", str(path), "--library", "hostile", "--json"],
                                 env=env, capture_output=True, text=True, timeout=args.timeout + 60)
            elapsed = time.monotonic() - started
            try:
                report = json.loads(out.stdout)
                codes = [i["error"]["code"] for i in report["items"] if i.get("error")]
                outcome = f"refused:{codes[0]}" if codes else "indexed"
            except (json.JSONDecodeError, KeyError, IndexError):
                outcome = f"crashed:exit {out.returncode}"
        except subprocess.TimeoutExpired:
            elapsed = time.monotonic() - started
            outcome = "hung"
        if elapsed > args.timeout + 15:
            outcome = "over time"
        outcomes[outcome] += 1
        by_kind.setdefault(kind, Counter())[outcome] += 1
        slowest.append((elapsed, path.name, outcome))
        if outcome.startswith(("crashed", "hung", "over")):
            failures.append({"file": path.name, "outcome": outcome})
    slowest.sort(reverse=True)
    print(json.dumps({
        "files": len(corpus),
        "seconds": round(time.monotonic() - started_all, 1),
        "outcomes": dict(outcomes.most_common()),
        "by_kind": {k: dict(v) for k, v in sorted(by_kind.items())},
        "slowest": [{"file": n, "seconds": round(t, 1), "outcome": o} for t, n, o in slowest[:8]],
        "failures": failures,
    }, indent=2))
    sys.exit(1 if failures else 0)
