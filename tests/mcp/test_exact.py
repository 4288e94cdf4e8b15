"""Each compatibility toolset behaves as its seed's own code would: schemas
strict clients accept, timeouts that cancel, dedup keyed as the seed keys
it, the seed's error codes, fields and server identity. Every test drives the
real binary with the official MCP client and the real model."""

import asyncio
import datetime
import hashlib
import json
import os
import re
import subprocess
import time
import uuid

import jsonschema
import pytest
from mcp import ClientSession
from mcp.client.sse import sse_client

from conftest import BACKEND, BIN, HttpServer, call, fails, folio_env, holding_table, http_mcp, ok, run, stdio, write_config
from test_compat import Page, byo_items

STANDARD_FORMATS = {
    "date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname", "ipv4", "ipv6",
    "uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template", "json-pointer",
    "relative-json-pointer", "regex",
}


def folio(data, *args, config=None):
    done = subprocess.run([BIN, *args, "--json"], env=folio_env(data, config), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def walk(schema):
    if isinstance(schema, dict):
        yield schema
        for value in schema.values():
            yield from walk(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from walk(value)


def strict(schema, where):
    """A schema a strict client accepts: valid, self-contained, standard formats."""
    jsonschema.Draft202012Validator.check_schema(schema)
    text = json.dumps(schema)
    assert "$ref" not in text and "$defs" not in text and '"definitions"' not in text, where
    for node in walk(schema):
        if isinstance(node.get("format"), str):
            assert node["format"] in STANDARD_FORMATS, (where, node["format"])
        # Every subschema an object: the TypeScript SDK refuses a property
        # written `true`.
        for key in ("properties", "patternProperties"):
            if isinstance(node.get(key), dict):
                assert all(isinstance(v, dict) for v in node[key].values()), (where, key, node[key])
        for key in ("items", "additionalProperties", "not", "contains"):
            assert node.get(key) is not True, (where, key)


def valid(schema, arguments):
    jsonschema.Draft202012Validator(schema).validate(arguments)


def test_schemas_are_strict_accept_seed_calls_and_name_the_seed(data, tmp_path):
    seed_calls = {
        ("citeloom", "query"): [{"project": "p", "text": "x"}, {"project": "p", "query": "x"},
                                {"project": "p", "text": "x", "top_k": 5.0}],
        ("citeloom", "find_chunks"): [{"project": "p", "query": "x"}, {"project": "p", "text": "x"}],
        ("citeloom", "query_hybrid"): [{"project": "p", "query": "x"}, {"project": "p", "text": "x", "top_k": 6}],
        ("hansard", "search_speeches"): [{"query": "water policy"}, {"query": "water policy", "limit": 10.0}],
        ("mcpvectordb", "search"): [{"query": "x", "top_k": 5.0}],
        ("mcpvectordb", "list_documents"): [{"limit": 20.0, "offset": 0}],
    }
    identities = {
        "native,citeloom,bmcis": ("folio", None),
        "citeloom": ("citeloom", None),
        "mcpvectordb": ("mcpvectordb", "0.3.0"),
        "hansard": ("australian-hansard-rag", None),
        "bmcis": ("bmcis-knowledge-mcp", None),
    }

    async def go():
        checked = set()
        for toolsets, (name, version) in identities.items():
            async with stdio(data, "--toolsets", toolsets) as c:
                assert c.server_info.name == name, toolsets
                if version:
                    assert c.server_info.version == version
                for tool in (await c.list_tools()).tools:
                    strict(tool.input_schema, tool.name)
                    if tool.output_schema:
                        strict(tool.output_schema, tool.name)
                    for arguments in seed_calls.get((toolsets, tool.name), []):
                        valid(tool.input_schema, arguments)
                        checked.add((toolsets, tool.name))
                    if toolsets == "citeloom" and tool.name in ("query", "find_chunks", "query_hybrid"):
                        # A validating client lets no call without a query through.
                        try:
                            valid(tool.input_schema, {"project": "p", "top_k": 3})
                        except jsonschema.ValidationError:
                            pass
                        else:
                            raise AssertionError(f"{tool.name}: a call without text or query validates")
        assert checked == set(seed_calls)
        async with stdio(data, "--toolsets", "hansard", "--server-name", "hansard-prod", "--server-version", "2.1") as c:
            assert (c.server_info.name, c.server_info.version) == ("hansard-prod", "2.1")

        # The server takes what Pydantic's lax mode takes: whole floats and
        # numeric strings for integers, "true" for booleans.
        async with stdio(data, "--toolsets", "citeloom,mcpvectordb") as c:
            for top_k in (5.0, "5"):
                err = await fails(c, "query", {"project": "nope", "text": "x", "top_k": top_k})
                assert err["error"]["code"] == "INVALID_PROJECT", err
            err = await fails(c, "query", {"project": "nope", "text": "x", "top_k": 5.5})
            assert err["error"]["code"] == "INVALID_ARGUMENT"
            assert (await ok(c, "list_documents", {"limit": 3.0, "offset": "0"}))["count"] == 0
            err = await fails(c, "query_hybrid", {"project": "nope"})
            assert err["error"]["code"] == "INVALID_ARGUMENT" and "text" in err["error"]["message"]

    run(go())


PARTS = """# Part I

## Chapter 1

Graph colouring assigns colours to the vertices of a graph so that adjacent vertices differ.

# Part II

## Chapter 2

Graph colouring of planar graphs needs at most four colours, as the four colour theorem states.

# Part III

Graph colouring heuristics order vertices by degree before colouring them greedily.
"""


def test_citeloom_follows_its_seeds(data, corpus, tmp_path):
    corpus.joinpath("parts.md").write_text(PARTS)
    corpus.joinpath("reviewed.md").write_text("---\nreviewer: Ada\n---\n# Reviewed\n\nA reviewed note on gradient descent.")
    refs = tmp_path / "refs.json"
    refs.write_text(json.dumps([{"id": "srivastava2014", "type": "article-journal", "title": "Dropout as regularisation",
                                 "DOI": "10.5555/2627435"}]))
    bad = tmp_path / "bad"
    bad.mkdir()
    bad.joinpath("data.xyz").write_text("not a document format")
    bad.joinpath("empty.md").write_text("")
    config = write_config(tmp_path / "c.toml", "")

    async def go():
        async with stdio(data, "--toolsets", "citeloom", config=config) as c:
            # Seed 000: an unknown project is INVALID_PROJECT, and is not created.
            err = await fails(c, "ingest_from_source", {"project": "research/papers", "source": str(corpus)})
            assert err["error"]["code"] == "INVALID_PROJECT" and err["correlation_id"]
            assert (await ok(c, "list_projects"))["count"] == 0
        # Projects are created by the user.
        created = folio(data, "create", "research/papers", config=config)
        assert created[0]["name"] == "research/papers" and created[0]["document_count"] == 0

        async with stdio(data, "--toolsets", "citeloom", config=config) as c:
            ingested = await ok(c, "ingest_from_source", {"project": "research/papers", "source": str(corpus),
                                                            "options": {"references_path": str(refs)}})
            assert ingested["documents_processed"] == 7
            warnings = ingested["warnings"]
            # Every document no reference matched is named, as the seed's example does.
            for name in ["batch-normalisation.md", "attention.html", "transformers.pdf", "parts.md", "reviewed.md"]:
                assert f"Metadata not found for document '{name}'" in warnings, (name, warnings)
            assert not any("dropout.md" in w for w in warnings)

            # Seed 001 calls query_hybrid with `query`, seed 000 with `text`: both work everywhere.
            a = await ok(c, "query_hybrid", {"project": "research/papers", "query": "four colour theorem"})
            b = await ok(c, "query_hybrid", {"project": "research/papers", "text": "four colour theorem"})
            assert [i["chunk_id"] for i in a["items"]] == [i["chunk_id"] for i in b["items"]]
            f = await ok(c, "find_chunks", {"project": "research/papers", "text": "four colour theorem"})
            assert f["items"]

            # section_prefix matches whole headings: "Part I" is not "Part II" or "Part III".
            scoped = await ok(c, "query", {"project": "research/papers", "text": "graph colouring",
                                           "filters": {"section_prefix": "Part I"}, "top_k": 20})
            assert scoped["items"] and all(i["section_path"][0] == "Part I" for i in scoped["items"]), scoped
            deeper = await ok(c, "query", {"project": "research/papers", "text": "graph colouring",
                                           "filters": {"section_prefix": "Part II > Chapter 2"}})
            assert deeper["items"] and all(i["section_path"][:2] == ["Part II", "Chapter 2"] for i in deeper["items"])

            # store_chunks keeps doc.section; long text is cut at a word with an ellipsis.
            items = byo_items(100, seed=3)
            long_text = " ".join(f"word{i}" for i in range(700))
            items[0]["text"] = long_text
            items[0]["metadata"]["doc"] = {"page_span": [45, 46], "section": "Entities and Value Objects",
                                           "section_path": ["Part I", "Chapter 3"]}
            await ok(c, "store_chunks", {"project": "research/papers", "items": items})
            found = await ok(c, "query_hybrid", {"project": "research/papers", "text": "word1 word2 word3",
                                          "filters": {"tags": ["external"]}, "top_k": 20, "include_full_text": True})
            stored = next(i for i in found["items"] if i["full_text"] == long_text)
            assert stored["section"] == "Entities and Value Objects" and stored["section_path"] == ["Part I", "Chapter 3"]
            render = stored["render_text"]
            assert len(render) <= 1800 and render.endswith("...")
            kept = render[:-3]
            assert long_text.startswith(kept) and long_text[len(kept)] == " ", "cut at a word boundary"

            # Errors in the seeds' style: the caller's mistakes are not internal errors.
            for source, code, reason in [
                (bad / "data.xyz", "INVALID_ARGUMENT", "unsupported_format"),
                (bad / "empty.md", "INVALID_ARGUMENT", "empty_content"),
                (bad / "missing.pdf", "NOT_FOUND", "not_found"),
            ]:
                err = await fails(c, "ingest_from_source", {"project": "research/papers", "source": str(source)})
                assert (err["error"]["code"], err["error"]["details"]["reason"]) == (code, reason), err
            empty = byo_items(100, seed=4)
            empty[5]["text"] = ""
            err = await fails(c, "store_chunks", {"project": "research/papers", "items": empty})
            assert err["error"]["code"] == "INVALID_ARGUMENT", err

            # inspect_collection reports what the collection holds.
            inspected = await ok(c, "inspect_collection", {"project": "research/papers"})
            keys = set(inspected["payload_keys"])
            assert {"reviewer", "zotero", "doc", "source", "citekey", "doi", "chunk_text", "section_path"} <= keys, keys
            assert "heading_chain" not in keys and "version" not in keys
            assert inspected["indexes"]["fulltext"] == ["chunk_text"]

    run(go())


def test_citeloom_calls_are_logged_by_correlation_id(data, corpus):
    folio(data, "create", "p")
    with HttpServer(data, "--toolsets", "citeloom", env={"FOLIO_LOG": "info"}) as server:

        async def go():
            async with http_mcp(server.url) as c:
                listed = await ok(c, "list_projects")
                err = await fails(c, "query", {"project": "p", "text": "secret query words", "top_k": 99})
                return listed["correlation_id"], err["correlation_id"]

        ids = run(go())
    log = server.process.stderr.read().decode()
    for tool, correlation in zip(["list_projects", "query"], ids):
        line = next((l for l in log.splitlines() if correlation in l), None)
        assert line and tool in line and "duration_ms" in line, log
    assert "INVALID_ARGUMENT" in next(l for l in log.splitlines() if ids[1] in l)
    assert "secret query words" not in log


def test_citeloom_timeouts_cancel_and_a_retry_makes_progress(data, tmp_path):
    docs = tmp_path / "many"
    docs.mkdir()
    for i in range(120):
        docs.joinpath(f"note{i:03}.md").write_text(
            f"# Note {i}\n\n" + " ".join(f"Sentence {j} of note {i} about topic {i % 7}." for j in range(60)))
    config = write_config(tmp_path / "c.toml", "[serve.timeouts]\ningest_from_source = 4\nstore_chunks = 0.001\ninspect_collection = 2\nlist_projects = 0.000001\n")
    folio(data, "create", "p", config=config)

    async def go():
        async with stdio(data, "--toolsets", "citeloom", config=config) as c:
            processed, calls = [], 0
            while calls < 40:
                calls += 1
                is_error, out = await call(c, "ingest_from_source", {"project": "p", "source": str(docs)})
                size = (await ok(c, "inspect_collection", {"project": "p"}))["size"]
                if not is_error:
                    processed.append(120)
                    break
                assert out["error"]["code"] == "TIMEOUT", out
                details = out["error"]["details"]
                # What the error says was written is exactly what is there,
                # and nothing more is written after the answer.
                await asyncio.sleep(1.5)
                assert (await ok(c, "inspect_collection", {"project": "p"}))["size"] == size
                processed.append(details["documents_processed"])
                assert details["documents_processed"] + details["documents_pending"] + details["documents_failed"] == 120
                assert "call again" in out["error"]["message"]
                if details["documents_pending"] == 0:
                    break  # finished just as the limit passed
            assert processed[-1] == 120, processed
            # Every retry got further (finished documents are skipped).
            assert all(b > a for a, b in zip(processed, processed[1:])), processed
            assert len(processed) > 1, "the first call should have timed out"

            # store_chunks under a 1 ms limit: nothing, or exactly what it says it wrote.
            before = (await ok(c, "inspect_collection", {"project": "p"}))["size"]
            is_error, out = await call(c, "store_chunks", {"project": "p", "items": byo_items(100, seed=9)})
            await asyncio.sleep(1)
            after = (await ok(c, "inspect_collection", {"project": "p"}))["size"]
            if is_error:
                assert out["error"]["code"] == "TIMEOUT"
                assert after == before + out["error"]["details"].get("chunks_written", 0), out
            else:
                assert after == before + 100

            # A timeout is an error, never an empty success. On PostgreSQL a
            # session holding the libraries table makes inspect_collection
            # wait past its limit every time (the limit itself is pinned by a
            # unit test of the server's timeout,
            # work_past_its_limit_is_a_timeout_and_cancelled).
            if BACKEND == "postgres":
                with holding_table(data, "folio_libraries"):
                    is_error, out = await call(c, "inspect_collection", {"project": "p"})
                assert is_error and out["error"]["code"] == "TIMEOUT", out
                assert "inspect_collection exceeded its time limit of 2 s" in out["error"]["message"]
                # Seed 000's list_projects always succeeds: it waits for the
                # table and answers, whatever limit is configured for it.
                with holding_table(data, "folio_libraries", seconds=2):
                    listed = await ok(c, "list_projects")
                assert listed["count"] == 1, listed
            assert (await ok(c, "list_projects"))["count"] == 1

    run(go())


def test_bmcis_category_and_description(data, corpus, tmp_path):
    config = write_config(tmp_path / "c.toml", '[serve]\nbmcis_library = "kb"\n')
    corpus.joinpath("guide.md").write_text("---\ncategory: guide\n---\n# Guide\n\nHow to tune dropout rates in practice.")

    async def go():
        async with stdio(data, "--toolsets", "native,bmcis", config=config) as c:
            tool = next(t for t in (await c.list_tools()).tools if t.name == "semantic_search")
            assert '"kb"' in tool.description
            await ok(c, "ingest", {"library": "kb", "paths": [str(corpus)]})
            out = await ok(c, "semantic_search", {"query": "dropout", "top_k": 10})
            categories = {r["source_file"].rsplit("/", 1)[-1]: r["source_category"] for r in out["results"]}
            assert categories.get("guide.md") == "guide"
            assert categories.get("dropout.md", "absent") is None, categories

    run(go())


def test_hansard_search_scores_and_cache(data, tmp_path):
    from speeches import generate, write_jsonl
    from test_hansard import SCHEMA

    records = generate(40, seed=5)
    path = write_jsonl(tmp_path / "speeches.jsonl", records)
    folio(data, "ingest", str(path), "--library", "hansard", "--schema", str(SCHEMA))

    async def go():
        async with stdio(data, "--toolsets", "native,hansard") as c:
            # relevance_score is the cosine similarity (dense search, as the seed's).
            found = await ok(c, "search_speeches", {"query": "water policy", "limit": 5})
            native = await ok(c, "search", {"library": "hansard", "query": "water policy", "mode": "dense", "top_k": 5,
                                            "response_mode": "full", "group_by_document": False})
            assert [round(r["relevance_score"], 4) for r in found["results"]] == [
                round(h["dense_score"], 4) for h in native["hits"]]

            # Repeated queries come from the cache until a write.
            queries = ["water policy", "budget surplus", "hospital funding", "water policy", "budget surplus"] * 4
            start = (await ok(c, "server_info"))["cache"]
            for q in queries:
                await ok(c, "search_speeches", {"query": q})
            cache = (await ok(c, "server_info"))["cache"]
            hits = cache["result_hits"] - start["result_hits"]
            misses = cache["result_misses"] - start["result_misses"]
            assert (hits, misses) == (17, 3), cache
            assert cache["hit_rate"] > 0
            speech = {"title": "New", "full_text": "Water policy must change for the rivers. " * 10, "speaker": "A B",
                      "party": "Greens", "chamber": "Senate", "state": "SA", "date": "2025-01-01",
                      "hansard_reference": "S-1"}
            await ok(c, "ingest_speech", speech)
            again = await ok(c, "search_speeches", {"query": "water policy"})
            after = (await ok(c, "server_info"))["cache"]
            assert after["result_misses"] == cache["result_misses"] + 1, "a write empties the cache"
            assert any(r["title"] == "New" for r in again["results"])

    run(go())


def test_mcpvectordb_follows_its_seed(data, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    note = docs / "note.md"
    note.write_text("# Note\n\nKernels and eigenvalues of symmetric matrices.")
    copy = tmp_path / "copy.md"
    copy.write_bytes(note.read_bytes())
    stamp = datetime.datetime(2025, 6, 1, 9, 0, tzinfo=datetime.timezone.utc).timestamp()
    os.utime(note, (stamp, stamp))
    docs.joinpath("other.md").write_text("# Other\n\nGradient descent with momentum.")
    from conftest import pdf
    page = "\n".join(f"Line {i} of this page is about lattices and their ordered structure." for i in range(30))
    docs.joinpath("paged.pdf").write_bytes(pdf([f"Page one. {page}", f"Page two. {page}", f"Page three. {page}"]))

    async def go():
        async with stdio(data, "--toolsets", "mcpvectordb") as c:
            first = await ok(c, "ingest_file", {"path": str(note)})
            assert uuid.UUID(first["doc_id"]).version == 8
            # Dedup is keyed on (path, library): the same bytes elsewhere are a document of their own.
            second = await ok(c, "ingest_file", {"path": str(copy)})
            assert second["status"] == "indexed" and second["doc_id"] != first["doc_id"]
            label = await ok(c, "ingest_content", {"content": note.read_text(), "source": "pasted-note"})
            assert label["status"] == "indexed" and label["doc_id"] not in (first["doc_id"], second["doc_id"])
            assert (await ok(c, "ingest_content", {"content": note.read_text(), "source": "pasted-note"}))["status"] == "skipped"
            deleted = await ok(c, "delete_document", {"doc_id": second["doc_id"]})
            assert deleted["deleted_chunks"] == second["chunk_count"]
            kept = await ok(c, "get_document", {"doc_id": first["doc_id"]})
            assert kept["source"].endswith("note.md") and kept["doc_id"] == first["doc_id"]

            # A folder is not a file.
            before = await ok(c, "list_libraries")
            err = await fails(c, "ingest_file", {"path": str(docs)})
            assert err["status"] == "error" and "folder" in err["error"]
            assert await ok(c, "list_libraries") == before

            # Skipped documents are left exactly as they are.
            await ok(c, "ingest_folder", {"folder": str(docs), "library": "lib", "metadata": {"batch": 1}})
            again = await ok(c, "ingest_folder", {"folder": str(docs), "library": "lib", "metadata": {"batch": 2}})
            assert again["skipped"] == 3
            listed = await ok(c, "list_documents", {"library": "lib", "limit": 10})
            # (Besides the language ingest records for every document.)
            assert all({k: v for k, v in d["metadata"].items() if k != "language"} == {"batch": 1}
                       for d in listed["documents"]), listed
            assert all(uuid.UUID(d["doc_id"]) for d in listed["documents"])
            assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", d["created_at"]) for d in listed["documents"])

            # last_modified is the file's modification time, in the seed's format.
            hits = (await ok(c, "search", {"query": "eigenvalues", "library": "lib", "top_k": 3}))["results"]
            top = next(h for h in hits if h["source"].endswith("note.md"))
            assert top["last_modified"] == "2025-06-01T09:00:00+00:00"
            dated = await ok(c, "search", {"query": "eigenvalues", "library": "lib",
                                           "filter": {"last_modified": "2025-06-01T09:00:00+00:00"}})
            assert dated["results"] and all(r["source"].endswith("note.md") for r in dated["results"])

            # The page filter and the page field agree.
            unfiltered = await ok(c, "search", {"query": "lattices ordered structure", "library": "lib", "top_k": 20})
            pages = {r["page"] for r in unfiltered["results"] if r["file_type"] == "pdf"}
            assert len(pages) > 1, unfiltered
            for page in pages | {0, 7}:
                paged = await ok(c, "search", {"query": "lattices ordered structure", "library": "lib", "top_k": 20,
                                               "filter": {"page": page}})
                assert all(r["page"] == page for r in paged["results"]), (page, paged)
                assert bool(paged["results"]) == (page in pages or page == 0), page

    run(go())


def test_mcpvectordb_fuses_by_reciprocal_rank(data, corpus, tmp_path):
    """Two clients on one data directory, each with its own toolsets: the
    mcpvectordb ranking is reciprocal rank fusion (k = 60) of folio's
    lexical and dense rankings, computed here."""
    async def go():
        async with stdio(data, "--toolsets", "mcpvectordb") as seed:
            await ok(seed, "ingest_folder", {"folder": str(corpus), "library": "papers"})
            async with stdio(data, "--toolsets", "native") as native:
                for query in ["positional encodings", "regularisation of networks", "learning rate schedules"]:
                    fused = {}
                    for mode in ("lexical", "dense"):
                        ranked = await ok(native, "search", {
                            "library": "papers", "query": query, "mode": mode, "top_k": 50, "response_mode": "full",
                            "group_by_document": False, "max_chars_per_chunk": 20000, "max_output_chars": 200000})
                        assert "next_cursor" not in ranked
                        for rank, hit in enumerate(ranked["hits"], start=1):
                            fused[hit["text"]] = fused.get(hit["text"], 0.0) + 1.0 / (60 + rank)
                    mine = (await ok(seed, "search", {"query": query, "library": "papers", "top_k": 8}))["results"]
                    got = [round(fused[r["content"]], 9) for r in mine]
                    assert got == sorted((round(v, 9) for v in fused.values()), reverse=True)[:len(got)], query
                    assert len(got) == min(8, len(fused))

    run(go())


def test_each_client_gets_its_own_toolsets_and_url_policy(data, tmp_path):
    import http.server
    import threading

    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{site.server_address[1]}/page"

    async def go():
        async with stdio(data, "--toolsets", "mcpvectordb") as owner:
            assert (await fails(owner, "ingest_url", {"url": url}))["status"] == "error"
            async with stdio(data, "--toolsets", "hansard", "--allow-private-urls") as second:
                names = [t.name for t in (await second.list_tools()).tools]
                assert names == ["search_speeches", "get_speech", "ingest_speech", "list_speakers"]
                assert second.server_info.name == "australian-hansard-rag"
            async with stdio(data, "--toolsets", "mcpvectordb", "--allow-private-urls") as third:
                assert (await ok(third, "ingest_url", {"url": url}))["status"] == "indexed"
            # The owner's own policy is unchanged.
            assert (await fails(owner, "ingest_url", {"url": url + "?again"}))["status"] == "error"
            # A client with another engine configuration gets a clear error, not
            # the owner's; on a database server every process has its own engine.
            other = write_config(tmp_path / "other.toml", "[limits]\nmax_file_bytes = 1000\n")
            refused = subprocess.run([BIN, "serve", "--stdio", "--toolsets", "native"], input="", capture_output=True,
                                     text=True, env=folio_env(data, other), timeout=60)
            if BACKEND == "embedded":
                assert refused.returncode != 0 and "different configuration" in refused.stderr, refused.stderr
            else:
                assert refused.returncode == 0, refused.stderr

    try:
        run(go())
    finally:
        site.shutdown()


def test_mcpvectordb_over_the_sse_transport(data, tmp_path):
    note = tmp_path / "note.md"
    note.write_text("# Note\n\nServed over server-sent events.")
    with HttpServer(data, "--toolsets", "mcpvectordb") as server:

        async def go():
            async with sse_client(server.url + "/sse") as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    names = [t.name for t in (await session.list_tools()).tools]
                    assert "ingest_file" in names and "search" in names
                    result = await session.call_tool("ingest_file", {"path": str(note)})
                    assert not result.is_error and result.structured_content["status"] == "indexed"
                    found = await session.call_tool("search", {"query": "server-sent events"})
                    assert found.structured_content["results"][0]["source"].endswith("note.md")

        run(go())


def test_bmcis_semantic_search_fuses_by_reciprocal_rank(data, corpus, tmp_path):
    """Seed 003's HybridSearch merges by RRF (k 60); folio's own default is a
    weighted min-max fusion. The scores tell the two apart: each result's
    hybrid_score is its RRF sum over the lexical and dense rankings (as the
    native tool ranks them, at the same depth), scaled by the best possible."""
    config = write_config(tmp_path / "c.toml", '[serve]\nbmcis_library = "kb"\n')

    def number(chunk_id):
        return int.from_bytes(hashlib.sha256(chunk_id.encode()).digest()[:8], "big") >> 11

    async def go():
        async with stdio(data, "--toolsets", "native,bmcis", config=config) as c:
            await ok(c, "ingest", {"library": "kb", "paths": [str(corpus)]})
            query = "regularisation of neural networks by dropout"
            ranks, raw = {}, {}
            for mode in ("lexical", "dense"):
                found = await ok(c, "search", {"library": "kb", "query": query, "mode": mode, "top_k": 100,
                                               "group_by_document": False, "response_mode": "metadata"})
                ranks[mode] = {number(h["chunk_id"]): i + 1 for i, h in enumerate(found["hits"])}
                raw[mode] = {number(h["chunk_id"]): h[f"{mode}_score"] for h in found["hits"]}
            out = await ok(c, "semantic_search", {"query": query, "top_k": 50, "response_mode": "full"})
            assert len(out["results"]) >= 5
            best = 2 / 61
            lo = {m: min(raw[m].values()) for m in raw}
            hi = {m: max(raw[m].values()) for m in raw}
            weighted_differs = False
            for r in out["results"]:
                rrf = sum(1 / (60 + ranks[m][r["chunk_id"]]) for m in ranks if r["chunk_id"] in ranks[m]) / best
                assert abs(r["hybrid_score"] - rrf) < 1e-4, (r, rrf)
                weighted = sum(0.5 * (raw[m][r["chunk_id"]] - lo[m]) / (hi[m] - lo[m]) for m in raw if r["chunk_id"] in raw[m])
                weighted_differs |= abs(weighted - rrf) > 1e-3
            assert weighted_differs, "the corpus does not tell the fusions apart"
            scores = [r["hybrid_score"] for r in out["results"]]
            assert scores == sorted(scores, reverse=True)

    run(go())


@pytest.mark.embedded_only
def test_a_store_chunks_timeout_says_exactly_what_was_written(data, tmp_path):
    """Issue 46 §11: a TIMEOUT answered while the batch still waited for the
    write lock (another process writing for longer than the grace period)
    said nothing of it, and the batch was committed after the answer. The
    answer now comes when the work has ended, and says what it wrote."""
    import fcntl

    # Long enough to pass the batch's checks, short of the lock's release.
    config = write_config(tmp_path / "c.toml", "[serve.timeouts]\nstore_chunks = 1\n")
    folio(data, "create", "p", config=config)

    async def go():
        async with stdio(data, "--toolsets", "citeloom", config=config, env={"FOLIO_LOCK_WAIT_MS": 90000}) as c:
            before = (await ok(c, "inspect_collection", {"project": "p"}))["size"]
            # Another process holds the data directory's write lock for 33 s.
            with open(data / "write.lock", "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                release = asyncio.get_running_loop().call_later(33, fcntl.flock, lock, fcntl.LOCK_UN)
                is_error, out = await call(c, "store_chunks", {"project": "p", "items": byo_items(100, seed=11)})
                release.cancel()
            await asyncio.sleep(2)
            after = (await ok(c, "inspect_collection", {"project": "p"}))["size"]
            assert is_error and out["error"]["code"] == "TIMEOUT", out
            written = out["error"]["details"].get("chunks_written")
            assert written == 100, out
            assert after == before + written, (before, after, out)

    run(go())
