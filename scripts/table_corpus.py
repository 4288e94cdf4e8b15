#!/usr/bin/env python3
"""Known-item recall of table cells in every format folio reads tables from.

    python3 scripts/table_corpus.py generate OUT
    python3 scripts/table_corpus.py measure OUT --bin target/release/folio [--mode lexical]
    python3 scripts/table_corpus.py scale OUT --rows 20000

`generate` writes, with the usual writers (python-docx, openpyxl, odfpy,
fpdf2, python-pptx, pandoc through pypandoc_binary for RTF, LaTeX,
reStructuredText, Org and AsciiDoc, the email
package), one document per format holding captioned tables of 5 to 500 rows
and a figure caption, and a question per sampled cell naming the cell's row
(by its code) and column. `measure` ingests the folder into a fresh data
directory through the native MCP tools over stdio and asks every question
with `search` at its defaults: a question is found when one of the first
five hits holds the row (its code and the asked value); the citation names
the table when the hit's section path holds the table's caption. `scale`
writes one table of ROWS rows in each format (and a mailbox of ROWS / 10
messages), for peak memory against input size.

Writers: pip install python-docx openpyxl odfpy fpdf2 python-pptx pypandoc_binary mcp
"""
import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

COLUMNS = ["Code", "Item", "Site", "Quantity", "Unit price (EUR)", "Supplier"]
ITEMS = """hex bolt, flange gasket, ball bearing, hydraulic hose, copper pipe, steel bracket,
pressure valve, drive belt, oil filter, spark plug, cable gland, fuse holder, relay switch,
circuit breaker, LED panel, air compressor, torque wrench, drill bit, welding rod, safety
helmet, nitrile gloves, ear defenders, pallet jack, conveyor roller, timing chain, gear pump,
shaft coupling, thrust washer, spring pin, rivet nut, cotter pin, lock nut, wing nut, eye bolt,
turnbuckle, wire rope, shackle, pulley block, chain hoist, gate valve, check valve, solenoid
coil, proximity sensor, limit switch, terminal block, heat shrink, zip tie, duct tape, epoxy
resin, threadlocker""".replace("\n", " ").split(", ")
SITES = ["Lyon", "Graz", "Porto", "Gdansk", "Leeds", "Turin", "Ghent", "Aarhus", "Brno", "Bilbao",
         "Utrecht", "Tampere", "Cork", "Kaunas", "Basel", "Nantes"]
SUPPLIERS = ["Acme GmbH", "Globex Ltd", "Initech SA", "Umbrella BV", "Stark Srl", "Wayne AB",
             "Hooli Oy", "Vandelay AG", "Soylent NV", "Tyrell SpA", "Cyberdyne AS", "Wonka Kft"]
SIZES = [5, 40, 500]
QUESTIONS_PER_FORMAT = 100
FORMATS = ["html", "md", "csv", "docx", "odt", "rtf", "xlsx", "ods", "pdf", "pptx", "eml", "tex", "rst", "org",
           "adoc"]


class Corpus:
    """Tables with globally unique row codes."""

    def __init__(self, seed=7):
        self.rng = random.Random(seed)
        self.codes = set()

    def code(self):
        while True:
            code = f"{self.rng.choice('ABCDEFGHJKLMNPRSTUVWXZ')}{self.rng.choice('ABCDEFGHJKLMNPRSTUVWXZ')}-{self.rng.randint(1000, 9999)}"
            if code not in self.codes:
                self.codes.add(code)
                return code

    def table(self, number, rows):
        site = self.rng.choice(SITES)
        caption = f"Table {number}: Stock held at the {site} depot"
        body = []
        for _ in range(rows):
            body.append([
                self.code(),
                self.rng.choice(ITEMS),
                self.rng.choice(SITES),
                str(self.rng.randint(1, 9000)),
                f"{self.rng.randint(1, 4000) / 100:.2f}",
                self.rng.choice(SUPPLIERS),
            ])
        return {"caption": caption, "sheet": f"{site} depot {number}", "rows": body}


def tables_for(corpus, sizes=SIZES):
    return [corpus.table(i + 1, n) for i, n in enumerate(sizes)]


FIGURE = "Figure 1: Floor plan of the central warehouse"
INTRO = "Quarterly stock report of the depots, with one table per depot."


def markdown_table(table, caption_below=False):
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row) + " |" for row in table["rows"]]
    if caption_below:
        return "\n".join(lines) + f"\n\n: {table['caption']}\n"
    return f"{table['caption']}\n\n" + "\n".join(lines) + "\n"


def write_md(path, tables):
    parts = ["# Stock report", INTRO]
    parts += [markdown_table(t) for t in tables]
    parts.append(FIGURE)
    path.write_text("\n\n".join(parts), encoding="utf-8")


def html_table(table):
    head = "".join(f"<th>{c}</th>" for c in COLUMNS)
    rows = "".join("<tr>" + "".join(f"<td>{v}</td>" for v in row) + "</tr>" for row in table["rows"])
    return f"<table><caption>{table['caption']}</caption><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def write_html(path, tables):
    body = "".join(html_table(t) for t in tables)
    path.write_text(
        f"<!doctype html><html lang=en><head><title>Stock report</title></head><body><h1>Stock report</h1><p>{INTRO}</p>"
        f"{body}<figure><img src=plan.png alt=plan><figcaption>{FIGURE}</figcaption></figure></body></html>",
        encoding="utf-8",
    )


def write_csv(folder, tables):
    import csv

    paths = []
    for table in tables:
        path = folder / f"stock-{table['sheet'].replace(' ', '-').lower()}.csv"
        with path.open("w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(COLUMNS)
            writer.writerows(table["rows"])
        paths.append(path)
    return paths


def write_docx(path, tables):
    import docx

    doc = docx.Document()
    doc.core_properties.title = "Stock report"
    doc.add_heading("Stock report", 1)
    doc.add_paragraph(INTRO)
    for table in tables:
        doc.add_paragraph(table["caption"], style="Caption")
        grid = doc.add_table(rows=1, cols=len(COLUMNS))
        for cell, value in zip(grid.rows[0].cells, COLUMNS):
            cell.text = value
        for row in table["rows"]:
            cells = grid.add_row().cells
            for cell, value in zip(cells, row):
                cell.text = value
    doc.add_paragraph(FIGURE, style="Caption")
    doc.save(str(path))


def odf_cell(value):
    from odf.table import TableCell
    from odf.text import P

    cell = TableCell(valuetype="string")
    cell.addElement(P(text=value))
    return cell


def write_odt(path, tables):
    from odf.opendocument import OpenDocumentText
    from odf.style import Style
    from odf.table import Table, TableColumn, TableHeaderRows, TableRow
    from odf.text import H, P, Sequence

    doc = OpenDocumentText()
    caption_style = Style(name="Table", family="paragraph")
    doc.styles.addElement(caption_style)
    doc.styles.addElement(Style(name="Illustration", family="paragraph"))
    doc.text.addElement(H(outlinelevel=1, text="Stock report"))
    doc.text.addElement(P(text=INTRO))
    for number, table in enumerate(tables, 1):
        caption = P(stylename="Table")
        prefix, rest = table["caption"].split(":", 1)
        caption.addText("Table ")
        caption.addElement(Sequence(name="Table", formula="ooow:Table+1", numformat="1", text=str(number)))
        caption.addText(":" + rest)
        doc.text.addElement(caption)
        grid = Table(name=f"Table{number}")
        grid.addElement(TableColumn(numbercolumnsrepeated=len(COLUMNS)))
        header = TableHeaderRows()
        row = TableRow()
        for value in COLUMNS:
            row.addElement(odf_cell(value))
        header.addElement(row)
        grid.addElement(header)
        for values in table["rows"]:
            row = TableRow()
            for value in values:
                row.addElement(odf_cell(value))
            grid.addElement(row)
        doc.text.addElement(grid)
    doc.text.addElement(P(stylename="Illustration", text=FIGURE))
    doc.save(str(path))


def write_ods(path, tables):
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.table import Table, TableRow

    doc = OpenDocumentSpreadsheet()
    for table in tables:
        sheet = Table(name=table["sheet"])
        for values in [COLUMNS] + table["rows"]:
            row = TableRow()
            for value in values:
                row.addElement(odf_cell(value))
            sheet.addElement(row)
        doc.spreadsheet.addElement(sheet)
    doc.save(str(path))


def write_xlsx(path, tables):
    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    for table in tables:
        sheet = book.create_sheet(table["sheet"])
        sheet.append(COLUMNS)
        for row in table["rows"]:
            sheet.append([int(row[3]) if i == 3 else float(row[4]) if i == 4 else v for i, v in enumerate(row)])
    book.save(path)


def write_rtf(path, tables):
    import pypandoc

    text = "# Stock report\n\n" + INTRO + "\n\n" + "\n\n".join(markdown_table(t, caption_below=True) for t in tables)
    text += "\n\n" + FIGURE + "\n"
    pypandoc.convert_text(text, "rtf", format="markdown", outputfile=str(path), extra_args=["--standalone"])


def pandoc_writer(writer):
    """The report as pandoc writes it from Markdown (captions below tables,
    as pandoc's Markdown gives them)."""

    def write(path, tables):
        import pypandoc

        text = "# Stock report\n\n" + INTRO + "\n\n" + "\n\n".join(markdown_table(t, caption_below=True) for t in tables)
        text += "\n\n" + FIGURE + "\n"
        pypandoc.convert_text(text, writer, format="markdown", outputfile=str(path), extra_args=["--standalone"])

    return write


def write_pdf(path, tables):
    from fpdf import FPDF

    pdf = FPDF(orientation="L")
    pdf.set_font("Helvetica", size=9)
    pdf.add_page()
    pdf.set_font("Helvetica", style="B", size=16)
    pdf.cell(text="Stock report", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", size=9)
    pdf.multi_cell(0, 6, INTRO, new_x="LMARGIN", new_y="NEXT")
    for table in tables:
        pdf.ln(4)
        pdf.multi_cell(0, 6, table["caption"], new_x="LMARGIN", new_y="NEXT")
        with pdf.table(col_widths=(20, 40, 25, 20, 30, 35), repeat_headings=1) as grid:
            for values in [COLUMNS] + table["rows"]:
                row = grid.row()
                for value in values:
                    row.cell(value)
    pdf.ln(4)
    pdf.multi_cell(0, 6, FIGURE, new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))


def write_pptx(path, tables):
    from pptx import Presentation
    from pptx.util import Inches, Pt

    deck = Presentation()
    layout = deck.slide_layouts[5]  # title only
    for table in tables:
        # A slide holds a screenful: long tables go on as many slides.
        rows = table["rows"]
        for start in range(0, len(rows), 15):
            slide = deck.slides.add_slide(layout)
            slide.shapes.title.text = table["caption"]
            part = rows[start:start + 15]
            shape = slide.shapes.add_table(len(part) + 1, len(COLUMNS), Inches(0.3), Inches(1.5), Inches(9.4), Inches(5))
            grid = shape.table
            for c, value in enumerate(COLUMNS):
                grid.cell(0, c).text = value
            for r, values in enumerate(part, 1):
                for c, value in enumerate(values):
                    grid.cell(r, c).text = value
                    grid.cell(r, c).text_frame.paragraphs[0].font.size = Pt(8)
    deck.save(str(path))


def write_eml(path, tables):
    import csv
    import io
    from email.message import EmailMessage

    message = EmailMessage()
    message["From"] = "Depot Office <depots@example.org>"
    message["To"] = "Purchasing <purchasing@example.org>"
    message["Subject"] = "Stock report of the depots"
    message["Date"] = "Tue, 03 Mar 2026 09:15:00 +0100"
    message.set_content(INTRO)
    message.add_alternative(
        f"<html><body><p>{INTRO}</p>{html_table(tables[0])}{html_table(tables[1])}</body></html>", subtype="html")
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(COLUMNS)
    writer.writerows(tables[2]["rows"])
    message.add_attachment(out.getvalue().encode(), maintype="text", subtype="csv", filename="depot-stock.csv")
    path.write_bytes(bytes(message))


WRITERS = {
    "html": ("report.html", write_html), "md": ("report.md", write_md), "docx": ("report.docx", write_docx),
    "odt": ("report.odt", write_odt), "rtf": ("report.rtf", write_rtf), "xlsx": ("report.xlsx", write_xlsx),
    "ods": ("report.ods", write_ods), "pdf": ("report.pdf", write_pdf), "pptx": ("report.pptx", write_pptx),
    "eml": ("report.eml", write_eml), "tex": ("report.tex", pandoc_writer("latex")),
    "rst": ("report.rst", pandoc_writer("rst")), "org": ("report.org", pandoc_writer("org")),
    "adoc": ("report.adoc", pandoc_writer("asciidoc")),
}


def generate(out):
    corpus = Corpus()
    docs = out / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    questions = []
    for fmt in FORMATS:
        tables = tables_for(corpus)
        folder = docs / fmt
        folder.mkdir(exist_ok=True)
        if fmt == "csv":
            files = write_csv(folder, tables)
        else:
            name, write = WRITERS[fmt]
            write(folder / name, tables)
            files = [folder / name]
        rng = random.Random(f"questions-{fmt}")
        for _ in range(QUESTIONS_PER_FORMAT):
            index = rng.randrange(len(tables))
            table = tables[index]
            row = rng.choice(table["rows"])
            column = rng.randrange(1, len(COLUMNS))
            captioned = fmt not in ("csv",)
            # The mail's third table is its CSV attachment: a document of
            # its own, named by its file.
            names = table["sheet"] if fmt in ("xlsx", "ods") else table["caption"]
            if fmt == "eml" and index == 2:
                names = "depot-stock.csv"
            questions.append({
                "format": fmt,
                "question": f"What is the {COLUMNS[column].lower()} of {row[0]}?",
                "code": row[0],
                "value": row[column],
                "rows": len(table["rows"]),
                # What the citation should name: the caption, or for a
                # sheet the sheet's name (a CSV is named by its file).
                "names": names if captioned else None,
            })
    (out / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    print(f"{len(questions)} questions over {len(FORMATS)} formats in {out}")


def payload(result):
    """A tool result's structured content (the SDK's name for it varies)."""
    structured = getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)
    if getattr(result, "isError", False) or getattr(result, "is_error", False):
        raise RuntimeError(result.content[0].text)
    return structured or json.loads(result.content[0].text)


async def ask_all(binary, out, data, mode=None):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = dict(os.environ, FOLIO_DATA_DIR=str(data), FOLIO_LOG="warn")
    params = StdioServerParameters(command=binary, args=["serve", "--stdio", "--toolsets", "native"], env=env)
    questions = [json.loads(line) for line in (out / "questions.jsonl").read_text().splitlines()]
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        started = time.monotonic()
        result = await session.call_tool("ingest", {"library": "tables", "paths": [str((out / "docs").resolve())]})
        report = payload(result)
        ingest_secs = time.monotonic() - started
        failed = [i for i in report["items"] if i.get("error")]
        print(f"ingested {report['indexed']} documents, {report['chunks']} chunks in {ingest_secs:.1f} s; failed: {failed}")
        by_format = defaultdict(lambda: {"asked": 0, "found": 0, "named": 0, "latency_ms": []})
        misses, unnamed = [], []
        for q in questions:
            t = time.monotonic()
            arguments = {"library": "tables", "query": q["question"], "top_k": 5, "response_mode": "full"}
            if mode:
                arguments["mode"] = mode
            result = await session.call_tool("search", arguments)
            latency = (time.monotonic() - t) * 1000
            hits = payload(result)["hits"]
            stats = by_format[q["format"]]
            stats["asked"] += 1
            stats["latency_ms"].append(latency)
            # A number a spreadsheet stores shows without trailing zeros.
            shown = {q["value"], q["value"].rstrip("0").rstrip(".") if "." in q["value"] else q["value"]}
            found = next((h for h in hits[:5]
                          if q["code"] in h["text"] and any(f"| {v} |" in h["text"] for v in shown)), None)
            if found is None:
                misses.append({"question": q, "top": [(h.get("title"), h.get("section_path"), h["text"][:120]) for h in hits[:3]]})
                continue
            stats["found"] += 1
            path = " / ".join(found.get("section_path") or [])
            cited = [path, found.get("context") or "", found.get("title") or "", found.get("source") or ""]
            if q["names"] is None or any(q["names"] in c for c in cited):
                stats["named"] += 1
            else:
                unnamed.append({"question": q, "section_path": found.get("section_path"), "page": found.get("page")})
        return report, ingest_secs, by_format, misses, unnamed


def measure(out, binary, mode=None):
    with tempfile.TemporaryDirectory() as data:
        report, ingest_secs, by_format, misses, unnamed = asyncio.run(ask_all(binary, out, Path(data), mode))
    print(f"{'format':<6} {'asked':>5} {'recall@5':>9} {'named':>6} {'median ms':>9}")
    summary = {}
    for fmt in FORMATS:
        s = by_format.get(fmt)
        if not s:
            continue
        latencies = sorted(s["latency_ms"])
        median = latencies[len(latencies) // 2]
        recall = s["found"] / s["asked"]
        named = s["named"] / s["found"] if s["found"] else 0.0
        summary[fmt] = {"asked": s["asked"], "recall_at_5": round(recall, 3), "named": round(named, 3),
                        "median_ms": round(median, 1)}
        print(f"{fmt:<6} {s['asked']:>5} {recall:>9.3f} {named:>6.3f} {median:>9.1f}")
    for miss in misses[:20]:
        print("miss:", json.dumps(miss)[:400], file=sys.stderr)
    (out / "result.json").write_text(json.dumps({"formats": summary, "ingest_secs": round(ingest_secs, 1),
                                                 "chunks": report["chunks"], "misses": misses, "unnamed": unnamed}, indent=1))


def write_mbox(path, rows):
    from email.message import EmailMessage

    with path.open("wb") as f:
        for start in range(0, len(rows), 10):
            message = EmailMessage()
            message["From"] = "Depot Office <depots@example.org>"
            message["To"] = "purchasing@example.org"
            message["Subject"] = f"Stock lines {start + 1} to {start + 10}"
            message.set_content("\n".join(", ".join(row) for row in rows[start:start + 10]))
            f.write(b"From depots@example.org Tue Mar  3 09:15:00 2026\n")
            f.write(bytes(message).replace(b"\nFrom ", b"\n>From ") + b"\n")


def scale(out, rows):
    corpus = Corpus(seed=rows)
    table = corpus.table(1, rows)
    out.mkdir(parents=True, exist_ok=True)
    for fmt in ["csv", "xlsx", "ods", "odt", "docx", "rtf", "html", "eml"]:
        if fmt == "csv":
            for path in write_csv(out, [table]):
                path.rename(out / f"rows-{rows}.csv")
            continue
        name, write = WRITERS[fmt]
        target = out / f"rows-{rows}.{fmt}"
        if fmt == "eml":
            empty = {"caption": "Table 0: none", "rows": []}
            write(target, [empty, empty, table])
        else:
            write(target, [table])
    write_mbox(out / f"rows-{rows}.mbox", table["rows"])
    for path in sorted(out.glob(f"rows-{rows}.*")):
        print(f"{path.name}\t{path.stat().st_size}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate")
    g.add_argument("out", type=Path)
    m = sub.add_parser("measure")
    m.add_argument("out", type=Path)
    m.add_argument("--bin", default="target/release/folio")
    m.add_argument("--mode", choices=["hybrid", "lexical", "dense"], help="search mode (default: the server's)")
    sc = sub.add_parser("scale")
    sc.add_argument("out", type=Path)
    sc.add_argument("--rows", type=int, default=20000)
    args = parser.parse_args()
    if args.command == "generate":
        generate(args.out)
    elif args.command == "scale":
        scale(args.out, args.rows)
    else:
        measure(args.out, args.bin, args.mode)


if __name__ == "__main__":
    main()
