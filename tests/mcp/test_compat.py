"""The compatibility toolsets, each against its seed contract."""

import http.server
import json
import random
import subprocess
import threading
import urllib.error
import urllib.request

from conftest import BIN, BMCIS_SHAPES, HttpServer, call, fails, folio_env, http_mcp, ok, run, stdio, write_config

ITEM_KEYS = {"render_text", "score", "citekey", "section", "page_span", "section_path", "doi", "full_text"}


def byo_items(count, dim=384, model=None, seed=1):
    rng = random.Random(seed)
    items = []
    for i in range(count):
        metadata = {
            "project": "research/papers",
            "source": {"path": "ext/book.pdf", "title": "External Book"},
            "zotero": {"citekey": f"book{i}", "tags": ["external"]},
            "doc": {"page_span": [i + 1, i + 2], "section": "Part", "section_path": ["Part I"]},
        }
        if model:
            metadata["embed_model"] = model
        items.append({"id": f"chunk-{i}", "text": f"Stored chunk {i} on graph theory.", "embedding": [rng.uniform(-1, 1) for _ in range(dim)], "metadata": metadata})
    return items


def test_citeloom_contract(data, corpus, tmp_path):
    config = write_config(tmp_path / "c.toml", "[serve.timeouts]\nlist_projects = 0\n")

    async def go():
        async with stdio(data, "--toolsets", "citeloom", config=config) as c:
            names = [t.name for t in (await c.list_tools()).tools]
            assert names == ["ingest_from_source", "store_chunks", "query", "find_chunks", "query_hybrid", "inspect_collection", "list_projects"]
            empty = await ok(c, "list_projects")
            assert empty["projects"] == [] and empty["count"] == 0 and empty["correlation_id"]
            # Projects are made by the user, beside the connected agent.
            for project in ("research/papers", "other"):
                made = subprocess.run([BIN, "create", project], env=folio_env(data, config), capture_output=True)
                assert made.returncode == 0, made.stderr

            ingested = await ok(c, "ingest_from_source", {"project": "research/papers", "source": str(corpus)})
            assert ingested["documents_processed"] == 5 and ingested["chunks_written"] > 0
            assert ingested["project"] == "research/papers" and ingested["dense_model"].endswith("all-MiniLM-L6-v2")
            assert set(ingested) >= {"sparse_model", "duration_seconds", "warnings", "correlation_id"}
            zotero = await fails(c, "ingest_from_source", {"project": "research/papers", "source": "zotero", "options": {"zotero_dir": str(corpus / "no-zotero")}})
            assert zotero["error"]["code"] == "NOT_FOUND" and zotero["correlation_id"]

            result = await ok(c, "query", {"project": "research/papers", "text": "positional encodings"})
            assert result["count"] == len(result["items"]) <= 6 and result["model"].endswith("all-MiniLM-L6-v2")
            item = result["items"][0]
            assert ITEM_KEYS <= set(item) and item["full_text"] is None
            assert item["page_span"] == [1, 2] and 0 <= item["score"] <= 1
            full = await ok(c, "query", {"project": "research/papers", "text": "dropout", "top_k": 2, "include_full_text": True})
            assert full["count"] == 2 and full["items"][0]["full_text"]
            assert all(len(i["render_text"]) <= 1800 for i in full["items"])

            found = await ok(c, "find_chunks", {"project": "research/papers", "query": "batch normalisation", "top_k": 3})
            assert found["count"] == 3 and set(found) == {"items", "count", "correlation_id"}

            hybrid = await ok(c, "query_hybrid", {"project": "research/papers", "text": "self-attention"})
            assert hybrid["hybrid_enabled"] is True and hybrid["fusion"] == "RRF"
            assert set(hybrid) >= {"items", "count", "dense_model", "sparse_model", "correlation_id"}
            alias = await ok(c, "query_hybrid", {"project": "research/papers", "query": "self-attention"})
            assert [i["render_text"] for i in alias["items"]] == [i["render_text"] for i in hybrid["items"]]

            # Server-side project filtering: a project filter cannot widen the scope.
            await ok(c, "ingest_from_source", {"project": "other", "source": str(corpus / "dropout.md")})
            scoped = await ok(c, "query", {"project": "other", "text": "attention", "filters": {"project": "research/papers"}})
            assert scoped["count"] >= 1 and all(i["source"].endswith("dropout.md") for i in scoped["items"])

            for tool, args in [
                ("query", {"project": "nope", "text": "x"}),
                ("find_chunks", {"project": "nope", "query": "x"}),
                ("query_hybrid", {"project": "nope", "text": "x"}),
                ("inspect_collection", {"project": "nope"}),
                ("store_chunks", {"project": "nope", "items": byo_items(100)}),
            ]:
                err = await fails(c, tool, args)
                assert err["error"]["code"] == "INVALID_PROJECT", tool
                assert "research/papers" in err["error"]["details"]["available_projects"]
                assert err["correlation_id"]
            assert (await fails(c, "query", {"project": "research/papers", "text": "x", "top_k": 21}))["error"]["code"] == "INVALID_ARGUMENT"

            # store_chunks: batch bounds, idempotence, embedding checks.
            assert "100" in (await fails(c, "store_chunks", {"project": "research/papers", "items": byo_items(99)}))["error"]["message"]
            assert (await fails(c, "store_chunks", {"project": "research/papers", "items": byo_items(501)}))["error"]["code"] == "INVALID_ARGUMENT"
            before = (await ok(c, "inspect_collection", {"project": "research/papers"}))["size"]
            stored = await ok(c, "store_chunks", {"project": "research/papers", "items": byo_items(100, model="fastembed/all-MiniLM-L6-v2")})
            assert stored["chunks_written"] == 100 and stored["embed_model"].endswith("all-MiniLM-L6-v2")
            await ok(c, "store_chunks", {"project": "research/papers", "items": byo_items(100)})
            assert (await ok(c, "inspect_collection", {"project": "research/papers"}))["size"] == before + 100
            assert (await fails(c, "store_chunks", {"project": "research/papers", "items": byo_items(100, dim=768)}))["error"]["code"] == "EMBEDDING_MISMATCH"
            assert (await fails(c, "store_chunks", {"project": "research/papers", "items": byo_items(100, model="BAAI/bge-small-en-v1.5")}))["error"]["code"] == "EMBEDDING_MISMATCH"
            cited = await ok(c, "query_hybrid", {"project": "research/papers", "text": "stored chunk graph theory", "filters": {"tags": ["external"]}})
            assert cited["items"] and cited["items"][0]["citekey"].startswith("book")

            inspected = await ok(c, "inspect_collection", {"project": "research/papers", "sample": 5})
            assert inspected["collection"] == "proj-research-papers" and len(inspected["sample_payloads"]) == 5
            assert set(inspected) >= {"dense_model", "sparse_model", "named_vectors", "payload_keys", "indexes", "storage"}
            assert (await fails(c, "inspect_collection", {"project": "research/papers", "sample": 6}))["error"]["code"] == "INVALID_ARGUMENT"

            projects = await ok(c, "list_projects")
            assert projects["count"] == 2 and {p["id"] for p in projects["projects"]} == {"research/papers", "other"}
            assert all(p["hybrid_enabled"] and p["collection"].startswith("proj-") for p in projects["projects"])

    run(go())


def test_bmcis_contract(data, corpus, tmp_path):
    config = write_config(tmp_path / "c.toml", '[serve]\nbmcis_library = "kb"\n')
    shapes = BMCIS_SHAPES

    async def go():
        async with stdio(data, "--toolsets", "native,bmcis", config=config) as c:
            await ok(c, "ingest", {"library": "kb", "paths": [str(corpus)]})
            default = await ok(c, "semantic_search", {"query": "regularisation of neural networks"})
            assert set(default) == {"results", "total_found", "strategy_used", "execution_time_ms"}
            assert default["strategy_used"] == "hybrid" and default["total_found"] == len(default["results"])
            assert set(default["results"][0]) == shapes["metadata"]
            for mode, keys in shapes.items():
                out = await ok(c, "semantic_search", {"query": "dropout", "top_k": 3, "response_mode": mode})
                assert len(out["results"]) == 3 and [r["rank"] for r in out["results"]] == [1, 2, 3]
                for r in out["results"]:
                    assert set(r) == keys, mode
                    assert isinstance(r["chunk_id"], int)
            full = (await ok(c, "semantic_search", {"query": "dropout", "top_k": 1, "response_mode": "full"}))["results"][0]
            assert full["chunk_token_count"] > 0 and full["score_type"] == "hybrid" and full["chunk_text"]
            for bad in [{"query": ""}, {"query": "x" * 501}, {"query": "x", "top_k": 0}, {"query": "x", "top_k": 51}, {"query": "x", "response_mode": "all"}]:
                await fails(c, "semantic_search", bad)

    run(go())


class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"<html><head><title>Served Page</title></head><body><h1>Served</h1><p>Gradient clipping keeps recurrent training stable.</p></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_mcpvectordb_contract(data, corpus, tmp_path):
    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    page_url = f"http://127.0.0.1:{site.server_address[1]}/page"
    note = tmp_path / "note.md"
    note.write_text("# Note\n\nAn original note about kernels.")
    bad = corpus / "broken.pdf"
    bad.write_bytes(b"%PDF-1.4 this is not a pdf")

    async def go():
        async with stdio(data, "--toolsets", "mcpvectordb") as c:
            first = await ok(c, "ingest_file", {"path": str(note)})
            assert set(first) == {"status", "doc_id", "source", "library", "chunk_count"}
            assert (first["status"], first["library"]) == ("indexed", "default")
            assert (await ok(c, "ingest_file", {"path": str(note)}))["status"] == "skipped"
            note.write_text("# Note\n\nA changed note about kernels.")
            replaced = await ok(c, "ingest_file", {"path": str(note)})
            assert replaced["status"] == "replaced" and replaced["doc_id"] == first["doc_id"]
            missing = await fails(c, "ingest_file", {"path": str(tmp_path / "missing.pdf")})
            assert missing["status"] == "error" and missing["error"]

            content = await ok(c, "ingest_content", {"content": "# Pasted\n\nPasted text on eigenvalues.", "source": "upload://pasted.md", "library": "pasted"})
            assert content["status"] == "indexed" and content["library"] == "pasted"
            private = await fails(c, "ingest_url", {"url": page_url})
            assert private["status"] == "error" and "127.0.0.1" in private["error"], private

            folder = await ok(c, "ingest_folder", {"folder": str(corpus), "library": "papers"})
            assert folder["total_files"] == 6 and folder["indexed"] == 5 and folder["failed"] == 1
            assert folder["errors"][0]["file"].endswith("broken.pdf") and folder["errors"][0]["error"]
            flat = await ok(c, "ingest_folder", {"folder": str(corpus), "library": "flat", "recursive": False})
            assert flat["total_files"] == 5 and all("nested" not in r["source"] for r in flat["results"])
            again = await ok(c, "ingest_folder", {"folder": str(corpus), "library": "papers"})
            assert again["skipped"] == 5
            for args in [{"folder": ""}, {"folder": str(corpus), "max_concurrency": 0}, {"folder": str(tmp_path / "none")}, {"folder": str(note)}]:
                assert (await fails(c, "ingest_folder", args))["status"] == "error"

            everywhere = await ok(c, "search", {"query": "kernels eigenvalues dropout", "top_k": 100})
            assert {r["library"] for r in everywhere["results"]} >= {"default", "pasted", "papers"}
            result = (await ok(c, "search", {"query": "positional encodings", "library": "papers"}))["results"]
            assert len(result) <= 5
            assert set(result[0]) == {"doc_id", "source", "title", "library", "file_type", "last_modified", "page", "content", "chunk_index", "metadata"}
            pdfs = await ok(c, "search", {"query": "attention", "library": "papers", "filter": {"file_type": "pdf", "page": 1}})
            assert pdfs["results"] and all(r["file_type"] == "pdf" and r["page"] == 1 for r in pdfs["results"])
            assert all(r["page"] == 0 for r in (await ok(c, "search", {"query": "dropout", "library": "papers", "filter": {"file_type": "md"}}))["results"])
            assert "colour" in (await fails(c, "search", {"query": "x", "filter": {"colour": "red"}}))["error"]
            for top_k in (0, 101):
                assert (await fails(c, "search", {"query": "x", "top_k": top_k}))["status"] == "error"

            listed = await ok(c, "list_documents", {"library": "papers", "limit": 2, "offset": 1})
            assert listed["count"] == 2 and set(listed["documents"][0]) == {"doc_id", "source", "title", "library", "content_hash", "created_at", "metadata", "chunk_count"}
            assert (await ok(c, "list_documents"))["count"] == 11
            assert (await fails(c, "list_documents", {"limit": 1001}))["status"] == "error"
            libraries = (await ok(c, "list_libraries"))["libraries"]
            assert {l["library"]: l["document_count"] for l in libraries} == {"default": 1, "flat": 4, "pasted": 1, "papers": 5}

            document = await ok(c, "get_document", {"doc_id": first["doc_id"]})
            assert "changed note" in document["content"] and document["chunk_count"] == first["chunk_count"]
            deleted = await ok(c, "delete_document", {"doc_id": first["doc_id"]})
            assert deleted == {"status": "deleted", "doc_id": first["doc_id"], "deleted_chunks": first["chunk_count"]}
            assert (await fails(c, "get_document", {"doc_id": first["doc_id"]}))["status"] == "error"

            # Any library name, in the seed's own spelling; counts, then gone.
            pasted = await ok(c, "ingest_content", {"content": "Notes on kelp forests.", "source": "kelp", "library": "Field notes"})
            dropped = await ok(c, "delete_library", {"library": "Field notes"})
            assert dropped == {"status": "deleted", "library": "Field notes", "deleted_documents": 1, "deleted_chunks": pasted["chunk_count"]}
            assert "Field notes" not in {l["library"] for l in (await ok(c, "list_libraries"))["libraries"]}
            assert (await fails(c, "delete_library", {"library": "Field notes"}))["status"] == "error"

            info = await ok(c, "server_info", {"check_path": str(corpus / "dropout.md")})
            assert info["transport"] == "stdio" and info["path_check"]["readable"] and info["path_check"]["size_bytes"] > 0
            unreadable = await ok(c, "server_info", {"check_path": str(tmp_path / "nope")})
            assert unreadable["path_check"]["readable"] is False and unreadable["path_check"]["error"]
            assert "path_check" not in await ok(c, "server_info")

        async with stdio(data, "--toolsets", "mcpvectordb", "--allow-private-urls") as c:
            fetched = await ok(c, "ingest_url", {"url": page_url, "library": "web"})
            assert fetched["status"] == "indexed" and fetched["source"] == page_url

    run(go())
    site.shutdown()


def multipart(fields):
    boundary = "folioBoundary7"
    body = bytearray()
    for name, value in fields:
        body += f"--{boundary}\r\n".encode()
        if isinstance(value, tuple):
            filename, content = value
            body += f'Content-Disposition: form-data; name="{name}"; filename="{filename}"\r\nContent-Type: application/octet-stream\r\n\r\n'.encode()
            body += content
        else:
            body += f'Content-Disposition: form-data; name="{name}"\r\n\r\n{value}'.encode()
        body += b"\r\n"
    body += f"--{boundary}--\r\n".encode()
    return bytes(body), f"multipart/form-data; boundary={boundary}"


def upload(url, fields):
    body, kind = multipart(fields)
    request = urllib.request.Request(url + "/upload", data=body, headers={"Content-Type": kind}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def test_upload_endpoint(data, corpus):
    with HttpServer(data, "--toolsets", "mcpvectordb") as server:
        status, body = upload(server.url, [("file", ("paper.pdf", (corpus / "nested" / "transformers.pdf").read_bytes())), ("library", "uploads"), ("metadata", '{"author": "Alice"}')])
        assert status == 200 and body["status"] == "indexed" and body["library"] == "uploads" and body["chunk_count"] >= 1
        status, body = upload(server.url, [("file", ("paper.pdf", (corpus / "nested" / "transformers.pdf").read_bytes())), ("library", "uploads")])
        assert status == 200 and body["status"] == "skipped"
        assert upload(server.url, [("library", "uploads")])[0] == 400
        assert upload(server.url, [("file", ("a.md", b"# A")), ("metadata", "{not json")])[0] == 400
        assert upload(server.url, [("file", ("a.md", b"# A")), ("metadata", "[1]")])[0] == 400
        status, body = upload(server.url, [("file", ("tool.exe", b"MZ\x90\x00"))])
        assert status == 422 and body["status"] == "error"
        # Seed 004: 422 is an unsupported extension only; a file the
        # pipeline cannot read is a pipeline error (500).
        status, body = upload(server.url, [("file", ("broken.pdf", b"%PDF-1.4 nonsense"))])
        assert status == 500 and body["status"] == "error"
        # Library names are any string (seed 004), given back as they were.
        status, body = upload(server.url, [("file", ("notes.md", b"# Notes\n\nMy library's notes.")), ("library", "My Library")])
        assert status == 200 and body["library"] == "My Library", body

        async def check():
            async with http_mcp(server.url) as c:
                listed = await ok(c, "list_documents", {"library": "uploads"})
                assert listed["count"] == 1 and listed["documents"][0]["metadata"]["author"] == "Alice"
                mine = await ok(c, "list_documents", {"library": "My Library"})
                assert mine["count"] == 1 and mine["documents"][0]["library"] == "My Library"
                names = [entry["library"] for entry in (await ok(c, "list_libraries"))["libraries"]]
                assert "My Library" in names and "uploads" in names, names

        run(check())


def test_upload_statuses_follow_the_error_code(data):
    """Issue 16: a file over the size limit was answered 500."""
    with HttpServer(data, "--toolsets", "mcpvectordb", env={"FOLIO_MAX_FILE_BYTES": 1024}) as server:
        status, body = upload(server.url, [("file", ("big.md", b"# Big\n\n" + b"word " * 1000))])
        assert status == 413 and body["status"] == "error", (status, body)
        status, body = upload(server.url, [("file", ("empty.md", b""))])
        assert status == 500 and body["status"] == "error", (status, body)


def test_bulk_ingest_cli_contract(data, corpus):
    import subprocess

    from conftest import BIN, folio_env

    def folio(*args):
        return subprocess.run([BIN, *args], env=folio_env(data), capture_output=True, text=True, timeout=300)

    flat = folio("ingest", str(corpus), "--no-recursive", "--max-concurrency", "8")
    assert flat.returncode == 0, flat.stderr
    assert "4" in flat.stdout and "indexed" in flat.stdout and flat.stderr.strip() == ""
    (corpus / "broken.pdf").write_bytes(b"%PDF-1.4 nonsense")
    full = folio("ingest", str(corpus))
    assert full.returncode == 1
    assert "broken.pdf" in full.stderr and "broken.pdf" not in full.stdout
    assert "indexed" in full.stdout
    assert folio("ingest", str(corpus), "--max-concurrency", "0").returncode == 2
    assert folio("ingest").returncode == 2
    listing = folio("ls", "default", "--json")
    assert listing.returncode == 0 and len(__import__("json").loads(listing.stdout)["documents"]) == 5
