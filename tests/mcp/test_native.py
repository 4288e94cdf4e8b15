"""The native toolset: every tool with valid and invalid input."""

import json
import random
import subprocess

from conftest import BIN, call, fails, folio_env, ok, run, stdio, write_config


def test_native_tools_end_to_end(data, corpus, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("# Secret\n\nNot for ingestion.")
    config = write_config(tmp_path / "config.toml", f'[ingest]\nroots = ["{corpus}"]\n')

    async def go():
        async with stdio(data, config=config) as c:
            info = await ok(c, "server_info", {"check_path": str(corpus / "dropout.md")})
            assert info["model_loaded"] is False, "the model loads lazily"
            assert info["toolsets"] == ["native"] and info["transport"] == "stdio"
            assert info["path_check"]["readable"] is True
            denied = await ok(c, "server_info", {"check_path": str(outside)})
            assert denied["path_check"]["readable"] is False

            report = await ok(c, "ingest", {"library": "papers", "paths": [str(corpus)]})
            assert (report["indexed"], report["failed"]) == (5, 0)
            again = await ok(c, "ingest", {"library": "papers", "paths": [str(corpus / "dropout.md")]})
            assert again["skipped"] == 1

            outside_report = await ok(c, "ingest", {"library": "papers", "paths": [str(outside)]})
            assert outside_report["failed"] == 1
            assert outside_report["items"][0]["error"]["code"] == "PATH_NOT_ALLOWED"
            private = await ok(c, "ingest", {"library": "papers", "urls": ["http://127.0.0.1:9/x"]})
            assert private["items"][0]["error"]["code"] == "URL_NOT_ALLOWED"
            empty = await fails(c, "ingest", {"library": "papers"})
            assert empty["error"]["code"] == "INVALID_ARGUMENT"
            typo = await fails(c, "ingest", {"library": "papers", "path": "x"})
            assert "path" in typo["error"]["message"]

            libraries = await ok(c, "list_libraries")
            assert libraries["count"] == 1
            assert libraries["libraries"][0]["document_count"] == 5
            assert libraries["libraries"][0]["dimension"] == 384

            page = await ok(c, "list_documents", {"library": "papers", "limit": 2})
            assert page["total"] == 5 and len(page["documents"]) == 2 and page["next_offset"] == 2
            last = await ok(c, "list_documents", {"library": "papers", "offset": 4, "limit": 2})
            assert len(last["documents"]) == 1 and "next_offset" not in last
            assert (await fails(c, "list_documents", {"library": "papers", "limit": 0}))["error"]["code"] == "INVALID_ARGUMENT"
            assert (await fails(c, "list_documents", {"library": "nope"}))["error"]["code"] == "LIBRARY_NOT_FOUND"

            stats = await ok(c, "inspect_library", {"library": "papers"})
            assert stats["document_count"] == 5 and stats["formats"]["pdf"] == 1
            # English papers, and no record schema declared.
            assert stats["languages"] == {"en": 5} and stats["record_schema"] is None, stats
            assert (await fails(c, "inspect_library", {"library": "nope"}))["error"]["code"] == "LIBRARY_NOT_FOUND"

            # Search in every response mode; hits carry citations.
            for mode, present, absent in [
                ("ids_only", [], ["title", "preview", "text"]),
                ("metadata", ["title", "source", "section_path"], ["preview", "text"]),
                ("preview", ["preview"], ["text"]),
                ("full", ["text", "context"], ["preview"]),
            ]:
                found = await ok(c, "search", {"library": "papers", "query": "dropout regularisation", "response_mode": mode})
                top = found["hits"][0]
                assert top["rank"] == 1 and 0 <= top["score"] <= 1
                for key in present:
                    assert key in top, (mode, key)
                for key in absent:
                    assert key not in top, (mode, key)
            pdf_hit = await ok(c, "search", {"library": "papers", "query": "positional encodings order of tokens", "response_mode": "metadata"})
            top = pdf_hit["hits"][0]
            assert top["source"].endswith("transformers.pdf")
            assert (top["page_start"], top["page_end"]) == (1, 2)

            for mode in ["lexical", "dense"]:
                assert (await ok(c, "search", {"library": "papers", "query": "attention", "mode": mode}))["hits"]
            filtered = await ok(c, "search", {"library": "papers", "query": "attention", "filter": {"format": "pdf"}})
            assert {h["format"] for h in filtered["hits"]} == {"pdf"}

            # The budget: never more than max_output_chars, a cursor for the rest.
            first = await ok(c, "search", {"library": "papers", "query": "training neural networks", "response_mode": "full", "max_output_chars": 2000, "group_by_document": False, "top_k": 5})
            assert first["budget"]["used_chars"] <= 2000
            assert first["budget"]["omitted_hits"] + first["budget"]["truncated_chars"] > 0
            cursor = first["next_cursor"]
            second = await ok(c, "search", {"library": "papers", "query": "training neural networks", "response_mode": "full", "max_output_chars": 2000, "group_by_document": False, "top_k": 5, "cursor": cursor})
            assert second["offset"] == len(first["hits"])
            assert second["hits"][0]["rank"] == len(first["hits"]) + 1
            # The serialised response, not its own count, is within the
            # budget, however long the query it echoes (issue 27: a long
            # query was not budgeted).
            long_query = " ".join(["training neural networks with dropout \"and\" batch normalisation"] * 60)[:4000]
            for budget in (2000, 6000):
                result = await c.call_tool("search", {"library": "papers", "query": long_query, "response_mode": "full",
                                                      "max_output_chars": budget, "group_by_document": False, "top_k": 5})
                assert not result.is_error, result
                assert len(result.content[0].text) <= budget, (budget, len(result.content[0].text))
                assert budget < 6000 or json.loads(result.content[0].text)["hits"], "something fits"
            stale = await fails(c, "search", {"library": "papers", "query": "something else", "cursor": cursor})
            assert "cursor" in stale["error"]["message"]

            for bad in [
                {"library": "papers", "query": "", "top_k": 3},
                {"library": "papers", "query": "x", "top_k": 0},
                {"library": "papers", "query": "x", "top_k": 101},
                {"library": "papers", "query": "x", "response_mode": "everything"},
                {"library": "papers", "query": "x", "filter": {"year": {"between": 1}}},
                {"library": "papers", "query": "x", "max_output_chars": 10},
            ]:
                assert (await fails(c, "search", bad))["error"]["code"] == "INVALID_ARGUMENT", bad
            assert (await fails(c, "search", {"library": "nope", "query": "x"}))["error"]["code"] == "LIBRARY_NOT_FOUND"

            # Reading, on the document with the most chunks.
            listing = await ok(c, "list_documents", {"library": "papers"})
            longest = max(listing["documents"], key=lambda d: d["chunk_count"])
            assert longest["chunk_count"] >= 2
            doc_id = longest["document_id"]
            document = await ok(c, "get_document", {"document_id": doc_id, "max_chars": 20})
            assert len(document["text"]) == 20 and document["next_offset_chars"] == 20
            rest = await ok(c, "get_document", {"document_id": doc_id, "offset_chars": 20})
            assert "next_offset_chars" not in rest
            assert (await fails(c, "get_document", {"document_id": "zz"}))["error"]["code"] == "INVALID_ARGUMENT"
            assert (await fails(c, "get_document", {"document_id": "0" * 16}))["error"]["code"] == "NOT_FOUND"

            chunks = await ok(c, "get_chunks", {"chunk_id": f"{doc_id}:1", "before": 1, "after": 3})
            expected = list(range(0, min(longest["chunk_count"], 5)))
            assert [x["index"] for x in chunks["chunks"]] == expected
            assert [x["requested"] for x in chunks["chunks"]] == [i == 1 for i in expected]
            assert (await fails(c, "get_chunks", {"chunk_id": "nonsense"}))["error"]["code"] == "INVALID_ARGUMENT"
            assert (await fails(c, "get_chunks", {"chunk_id": f"{doc_id}:99"}))["error"]["code"] == "NOT_FOUND"
            assert (await fails(c, "get_chunks", {"chunk_id": f"{doc_id}:0", "before": 21}))["error"]["code"] == "INVALID_ARGUMENT"

            # Bring-your-own chunks (the shared store_chunks contract).
            rng = random.Random(7)
            items = [
                {"id": f"byo-{i}", "text": f"External chunk number {i} about graph databases.", "embedding": [rng.uniform(-1, 1) for _ in range(384)], "metadata": {"source": {"path": "ext.pdf", "title": "External"}, "doc": {"page_span": [i + 1, i + 1], "section_path": ["Intro"]}}}
                for i in range(100)
            ]
            stored = await ok(c, "store_chunks", {"project": "papers", "items": items})
            assert stored["chunks_written"] == 100
            assert (await ok(c, "inspect_library", {"library": "papers"}))["document_count"] == 105

            deleted = await ok(c, "delete_document", {"document_id": doc_id})
            assert deleted == {"status": "deleted", "document_id": doc_id, "deleted_chunks": longest["chunk_count"]}
            assert (await fails(c, "delete_document", {"document_id": doc_id}))["error"]["code"] == "NOT_FOUND"
            info = await ok(c, "server_info")
            assert info["model_loaded"] is True and info["libraries"] == 1

            # A whole library goes at once: its counts are reported, then it
            # is gone from listings and searches.
            extra = await ok(c, "ingest", {"library": "scratch", "content": {"name": "s.md", "text": "# Scratch\n\nNotes about tide pools."}})
            assert extra["indexed"] == 1
            gone = await ok(c, "delete_library", {"library": "scratch"})
            assert gone == {"status": "deleted", "library": "scratch", "deleted_documents": 1, "deleted_chunks": extra["chunks"]}
            assert [l["library"] for l in (await ok(c, "list_libraries"))["libraries"]] == ["papers"]
            assert (await fails(c, "search", {"query": "tide pools", "library": "scratch"}))["error"]["code"] == "LIBRARY_NOT_FOUND"
            assert (await fails(c, "delete_library", {"library": "scratch"}))["error"]["code"] == "LIBRARY_NOT_FOUND"
            assert (await fails(c, "delete_library", {"library": "bad name!"}))["error"]["code"] == "INVALID_ARGUMENT"

    run(go())


def test_read_only_servers_expose_no_writers(data):
    async def go():
        async with stdio(data) as c:
            await ok(c, "ingest", {"library": "l", "content": {"name": "a.txt", "text": "alpha beta gamma"}})
        async with stdio(data, "--read-only") as c:
            names = [t.name for t in (await c.list_tools()).tools]
            assert names == ["search", "get_document", "get_chunks", "list_libraries", "list_documents", "inspect_library", "facets", "find_quote", "entities", "entity", "jobs", "server_info"]
            hits = await ok(c, "search", {"library": "l", "query": "beta"})
            assert hits["hits"]

    run(go())


def test_conflicting_toolsets_refuse_to_start(data):
    out = subprocess.run([BIN, "serve", "--stdio", "--toolsets", "native,mcpvectordb"], env=folio_env(data), capture_output=True, text=True, timeout=30)
    assert out.returncode == 2
    assert "search" in out.stderr and "native" in out.stderr and "mcpvectordb" in out.stderr
    out = subprocess.run([BIN, "serve", "--stdio", "--toolsets", "native,hansardx"], env=folio_env(data), capture_output=True, text=True, timeout=30)
    assert out.returncode == 2 and "hansardx" in out.stderr
    assert not data.exists() or not any(data.iterdir()), "nothing was written"


def test_agents_cannot_read_secrets_without_configured_roots(data, tmp_path):
    """Issue 16: with no `[ingest] roots`, an MCP client ingested the home's
    dot-files, /etc and /proc and could search them back; and server_info's
    path check told whether a path outside the roots existed."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY material")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("[default] aws_secret_access_key = x")
    (home / "notes").mkdir()
    (home / "notes" / "plan.md").write_text("# Plan\n\nA shareable note about river deltas.")

    async def go():
        # The model stays where set-up put it; only the home moves.
        import os
        from pathlib import Path
        folio_home = os.environ.get("FOLIO_HOME") or os.path.join(
            os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local/share"), "folio")
        async with stdio(data, env={"HOME": str(home), "FOLIO_HOME": folio_home}) as c:
            secrets = [home / ".ssh" / "id_ed25519", home / ".aws" / "credentials",
                       home / "notes" / ".." / ".ssh" / "id_ed25519", "/etc/passwd", "/proc/self/environ", "/dev/zero"]
            report = await ok(c, "ingest", {"library": "mine", "paths": [str(p) for p in secrets]})
            assert report["indexed"] == 0 and report["failed"] == len(secrets), report
            assert {i["error"]["code"] for i in report["items"]} == {"PATH_NOT_ALLOWED"}
            shared = await ok(c, "ingest", {"library": "mine", "paths": [str(home / "notes" / "plan.md")]})
            assert shared["indexed"] == 1
            existing = await ok(c, "server_info", {"check_path": "/etc/passwd"})
            missing = await ok(c, "server_info", {"check_path": "/etc/no-such-file-here"})
            assert existing["path_check"]["readable"] is False and missing["path_check"]["readable"] is False
            assert existing["path_check"]["error"].replace("/etc/passwd", "P") == missing["path_check"]["error"].replace("/etc/no-such-file-here", "P")

    run(go())
