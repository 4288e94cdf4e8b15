"""Tables and the files people keep (issue 50), through a real MCP client
and the real model: office files written by their usual writers (the
fixtures of scripts/table_fixtures.py) and a mail written by Python's email
package are ingested as a folder; a question about one cell finds the
chunk holding its row, cited by the table and its rows."""

import shutil
from email.message import EmailMessage
from pathlib import Path

from conftest import ok, run, stdio

FIXTURES = Path(__file__).resolve().parents[2] / "crates" / "folio-extract" / "tests" / "fixtures"


def mail(path):
    message = EmailMessage()
    message["From"] = "Lea Brandt <lea@example.org>"
    message["To"] = "purchasing@example.org"
    message["Subject"] = "Prices for the second quarter"
    message["Date"] = "Tue, 03 Mar 2026 09:15:00 +0100"
    message.set_content("The vendor prices are in the attached workbook.")
    message.add_attachment((FIXTURES / "prices.xlsx").read_bytes(), maintype="application",
                           subtype="vnd.openxmlformats-officedocument.spreadsheetml.sheet", filename="q2-prices.xlsx")
    path.write_bytes(bytes(message))


def test_a_cell_is_found_in_its_row_and_cited_by_its_table(data, tmp_path):
    folder = tmp_path / "kept"
    folder.mkdir()
    for name in ["report.odt", "slides.odp", "memo.rtf", "parts.pptx", "stock.ods"]:
        shutil.copy(FIXTURES / name, folder / name)
    mail(folder / "prices.eml")

    async def go():
        async with stdio(data) as c:
            report = await ok(c, "ingest", {"library": "kept", "paths": [str(folder)]})
            # Six files; the mail's workbook is a document of its own.
            assert report["indexed"] == 7 and report["failed"] == 0, report
            formats = {item["format"] for item in report["items"]}
            assert formats == {"odt", "odp", "rtf", "pptx", "ods", "eml", "xlsx"}, formats

            async def top(query):
                found = await ok(c, "search", {"library": "kept", "query": query, "top_k": 1, "response_mode": "full"})
                return found["hits"][0]

            hit = await top("torque of the Bolt M10 from Globex")
            assert "| Globex Ltd | Bolt M10 | 47 |" in hit["text"], hit
            assert hit["section_path"][-2:] == ["Table 1: Torque by vendor", "rows 1–2"], hit["section_path"]

            hit = await top("weight of crate K-18")
            assert "| K-18 | 198 |" in hit["text"], hit
            assert "Table 3: Crates shipped" in hit["section_path"], hit["section_path"]

            hit = await top("how many gear pumps are on hand")
            assert "| Gear pump | 3 |" in hit["text"] and hit["page_start"] == 1, hit
            assert hit["format"] == "pptx"

            hit = await top("price of Nut M8 from Globex in the second quarter")
            assert "| Globex Ltd | Nut M8 | 0.07 | 2026-04-01 |" in hit["text"], hit
            # The attachment: its sheet and rows, linked to the message it
            # came with and cited with its subject and sender.
            assert hit["section_path"] == ["Prices", "rows 2–3"], hit["section_path"]
            assert hit["source"] == str(folder / "prices.eml") + "#q2-prices.xlsx", hit["source"]
            assert hit["title"] == "q2-prices.xlsx"
            assert hit["metadata"]["container"] == str(folder / "prices.eml")
            assert hit["metadata"]["message_subject"] == "Prices for the second quarter"
            assert hit["metadata"]["message_from"] == ["Lea Brandt <lea@example.org>"]

    run(go())


def test_markup_sources_are_found_by_their_sections_tables_and_authors(data, tmp_path):
    """The same memo as pandoc writes it in LaTeX, reStructuredText, Org and
    AsciiDoc: each file is read with its structure, so a question about a
    table row finds the row in every one, under the memo's title, its
    section and the table's caption, cited by the memo's authors and year."""
    folder = tmp_path / "notes"
    folder.mkdir()
    names = {"memo.tex": "latex", "memo.rst": "rst", "memo.org": "org", "memo.adoc": "asciidoc"}
    for name in names:
        shutil.copy(FIXTURES / name, folder / name)

    async def go():
        async with stdio(data) as c:
            report = await ok(c, "ingest", {"library": "notes", "paths": [str(folder)]})
            assert report["indexed"] == 4 and report["failed"] == 0, report
            assert {item["format"] for item in report["items"]} == set(names.values()), report

            found = await ok(c, "search", {"library": "notes", "query": "weight of crate K-18", "top_k": 8,
                                           "response_mode": "full"})
            rows = {}
            for hit in found["hits"]:
                if "| K-18 | 198 |" in hit["text"]:
                    rows.setdefault(hit["format"], hit)
            assert set(rows) == set(names.values()), [(h["format"], h["text"][:60]) for h in found["hits"]]
            for fmt, hit in rows.items():
                path = hit["section_path"]
                assert path[:3] == ["Shipping memo", "Shipments", "Weights"], (fmt, path)
                assert any(part.endswith("Crates shipped") for part in path), (fmt, path)
                assert hit["citation"]["authors"] == ["Lea Brandt", "Jonas Weber"], (fmt, hit["citation"])
                assert hit["citation"]["year"] == 2026, (fmt, hit["citation"])
                # No markup of the source reaches the text an agent reads.
                assert not any(mark in hit["text"] for mark in ["\\", "#+", "|===", "==="]), (fmt, hit["text"])

    run(go())
