"""Issue 51: the web app served by `folio serve --http` at `/`, driven in a
real browser (Playwright's library on Debian's chromium, tests/web/app.mjs):
libraries listed, a search with a format filter, a hit opened by keyboard
with its cited passage marked in the document, no script errors, no
accessibility violations axe-core reports, a layout that fits 360 px. On a
server that asks for keys: a key signed in once is kept in an HttpOnly,
SameSite=Strict cookie no script reads, shows only the key's libraries,
and a request without the app's header carries no credential."""

import collections
import contextlib
import json
import subprocess
import tomllib
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from conftest import BIN, SAMPLES, HttpServer, folio_env, free_port, http_mcp, ok, run, write_config
from test_keys import create_key, status_of

ROOT = Path(__file__).resolve().parents[2]
DRIVER = ROOT / "tests/web/app.mjs"
ARTIFACTS = ROOT / "target/web-artifacts"


def ingest(data, library, *paths):
    done = subprocess.run([BIN, "ingest", *map(str, paths), "--library", library, "--json"],
                          env=folio_env(data), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def drive(url, artifacts, **args):
    artifacts.mkdir(parents=True, exist_ok=True)
    args = {"url": url, "artifacts": str(artifacts), **args}
    done = subprocess.run(["node", str(DRIVER), json.dumps(args)], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert "failure" not in seen, seen["failure"]
    return seen


def assert_page_sound(seen, artifacts):
    assert seen["errors"] == [] and seen["console_before_forged"] == [], seen
    assert seen["violations_document"] == [] and seen["violations_search"] == [], (seen["violations_document"], seen["violations_search"])
    for shot in ["search.png", "document.png"]:
        assert (artifacts / shot).stat().st_size > 10_000, shot


# A PDF of two pages (lines set 16 points apart on a 612 × 792 point page).
PDF_PAGES = [
    "Drained fields and their yield\n"
    "Across three seasons the drained plots gave a third more grain\n"
    "than the plots beside them whose water stood until late spring.\n"
    "The difference held on clay and on loam, in dry years and wet.",
    "Costs of drainage\n"
    "Tile drains cost more to lay than open ditches but need less upkeep,\n"
    "and over twenty years the two came out within a tenth of each other.",
]


def test_search_and_a_cited_passage_in_the_browser(data, tmp_path):
    from pdfs import pdf

    ingest(data, "docs", SAMPLES)
    # A record schema declared on the library, for its row to show.
    schema = Path(__file__).resolve().parents[2] / "examples" / "hansard-schema.toml"
    declared = subprocess.run([BIN, "schema", "docs", str(schema)], env=folio_env(data), capture_output=True, text=True)
    assert declared.returncode == 0, declared.stderr
    declared = tomllib.loads(schema.read_text())
    fields = tmp_path / "fields.pdf"
    fields.write_bytes(pdf(PDF_PAGES))
    # A watched folder with a file it cannot read.
    watched = tmp_path / "watched"
    watched.mkdir()
    (watched / "minutes.md").write_text("# Minutes\n\nThe board met on Tuesday.")
    (watched / "broken.pdf").write_bytes(b"%PDF-1.4\nnot a PDF past its first line")
    config = write_config(tmp_path / "folio.toml", f'[[watch]]\nfolder = "{watched}"\nlibrary = "minutes"\n')
    # A file added through the page (a path on the server, as an agent's
    # ingest takes it).
    added = tmp_path / "notes" / "optimisers.txt"
    added.parent.mkdir()
    added.write_bytes((SAMPLES / "optimisers.txt").read_bytes())
    with HttpServer(data, config=config) as server:
        watch = watched_once(server.url)
        for width in [1280, 360]:
            artifacts = ARTIFACTS / f"loopback-{width}"
            first = width == 1280
            seen = drive(server.url, artifacts, library="docs", format="markdown", width=width,
                         query="why does dropout reduce overfitting",
                         add={"library": "notes", "path": str(added)} if first else None,
                         upload={"library": "uploads", "file": str(SAMPLES / "attention.html")} if first else None,
                         pdf={"library": "papers", "file": str(fields), "query": "does drainage raise the yield of grain"}
                         if first else None, watches=True)
            assert_page_sound(seen, artifacts)
            # The watched folder as server_info tells it, its unreadable
            # file among the failing ones.
            assert seen["activity_visible"]
            assert seen["watches"] == [{
                "cells": [str(watched), "minutes", watch["state"], str(watch["changes"]),
                          (watch["last_change_at"] or "—").replace("T", " ")[:19]],
                "failing": [f.removeprefix(f"{watched}/") for f in watch["failing"]]}], (seen["watches"], watch)
            assert watch["state"] == "watching" and any(f.startswith(f"{watched}/broken.pdf") for f in watch["failing"]), watch
            if first:
                assert_pdf_page_shown(seen, artifacts, server.url)
            assert seen["add_visible"]
            if width == 1280:
                assert seen["add_status"].startswith("1 indexed, 0 unchanged, 0 failed"), seen["add_status"]
                # The add ran as a background job, shown finished.
                assert [j[:3] for j in seen["jobs"]] == [["notes", "completed", "1 document(s)"]], seen["jobs"]
                assert seen["libraries"] == ["docs", "minutes"]
                # The library's row: its counts and model as the CLI lists
                # them, the four English samples, the schema declared.
                listed = json.loads(subprocess.run([BIN, "ls", "--json"], env=folio_env(data), capture_output=True,
                                                   text=True).stdout)
                docs = next(l for l in listed if l["name"] == "docs")
                assert seen["library_rows"][0] == [
                    "docs", str(docs["document_count"]), str(docs["chunk_count"]), docs["space"]["model"], "en 4",
                    f"{len(declared['fields'])} fields, text {declared['text']}, key {declared['key']}"], \
                    seen["library_rows"]
                assert sorted(seen["libraries_after_add"]) == ["docs", "minutes", "notes"]
                # A file from the browser's computer, uploaded.
                assert sorted(seen["libraries_after_upload"]) == ["docs", "minutes", "notes", "uploads"]
                listed = json.loads(subprocess.run([BIN, "ls", "--json"], env=folio_env(data), capture_output=True,
                                                   text=True).stdout)
                uploads = next(l for l in listed if l["name"] == "uploads")
                assert uploads["document_count"] == 1
                assert seen["upload_status"] == f"attention.html: indexed, {uploads['chunk_count']} chunk(s) in uploads", \
                    seen["upload_status"]
            else:
                assert sorted(seen["libraries"]) == ["docs", "minutes", "notes", "papers", "uploads"]
            # The facet offers the library's formats; the filter holds.
            assert {"markdown", "html", "text"} <= set(seen["formats"]), seen["formats"]
            assert seen["hits"][0] == "Dropout as regularisation", seen["hits"]
            assert all(".md" in c for c in seen["citations"]), seen["citations"]
            # The hit's passage, marked where it stands in its document.
            text = (SAMPLES / "dropout.md").read_text()
            assert seen["cited"].strip() and seen["cited"].split()[0] in text
            assert "co-adaptation" in seen["cited"], seen["cited"]
            assert seen["cited_visible"] and seen["focused"] == "back"
            # The document's chunks, each marked where it starts (dropout.md
            # has three).
            assert seen["boundaries"] == ["chunk 1", "chunk 2", "chunk 3"], seen["boundaries"]
            assert not seen["overflows"], f"the page is wider than {width} px: {seen['overflows']}"


def watched_once(url):
    """The server's one watch, as server_info tells it, once its first pass
    has indexed a file and failed on another."""
    import asyncio
    import time

    from conftest import http_mcp, ok, run

    async def info():
        async with http_mcp(url) as c:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                watches = (await ok(c, "server_info"))["watches"]
                if watches and watches[0]["changes"] >= 1 and watches[0]["failing"]:
                    return watches[0]
                await asyncio.sleep(0.2)
            raise AssertionError(f"no pass of the watch: {watches}")

    return run(info())


def assert_pdf_page_shown(seen, artifacts, url):
    """The uploaded PDF found with the pdf filter, its cited page shown as
    an image: the page's size follows from its 612 × 792 points and the
    1600-pixel limit; every word of the page is in the one cited chunk, so
    every word is marked; the image is the page resource as the Python SDK
    reads it; the next page is a click away."""
    import base64
    import hashlib

    from conftest import http_mcp, run

    assert all("fields.pdf" in c for c in seen["pdf_citations"]), seen["pdf_citations"]
    assert seen["page_button"] == "Show page 1 as an image", seen["page_button"]
    shown = seen["page"]
    assert (shown["width"], shown["height"], shown["page"]) == (round(612 * 1600 / 792 + 0.5), 1600, 1), shown
    assert shown["marks"] == len(PDF_PAGES[0].split()), (shown["marks"], len(PDF_PAGES[0].split()))
    assert seen["page_caption"] == "Page 1 of 2 · the cited passage is marked in yellow", seen["page_caption"]
    assert seen["violations_page"] == [], seen["violations_page"]
    assert (artifacts / "page.png").stat().st_size > 10_000
    assert seen["next_page"]["page"] == 2 and seen["next_page"]["marks"] == len(PDF_PAGES[1].split()), seen["next_page"]
    assert seen["previous_visible"]

    async def read():
        async with http_mcp(url) as c:
            templates = await c.list_resource_templates()
            assert "folio://document/{document_id}/page/{page}{?chunk}" in [
                t.uri_template for t in templates.resource_templates]
            found = await c.call_tool("search", {"library": "papers", "query": "drainage", "top_k": 1})
            hit = found.structured_content["hits"][0]
            uri = f"folio://document/{hit['document_id']}/page/1?chunk={hit['chunk_index']}"
            page = (await c.read_resource(uri)).contents[0]
            plain = (await c.read_resource(f"folio://document/{hit['document_id']}/page/1")).contents[0]
            return page, plain

    page, plain = run(read())
    assert page.mime_type == "image/png"
    png = base64.b64decode(page.blob)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert hashlib.sha256(png).digest() == hashlib.sha256(base64.b64decode(shown["src"])).digest()
    # Unmarked, the same page is another image.
    assert base64.b64decode(plain.blob) != png


def test_a_pdf_inside_an_archive_or_a_message_shows_its_pages(data, tmp_path):
    """A PDF read as an archive's member or a message's attachment keeps
    its bytes with its document: its pages render, each the very image of
    the same PDF ingested on its own (same bytes, same renderer), and the
    cited passage is marked on request."""
    import base64
    import email.message
    import zipfile

    from pdfs import pdf

    pdf_bytes = pdf(PDF_PAGES)
    alone = tmp_path / "fields.pdf"
    alone.write_bytes(pdf_bytes)
    with zipfile.ZipFile(tmp_path / "reports.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("2024/fields.pdf", pdf_bytes)
        z.writestr("2024/notes.md", "# Notes\n\nThe drained plots were walked in May.")
    message = email.message.EmailMessage()
    message["From"], message["To"], message["Subject"] = "a@example.org", "b@example.org", "Yields"
    message["Message-ID"] = "<yields@example.org>"
    message.set_content("The report on drained fields is attached.")
    message.add_attachment(pdf_bytes, maintype="application", subtype="pdf", filename="fields.pdf")
    (tmp_path / "yields.eml").write_bytes(bytes(message))
    ingest(data, "alone", alone)
    ingest(data, "kept", tmp_path / "reports.zip", tmp_path / "yields.eml")

    async def pages(url):
        async with http_mcp(url) as c:
            async def page_of(library):
                found = await c.call_tool("search", {"library": library, "query": "drained plots gave more grain",
                                                     "filter": {"format": "pdf"}, "top_k": 5})
                hits = found.structured_content["hits"]
                images = {}
                for hit in hits:
                    if hit["source"] in images:  # the best chunk of each document
                        continue
                    base_uri = f"folio://document/{hit['document_id']}/page/1"
                    plain = (await c.read_resource(base_uri)).contents[0]
                    marked = (await c.read_resource(f"{base_uri}?chunk={hit['chunk_index']}")).contents[0]
                    images[hit["source"]] = (base64.b64decode(plain.blob), base64.b64decode(marked.blob))
                return images

            return await page_of("alone"), await page_of("kept")

    with HttpServer(data) as server:
        alone_pages, kept_pages = run(pages(server.url))
    [(plain, _)] = alone_pages.values()
    assert plain[:8] == b"\x89PNG\r\n\x1a\n"
    sources = sorted(kept_pages)
    assert len(sources) == 2 and sources[0].endswith("reports.zip#2024/fields.pdf") \
        and sources[1].endswith("yields.eml#fields.pdf"), sources
    for source, (kept_plain, kept_marked) in kept_pages.items():
        assert kept_plain == plain, source
        assert kept_marked != kept_plain and kept_marked[:8] == b"\x89PNG\r\n\x1a\n", source


ARABIC_PAGE = """<!doctype html><html lang="ar" dir="rtl"><meta charset="utf-8">
<body style="font-family: DejaVu Sans; font-size: 14pt"><h1>الري والمحاصيل</h1>
<p>في المواسم الثلاثة أعطت الحقول المصرفة ثلث حبوب أكثر من الحقول المجاورة التي بقي الماء فيها حتى أواخر الربيع.</p>
<p>وقد ظهر الفرق في التربة الطينية والطميية في السنوات الجافة والرطبة على حد سواء.</p></body></html>"""


def test_an_arabic_pdf_in_visual_order_has_its_passage_marked(data, tmp_path):
    """A browser's PDF stores Arabic in visual order (pdftotext gives each
    word reversed); the cited passage, the two paragraphs, is still marked
    word for word: every word pdftotext finds below the heading, and not
    the heading's."""
    import re

    pdf = tmp_path / "irrigation.pdf"
    printed = subprocess.run(["node", str(ROOT / "tests/web/print.mjs"), json.dumps({"html": ARABIC_PAGE, "path": str(pdf)})],
                             capture_output=True, text=True, timeout=120)
    assert printed.returncode == 0, printed.stderr
    boxes = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True).stdout
    words = [(float(y0), text) for y0, text in re.findall(r'<word xMin="[^"]+" yMin="([^"]+)"[^>]*>([^<]*)</word>', boxes)]
    heading = min(y for y, _ in words)
    body = [text for y, text in words if y > heading + 1]
    assert len(body) == len(words) - 2 and "يرلا" in [t for _, t in words], words  # reversed on the page
    ingest(data, "ar", pdf)

    async def read(url):
        async with http_mcp(url) as c:
            found = await c.call_tool("search", {"library": "ar", "query": "الحقول المصرفة", "top_k": 1,
                                                 "response_mode": "full"})
            hit = found.structured_content["hits"][0]
            page = (await c.read_resource(f"folio://document/{hit['document_id']}/page/1?chunk={hit['chunk_index']}")).contents[0]
            return hit, page

    with HttpServer(data) as server:
        hit, page = run(read(server.url))
    assert "الحقول المصرفة" in hit["text"] and "الري والمحاصيل" not in hit["text"], hit["text"]
    assert len(page.meta["marks"]) == len(body), (len(page.meta["marks"]), len(body))


def test_more_results_are_the_next_pages_of_the_search(data):
    """"More results" fetches the search's next page with its cursor, as
    an agent would: the pages are the ones the Python SDK gets for the same
    arguments, and the first new hit takes the focus."""
    ingest(data, "docs", SAMPLES)
    query = "training a network"
    with HttpServer(data) as server:
        seen = drive(server.url, ARTIFACTS / "more", library="docs", format="markdown", query=query, top_k=1,
                     more=True)

        async def pages():
            args = {"library": "docs", "query": query, "mode": "hybrid", "top_k": 1, "max_output_chars": 200000,
                    "filter": {"format": "markdown"}}
            found, cursor = [], None
            async with http_mcp(server.url) as c:
                while True:
                    page = await ok(c, "search", {**args, **({"cursor": cursor} if cursor else {})})
                    found.append([h["document_id"] for h in page["hits"]])
                    cursor = page.get("next_cursor")
                    if not cursor or not page["hits"]:
                        return found

        expected = run(pages())
    assert [p for p in seen["pages"] if p] == [p for p in expected if p], (seen["pages"], expected)
    # Both markdown samples, one a page.
    assert len([p for p in expected if p]) == 2, expected
    assert seen["more_focused"] == "1", seen


def test_a_table_is_drawn_as_a_table_in_its_document(data, tmp_path):
    """A hit in a table opens its document with the table drawn as one:
    its header and rows as the file has them (a pipe inside a cell kept),
    the cited rows marked, the text around it as text."""
    rows = [["part", "supplier", "torque"], ["XA-4645", "Globex", "12 Nm"], ["XB-1010", "Initech | Ltd", "9 Nm"]]
    cells = lambda r: "| " + " | ".join(c.replace("|", "\\|") for c in r) + " |"
    source = tmp_path / "parts.md"
    source.write_text("# Parts\n\nWhat each part takes.\n\nTable 1: Torque by part\n\n" + cells(rows[0]) + "\n|---|---|---|\n"
                      + "\n".join(cells(r) for r in rows[1:]) + "\n\nAfter the table, a closing remark.\n")
    ingest(data, "parts", source)
    with HttpServer(data) as server:
        artifacts = ARTIFACTS / "table"
        seen = drive(server.url, artifacts, library="parts", format="markdown", query="torque of XA-4645")
        assert_page_sound(seen, artifacts)
    assert seen["document_tables"] == [{"head": [rows[0]], "body": rows[1:]}], seen["document_tables"]
    # The cited chunk is the table's: its rows are in the marked block.
    assert "XA-4645" in seen["cited"] and "|" not in seen["cited"].replace("Initech | Ltd", ""), seen["cited"]


def test_a_key_signed_in_once_is_a_cookie_no_script_reads(data):
    ingest(data, "docs", SAMPLES)
    ingest(data, "private", SAMPLES / "optimisers.txt")
    key = create_key(data, "reader", "--scope", "search", "--libraries", "docs")
    with HttpServer(data, "--auth", "keys") as server:
        # The page itself holds nothing and is served; /mcp is not, without
        # a key.
        assert status_of(server.url)[0] == 401
        artifacts = ARTIFACTS / "keys"
        seen = drive(server.url, artifacts, library="docs", format="markdown", key=key,
                     query="why does dropout reduce overfitting")
        assert_page_sound(seen, artifacts)
        assert seen["signin_shown"] and seen["cookie_before"] == 0
        # A search-only key is offered no ingest control, nor keys.
        assert not seen["add_visible"] and not seen["keys_visible"]
        assert seen["cookies"] == [{"name": "folio_key", "httpOnly": True, "sameSite": "Strict"}], seen["cookies"]
        assert not seen["script_sees_cookie"]
        # The key's libraries only.
        assert seen["libraries"] == ["docs"], seen["libraries"]
        assert seen["hits"][0] == "Dropout as regularisation"
        # Without the app's header the cookie is no credential; with it, a
        # search-only key still may not write, and nothing was written.
        assert seen["forged_status"] == 401, seen
        assert seen["write_status"] == 403, seen
        listed = json.loads(subprocess.run([BIN, "ls", "--json"], env=folio_env(data), capture_output=True, text=True).stdout)
        assert {l["name"]: l["document_count"] for l in listed} == {"docs": 4, "private": 1}, listed
        # A wrong key is refused at sign-in.
        refused = subprocess.run(
            ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "X-Folio-App: 1",
             "-H", "Content-Type: application/json", "--data", '{"key": "folio_nothing"}', server.url + "/app/session"],
            capture_output=True, text=True)
        assert refused.stdout == "401", refused


def js(number):
    """A number as JavaScript prints it (5.0 is "5")."""
    return str(int(number)) if float(number).is_integer() else repr(float(number))


def admin_get(url, key, path):
    """The status and answer of one of the page's admin routes for `key`."""
    request = urllib.request.Request(url + path, headers={"Authorization": f"Bearer {key}", "X-Folio-App": "1"})
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, None


def test_an_admin_creates_and_revokes_keys_in_the_browser(data):
    """An admin of every library sees every key, creates one (shown once,
    and it works) and revokes another (refused at once after)."""
    ingest(data, "docs", SAMPLES)
    boss = create_key(data, "boss", "--scope", "search,ingest,admin")
    reader = create_key(data, "reader", "--scope", "search", "--libraries", "docs")
    audit_log = data.parent / "audit.jsonl"
    with HttpServer(data, "--auth", "keys", "--audit-log", str(audit_log)) as server:
        assert status_of(server.url, reader)[0] == 200
        # The audit log is an admin's of every library: a reader's request
        # is refused, even from the page.
        assert admin_get(server.url, reader, "/app/audit")[0] == 403
        assert admin_get(server.url, reader, "/app/history")[0] == 403
        assert admin_get(server.url, boss, "/app/audit")[0] == 200
        artifacts = ARTIFACTS / "admin"
        seen = drive(server.url, artifacts, library="docs", format="markdown", key=boss,
                     query="why does dropout reduce overfitting",
                     admin={"create": {"name": "ci-bot", "libraries": "docs"}, "revoke": "reader"})
        assert_page_sound(seen, artifacts)
        assert seen["keys_visible"] and seen["add_visible"]
        assert sorted(seen["keys_before"]) == ["boss", "reader"], seen["keys_before"]
        assert sorted(seen["keys_after"]) == ["boss", "ci-bot"], seen["keys_after"]
        assert seen["new_key"].startswith("folio_") and seen["new_key"] not in (boss, reader)
        assert status_of(server.url, seen["new_key"])[0] == 200
        assert status_of(server.url, reader)[0] == 401
        listed = subprocess.run([BIN, "keys", "ls", "--json"], env=folio_env(data), capture_output=True, text=True)
        made = next(k for k in json.loads(listed.stdout) if k["name"] == "ci-bot")
        assert made["scopes"] == ["search"] and made["libraries"] == ["docs"], made
        # The page showed the log's lines as the file held them then (it
        # only grows), newest first.
        assert seen["audit_visible"] and seen["audit_rows"], seen
        lines = [json.loads(line) for line in audit_log.read_text().splitlines()]
        shown = lines[:len(seen["audit_rows"])]
        assert seen["audit_rows"] == [[l["time"].replace("T", " ")[:19], l["caller"] or "—", l["transport"],
                                       l["operation"], l["library"] or "—", l["outcome"], f"{js(l['duration_ms'])} ms"]
                                      for l in reversed(shown)], (seen["audit_rows"], shown)
        assert any(l["caller"] == "boss" and l["operation"] == "list_libraries" for l in shown), shown
        # Calls over time: sixty bars a minute, the sentence saying their
        # sum; and, with nothing in flight, the server's minutes are the
        # audit log's lines counted by their minute.
        bars = seen["history_bars"]
        assert len(bars) == 60 and sum(b["calls"] for b in bars) >= 1, bars
        assert seen["history_summary"].startswith(f"{sum(b['calls'] for b in bars)} call(s) in the last hour, "
                                                  f"{sum(b['errors'] for b in bars)} answered with an error"), seen
        status, answer = admin_get(server.url, boss, "/app/history")
        assert status == 200
        lines = [json.loads(line) for line in audit_log.read_text().splitlines()]
        counted = collections.Counter(l["time"][:16] for l in lines)
        failed = collections.Counter(l["time"][:16] for l in lines if l["outcome"] != "ok")
        assert {m["minute"][:16]: (m["calls"], m["errors"]) for m in answer["minutes"]} == \
            {minute: (n, failed[minute]) for minute, n in counted.items()}, (answer, counted)
        assert admin_get(server.url, seen["new_key"], "/app/history")[0] == 403


def test_an_entity_card_and_its_graph_in_the_browser(data, tmp_path):
    """A library's entities (declared, and found in its notes) listed; one's
    card with its related entities drawn around it and the passages that
    mention it. Which notes mention it is an independent oracle: a
    word-bounded search of their texts for its names."""
    from test_entities import VENDORS, corpus, declared, mentions

    notes = tmp_path / "notes"
    notes.mkdir()
    docs = corpus()
    for doc in docs:
        (notes / doc["name"]).write_text(doc["text"])
    ingest(data, "kb", notes)
    declarations = tmp_path / "vendors.jsonl"
    declarations.write_text("".join(json.dumps(v) + "\n" for v in declared(VENDORS)))
    imported = subprocess.run([BIN, "entities", "import", str(declarations), "--library", "kb"],
                              env=folio_env(data), capture_output=True, text=True)
    assert imported.returncode == 0, imported.stderr
    globex = next(v for v in VENDORS if v["name"] == "Globex")
    mentioning = [d for d in docs if mentions(d["text"], globex)]
    with HttpServer(data) as server:
        artifacts = ARTIFACTS / "entities"
        seen = drive(server.url, artifacts, library="kb", format="markdown", entity="Globex",
                     query="Globex GmbH")
        assert_page_sound(seen, artifacts)
        assert seen["violations_entity"] == [], seen["violations_entity"]
        assert any(e.lower().startswith("globex · organization · ") for e in seen["entities"]), seen["entities"]
        assert seen["entity_title"] == "Globex" and seen["focused_entity"] == "entity-back"
        assert f"in {len(mentioning)} document(s)" in seen["entity_summary"], (seen["entity_summary"], len(mentioning))
        assert "Globex GmbH" in seen["entity_summary"]
        # Its related entities, drawn around it (at most twelve).
        assert seen["entity_related"], seen
        assert seen["entity_graph_nodes"] == min(12, len(seen["entity_related"]))
        assert seen["entity_graph_label"].startswith("Globex and ")
        # Every passage shown names it.
        assert seen["entity_evidence"] and all(mentions(e, globex) for e in seen["entity_evidence"]), seen["entity_evidence"]

        # The hit opened (the best for a question naming Globex) lists the
        # entities its document mentions, as the get_document tool gives
        # them: Globex among them.
        async def listed():
            async with http_mcp(server.url) as c:
                return (await ok(c, "get_document", {"document_id": seen["opened_document"]}))

        document = run(listed())
        assert seen["document_entities"] == [f"{e['entity']} · {e['type']} · {e['mentions']}"
                                             for e in document["entities"][:20]], seen["document_entities"]
        assert mentions(document["text"], globex), document["title"]
        assert any(e["entity"] == "globex" and e["mentions"] >= 1 for e in document["entities"]), document["entities"]


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def unfollowed(url, headers=None):
    """The status and headers of a GET, its redirect not followed."""
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(urllib.request.Request(url, headers=headers or {}), timeout=30) as r:
            return r.status, r.headers
    except urllib.error.HTTPError as e:
        return e.code, e.headers


@contextlib.contextmanager
def provider_and_server(data, tmp_path, **provider_env):
    """The test identity provider and a folio server that takes its tokens
    and signs the web app in there (client folio-web); the provider's
    grants and revocations logged on its stdout."""
    from test_oauth import Provider, rsa_key

    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    _, jwk = rsa_key("web")
    idp = Provider(tmp_path, [jwk], resource, env={"LOG_GRANTS": "1", **provider_env})
    try:
        config = tmp_path / "oauth.toml"
        write_config(config, '[serve.oauth]\nlibraries_claim = "libraries"\nleeway_secs = 0\n')
        with HttpServer(data, "--auth", "oauth", "--issuer", idp.issuer, "--resource", resource,
                        "--app-client-id", "folio-web", config=config, port=port,
                        env={"FOLIO_APP_CLIENT_SECRET": "folio-web-secret"}) as server:
            yield idp, server
    finally:
        idp.stop()


def provider_log(idp):
    """What the provider logged (read once it has stopped)."""
    idp.stop()
    return [json.loads(line) for line in idp.process.stdout.read().splitlines() if line.startswith("{")]


def test_a_person_signs_in_at_the_identity_provider_in_the_browser(data, tmp_path):
    """OAuth mode: the page sends the browser to the provider's login page
    and back; the session lives in an HttpOnly, SameSite=Strict cookie no
    script reads, holding an id (never a token), and gives the person what
    their account allows: one library, search only. A token about to expire
    is renewed with the refresh token; signing out ends the session and
    revokes the refresh token at the provider."""
    ingest(data, "wiki", SAMPLES)
    ingest(data, "private", SAMPLES / "optimisers.txt")
    with provider_and_server(data, tmp_path, ACCESS_TOKEN_TTL="35") as (idp, server):
        # The sign-in's first step: to the provider, with PKCE (S256), the
        # resource, and a state the browser keeps in a cookie for the callback.
        status, headers = unfollowed(server.url + "/app/signin")
        assert status == 303
        sent = urllib.parse.urlparse(headers["Location"])
        asked = dict(urllib.parse.parse_qsl(sent.query))
        assert f"{sent.scheme}://{sent.netloc}" == idp.issuer
        assert asked["response_type"] == "code" and asked["client_id"] == "folio-web"
        assert asked["code_challenge_method"] == "S256" and len(asked["code_challenge"]) == 43
        assert asked["resource"] == server.url + "/mcp"
        assert asked["redirect_uri"] == server.url + "/app/callback"
        state_cookie = headers["Set-Cookie"]
        assert state_cookie.startswith(f"folio_signin={asked['state']};"), state_cookie
        assert "HttpOnly" in state_cookie and "SameSite=Lax" in state_cookie and "Path=/app/callback" in state_cookie
        # A callback this browser did not begin (no cookie, or another
        # state) signs no one in.
        for cookie in [None, "folio_signin=someone-elses"]:
            status, headers = unfollowed(f"{server.url}/app/callback?code=anything&state={asked['state']}",
                                         {"Cookie": cookie} if cookie else {})
            assert status == 303 and headers["Location"] == "/?signin=refused", headers
            assert "folio_session=" not in " ".join(headers.get_all("Set-Cookie") or [])

        artifacts = ARTIFACTS / "oauth"
        seen = drive(server.url, artifacts, library="wiki", format="markdown",
                     query="why does dropout reduce overfitting",
                     login={"name": "rene", "password": "rene-password", "wait_seconds": 6, "sign_out": True})
        assert_page_sound(seen, artifacts)
        assert seen["violations_signin"] == [], seen["violations_signin"]
        assert seen["signin_shown"] and seen["cookie_before"] == 0
        assert seen["provider_origin"] == idp.issuer and seen["back_at"] == server.url + "/"
        assert seen["who"] == "signed in as rene"
        # The session cookie only: the sign-in's state cookie is gone (the
        # provider's own cookies share the host: a cookie knows no port).
        ours = [c for c in seen["cookies"] if c["name"].startswith("folio_")]
        assert ours == [{"name": "folio_session", "httpOnly": True, "sameSite": "Strict"}], seen["cookies"]
        assert not seen["script_sees_cookie"]
        # The account's library and scope: no ingest, no admin views.
        assert seen["libraries"] == ["wiki"], seen["libraries"]
        assert seen["hits"][0] == "Dropout as regularisation"
        assert not seen["add_visible"] and not seen["keys_visible"] and not seen["history_visible"]
        assert seen["forged_status"] == 401, seen
        assert seen["write_status"] == 403, seen
        # Six seconds after signing in, a 35-second token is within the
        # renewal margin: the server renewed it and the search answered.
        assert seen["hits_later"][:1] == ["Dropout as regularisation"] and not seen["signin_later"], seen
        # Signed out: the cookie is gone and names no session any more.
        assert "folio_session" not in seen["signed_out_cookies"], seen["signed_out_cookies"]
        assert not seen["signed_out_libraries_visible"]
        assert seen["after_sign_out_status"] == 401
        log = provider_log(idp)
        grants = [line["grant"] for line in log if "grant" in line]
        assert grants[0] == "authorization_code" and grants.count("authorization_code") == 1, grants
        assert "refresh_token" in grants, grants
        assert {"revoked": 200} in log, log
    listed = json.loads(subprocess.run([BIN, "ls", "--json"], env=folio_env(data), capture_output=True, text=True).stdout)
    assert {l["name"]: l["document_count"] for l in listed} == {"wiki": 4, "private": 1}, listed


def test_a_provider_session_ends_with_its_token_and_an_admin_sees_the_admin_views(data, tmp_path):
    """An admin of every library, signed in at the provider, sees every
    library, the ingest controls and the calls over time. Without a refresh
    token the session ends when its access token does: the page asks to
    sign in again."""
    ingest(data, "wiki", SAMPLES)
    ingest(data, "private", SAMPLES / "optimisers.txt")
    with provider_and_server(data, tmp_path, ACCESS_TOKEN_TTL="20", REFRESH_TOKENS="0") as (idp, server):
        artifacts = ARTIFACTS / "oauth-admin"
        seen = drive(server.url, artifacts, library="wiki", format="markdown",
                     query="why does dropout reduce overfitting",
                     login={"name": "ada", "password": "ada-password", "wait_seconds": 21})
        assert_page_sound(seen, artifacts)
        assert seen["who"] == "signed in as ada"
        assert sorted(seen["libraries"]) == ["private", "wiki"], seen["libraries"]
        assert seen["add_visible"] and seen["history_visible"] and not seen["keys_visible"], seen
        assert seen["hits"][0] == "Dropout as regularisation"
        # 21 seconds after signing in, the 20-second token has expired, with
        # nothing to renew it: the page offers the sign-in again.
        assert seen["hits_later"] == [] and seen["signin_later"], seen
        assert seen["status_later"] == "the access token has expired: sign in again", seen["status_later"]
        log = provider_log(idp)
        assert [line["grant"] for line in log if "grant" in line] == ["authorization_code"], log


APP_DRIVER = ROOT / "tests/web/mcp-app.mjs"
VIEWER = "ui://folio/viewer.html"


def drive_app(url, **args):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    args = {"url": url, "artifacts": str(ARTIFACTS), **args}
    done = subprocess.run(["node", str(APP_DRIVER), json.dumps(args)], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert "failure" not in seen, (seen["failure"], seen.get("errors"))
    return seen


def test_the_mcp_app_view_under_the_apps_package_host(data):
    """The MCP App: the TypeScript SDK's client declares the extension, the
    MCP Apps package's AppBridge hosts the view in chromium, the view shows
    the search result and opens a passage by calling get_chunks through the
    host. A client that does not declare the extension sees no view."""
    from pdfs import pdf

    ingest(data, "docs", SAMPLES)
    fields = data.parent / "fields.pdf"
    fields.write_bytes(pdf(PDF_PAGES))
    ingest(data, "papers", fields)
    with HttpServer(data) as server:
        seen = drive_app(server.url, library="docs", query="why does dropout reduce overfitting",
                         pdf={"library": "papers", "query": "does drainage raise the yield of grain"})
        assert "io.modelcontextprotocol/ui" in seen["server_extensions"], seen
        assert seen["tool_views"] == {"search": VIEWER, "get_document": VIEWER}
        assert seen["ui_resources"] == [{"uri": VIEWER, "mimeType": "text/html;profile=mcp-app"}]
        assert seen["view_mime"] == "text/html;profile=mcp-app"
        assert seen["view_bytes"] < 100_000
        assert seen["errors"] == [], seen["errors"]
        assert seen["hits"][0] == "Dropout as regularisation", seen["hits"]
        assert all(c.startswith(str(SAMPLES)) for c in seen["citations"]), seen["citations"]
        # The passage the view opened, through the host, is the first hit's,
        # marked among its neighbours.
        assert seen["calls_from_view"] == ["get_chunks"]
        words = lambda text: " ".join(text.split())
        assert words(seen["marked"]) in words((SAMPLES / "dropout.md").read_text()), seen["marked"]
        assert (ARTIFACTS / "mcp-app.png").stat().st_size > 10_000
        # A PDF hit's page, read by the view through the host's
        # resources/read, its cited chunk marked.
        assert seen["page_button"] == "Show page 1", seen
        assert seen["reads_from_view"] and all(
            u.startswith("folio://document/") and u.endswith("/page/1?chunk=0") for u in seen["reads_from_view"]), seen
        assert (seen["page_image"]["width"], seen["page_image"]["height"]) == (round(612 * 1600 / 792 + 0.5), 1600)
        assert seen["page_image"]["alt"] == f"Page 1 of {fields}, the cited passage marked", seen["page_image"]

        plain = drive_app(server.url, plain=True)
        assert "io.modelcontextprotocol/ui" not in (plain["server_extensions"] or {}), plain
        assert plain["tool_views"] == {} and plain["ui_resources"] == [], plain
