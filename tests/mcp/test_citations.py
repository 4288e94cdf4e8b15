"""Zotero libraries, reference lists, citations on hits, find_quote and
cross-source dedup — through the CLI and a real MCP client."""

import http.server
import json
import shutil
import subprocess
import threading

from conftest import BIN, folio_env, ok, pdf, run, scanned_pdf, stdio, SAMPLES
from zotero_fixture import Zotero

PAGE1 = "Transformers replace recurrence with self-attention over all positions of the input."
PAGE2 = "Positional encodings give the model the order of the tokens in a sequence of words."


def folio(data, *args, check=True):
    done = subprocess.run([BIN, *args, "--json"], env=folio_env(data), capture_output=True, text=True)
    if check:
        assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def build_zotero(root):
    z = Zotero(root)
    z.collection("Thesis")
    z.collection("Chapter 2", parent="Thesis")
    z.collection("Other")
    a = z.item("AAAA1111", {"title": "Attention in transformers", "DOI": "10.1000/ATTN", "date": "2017-06-12",
                            "publicationTitle": "NeurIPS", "language": "en"},
               creators=[("Ashish", "Vaswani"), ("Noam", "Shazeer")], tags=["ml", "reading"], collections=["Chapter 2"])
    z.attach(a, "ATT00001", "Vaswani 2017.pdf", pdf([PAGE1, PAGE2]))
    b = z.item("BBBB2222", {"title": "Dropout study", "extra": "Citation Key: srivastava2014", "date": "2014"},
               creators=[("Nitish", "Srivastava")], tags=["ml"], collections=["Other"])
    z.attach(b, "ATT00002", "dropout.pdf", pdf(["Dropout removes units at random while training a network."]))
    z.item("CCCC3333", {"title": "Graph theory notes", "abstractNote": "Planar graphs can be coloured with four colours.",
                        "citationKey": "notes2020", "date": "2020"}, tags=["math"], collections=["Thesis"])
    d = z.item("DDDD4444", {"title": "Deleted paper"}, tags=["ml"], collections=["Chapter 2"])
    z.attach(d, "ATT00004", "deleted.pdf", pdf(["This item is in the trash."]))
    z.delete(d)
    z.better_bibtex([(a, "AAAA1111", "vaswani2017attention")])
    z.close()
    return a


def test_zotero_references_quotes_and_dedup(data, tmp_path):
    root = tmp_path / "Zotero"
    item_a = build_zotero(root)
    db_before = (root / "zotero.sqlite").read_bytes()

    # A collection (with its subcollections) and a tag select the items.
    first = folio(data, "ingest", "--zotero", str(root), "--library", "papers", "--collection", "Thesis", "--tag", "ml")
    assert [i["source"] for i in first["items"]] == ["zotero:AAAA1111/ATT00001"] and first["indexed"] == 1
    everything = folio(data, "ingest", "--zotero", str(root), "--library", "papers")
    assert everything["indexed"] == 2 and everything["skipped"] == 1 and everything["failed"] == 0
    sources = sorted(i["source"] for i in everything["items"])
    assert sources == ["zotero:AAAA1111/ATT00001", "zotero:BBBB2222/ATT00002", "zotero:CCCC3333"]
    again = folio(data, "ingest", "--zotero", str(root), "--library", "papers")
    assert again["skipped"] == 3 and again["indexed"] == again["replaced"] == 0, "incremental"
    assert (root / "zotero.sqlite").read_bytes() == db_before, "the Zotero database is only read"

    # An edited item (same file) refreshes its metadata without re-indexing.
    z = Zotero.reopen(root)
    z.set_field(item_a, "title", "Attention is all you need")
    z.close()
    edited = folio(data, "ingest", "--zotero", str(root), "--library", "papers")
    assert edited["skipped"] == 3

    # The same PDF from a folder and from a URL: one document, three locators.
    folder = tmp_path / "folder"
    folder.mkdir()
    shutil.copy(root / "storage" / "ATT00001" / "Vaswani 2017.pdf", folder / "attention.pdf")
    copy = folio(data, "ingest", str(folder), "--library", "papers")
    attention_id = next(i["document_id"] for i in everything["items"] if i["source"].startswith("zotero:AAAA"))
    assert copy["skipped"] == 1 and copy["items"][0]["document_id"] == attention_id

    body = (folder / "attention.pdf").read_bytes()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "application/pdf")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/paper.pdf"
    try:
        fetched = folio(data, "ingest", url, "--library", "papers", "--allow-private-urls")
    finally:
        server.shutdown()
    assert fetched["skipped"] == 1 and fetched["items"][0]["document_id"] == attention_id
    listing = folio(data, "ls", "papers")
    assert listing["total"] == 3, "no duplicates"
    doc = folio(data, "get", attention_id)
    locators = doc["metadata"]["locators"]
    assert locators[0] == "zotero:AAAA1111/ATT00001" and len(locators) == 3
    assert any(l.endswith("attention.pdf") for l in locators) and url in locators

    # A reference list matched by title gives the sample documents citekeys.
    samples = tmp_path / "samples"
    shutil.copytree(SAMPLES, samples)
    refs = tmp_path / "refs.json"
    refs.write_text(json.dumps([{"id": "ioffe2015", "type": "article-journal", "title": "Batch normalisation",
                                 "DOI": "10.5555/3045118", "author": [{"family": "Ioffe", "given": "Sergey"}],
                                 "issued": {"date-parts": [[2015]]}}]))
    folio(data, "ingest", str(samples / "batch-normalisation.md"), "--library", "papers", "--references", str(refs))

    async def go():
        async with stdio(data) as c:
            found = await ok(c, "search", {"library": "papers", "query": "positional encodings order of tokens", "top_k": 1})
            hit = found["hits"][0]
            citation = hit["citation"]
            assert citation["citekey"] == "vaswani2017attention" and citation["doi"] == "10.1000/attn"
            assert citation["authors"] == ["Vaswani, Ashish", "Shazeer, Noam"] and citation["year"] == 2017
            assert citation["title"] == "Attention is all you need", "refreshed metadata"
            assert hit["page_start"] <= 2 <= hit["page_end"], "the passage is on page 2"
            assert hit["metadata"]["tags"] == ["ml", "reading"] and hit["metadata"]["collections"] == ["Chapter 2"]

            notes = await ok(c, "search", {"library": "papers", "query": "planar graphs four colours", "top_k": 1})
            assert notes["hits"][0]["citation"]["citekey"] == "notes2020"
            dropout = await ok(c, "search", {"library": "papers", "query": "dropout removes units", "top_k": 1})
            assert dropout["hits"][0]["citation"]["citekey"] == "srivastava2014"
            batch = await ok(c, "search", {"library": "papers", "query": "batch normalisation", "top_k": 1})
            assert batch["hits"][0]["citation"]["citekey"] == "ioffe2015"

            exact = await ok(c, "find_quote", {"passage": "the ORDER of the tokens in a sequence"})
            m = exact["matches"][0]
            assert exact["found"] and m["exact"] and m["score"] == 1.0
            assert m["document_id"] == attention_id and m["page_start"] <= 2 <= m["page_end"]
            assert m["citation"]["citekey"] == "vaswani2017attention"
            assert m["text"].lower() == "the order of the tokens in a sequence"
            document = await ok(c, "get_document", {"document_id": attention_id})
            assert document["text"][m["char_start"]:m["char_end"]].lower() == "the order of the tokens in a sequence"
            fuzzy = await ok(c, "find_quote", {"passage": "Positional encoding gives the model the order of tokens in a sequence", "libraries": ["papers"]})
            assert fuzzy["found"] and not fuzzy["matches"][0]["exact"] and fuzzy["matches"][0]["score"] >= 0.8
            assert fuzzy["matches"][0]["page_end"] == 2
            missing = await ok(c, "find_quote", {"passage": "completely absent sentence about volcano eruptions"})
            assert missing == {"found": False, "matches": []}
            assert (await c.call_tool("find_quote", {"passage": "x"})).is_error
            assert (await c.call_tool("find_quote", {"passage": "abc", "libraries": ["nope"]})).is_error

        # citeloom's ingest_from_source reads the same Zotero library (into a
        # project made beforehand, as the seed requires).
        folio(data, "create", "zot")
        async with stdio(data, "--toolsets", "citeloom") as c:
            result = await ok(c, "ingest_from_source", {"project": "zot", "source": "zotero",
                                                         "options": {"zotero_dir": str(root), "tag": "ml"}})
            assert result["documents_processed"] == 2 and result["chunks_written"] > 0
            query = await ok(c, "query", {"project": "zot", "text": "dropout removes units"})
            assert query["items"][0]["citekey"] == "srivastava2014"
            bad = await c.call_tool("ingest_from_source", {"project": "zot", "source": "zotero",
                                                           "options": {"zotero_dir": str(tmp_path / "missing")}})
            assert bad.is_error

    run(go())


SCAN_DE = "Die Verfassung garantiert die Freiheit der Wissenschaft und der Lehre"
SCAN_EN = "Glaciers retreat as summer temperatures rise across the Alpine valleys"


def test_zotero_scans_are_read_in_the_item_language(data, tmp_path):
    root = tmp_path / "Zotero"
    z = Zotero(root)
    german = z.item("GGGG7777", {"title": "Grundrechte", "language": "Deutsch", "date": "1999"})
    z.attach(german, "ATT00007", "grundrechte.pdf", scanned_pdf([SCAN_DE]))
    english = z.item("HHHH8888", {"title": "Glaciers", "date": "2021"})
    z.attach(english, "ATT00008", "glaciers.pdf", scanned_pdf(["Scanned cover page of the glacier survey", SCAN_EN]))
    z.close()

    folio(data, "create", "scans")

    async def go():
        async with stdio(data, "--toolsets", "citeloom") as c:
            result = await ok(c, "ingest_from_source", {"project": "scans", "source": "zotero",
                                                         "options": {"zotero_dir": str(root), "ocr_languages": ["en"]}})
            assert result["documents_processed"] == 2 and result["warnings"] == [], result
            found = await ok(c, "query", {"project": "scans", "text": "glaciers retreat as summer temperatures rise"})
            top = found["items"][0]
            assert top["title"] == "Glaciers" and top["page_span"] == [1, 2], top
            assert "alpine valleys" in top["render_text"].lower()
            found = await ok(c, "query", {"project": "scans", "text": "Freiheit der Wissenschaft"})
            assert found["items"][0]["title"] == "Grundrechte"

    run(go())
    documents = folio(data, "ls", "scans")["documents"]
    ocr = {d["title"]: folio(data, "get", d["id"])["metadata"]["ocr"] for d in documents}
    # The item's own language wins over the request's; the request's over the default (en, de).
    assert ocr["Grundrechte"]["languages"] == ["deu"] and ocr["Glaciers"]["languages"] == ["eng"]
    assert ocr["Glaciers"]["pages"] == "1-2" and ocr["Grundrechte"]["pages"] == "1"
    assert ocr["Glaciers"]["engine"].startswith("tesseract") and ocr["Glaciers"]["confidence"] > 60
