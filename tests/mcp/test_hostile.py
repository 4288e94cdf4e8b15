"""Hostile files (issue 15): deep nesting in every format, decompression
bombs and their neighbours, ingested through the CLI, the native `ingest`
tool and POST /upload. Each is refused with a structured error within the
extraction time limit, the server keeps serving, and the store is
unchanged."""

import json
import subprocess
import time

import pytest

import hostile
from crash import SCHEMA
from conftest import BIN, SAMPLES, HttpServer, folio_env, http_mcp, ok, run, write_config
from test_compat import upload

# The limits the fixtures are measured against: a text bomb must meet the
# decompression bound, a runaway parser the time limit.
TIMEOUT_SECS = 20
CONFIG = f"""
[limits]
extract_timeout_secs = {TIMEOUT_SECS}
max_decompressed_bytes = {64 * 1024 * 1024}
"""
REFUSED = {"malformed_input", "too_large", "timeout", "empty_content", "unsupported_format", "invalid_argument"}
# Neighbours that a parser reads without harm (deep Markdown is flat text to
# it): indexed or refused, but answered within the limit either way.
# An RTF binary run longer than the file ends it: the text before is read.
# A PDF's hostile figure (a pixel bomb, one image drawn 20,000 times) is
# left unread, and the page's text indexed.
MAY_INDEX = {"markdown_quotes", "markdown_lists", "markdown_brackets", "rtf_bin", "pdf_image_bomb", "pdf_many_images"}
RECORDS = {"json_records", "jsonl_records", "csv_wide"}



def setup(tmp_path, data):
    config = write_config(tmp_path / "folio.toml", CONFIG)
    fixtures = hostile.write_all(tmp_path / "hostile")
    schema = tmp_path / "schema.toml"
    schema.write_text(SCHEMA)
    return config, fixtures, schema


def folio(data, config, *args, timeout=300):
    return subprocess.run([BIN, *args], env=folio_env(data, config), capture_output=True, text=True, timeout=timeout)


def counts(data, config):
    listed = json.loads(folio(data, config, "ls", "--json").stdout)
    return {entry["name"]: entry["document_count"] for entry in listed}


# Each hostile file is refused (or its figure left unread) while it is
# parsed, before anything reaches a store; the refusals through MCP and
# upload below run on both backends, this one through the CLI's forty
# processes once.
@pytest.mark.one_backend
def test_hostile_files_through_the_cli(tmp_path, data):
    config, fixtures, schema = setup(tmp_path, data)
    seeded = folio(data, config, "ingest", str(SAMPLES / "dropout.md"), "--library", "docs")
    assert seeded.returncode == 0, seeded.stderr
    assert folio(data, config, "schema", "records", str(schema)).returncode == 0
    before = counts(data, config)
    outcomes = {}
    for kind, path in fixtures.items():
        library = "records" if kind in RECORDS else "docs"
        started = time.monotonic()
        out = folio(data, config, "ingest", str(path), "--library", library, "--json", timeout=TIMEOUT_SECS * 3)
        elapsed = time.monotonic() - started
        if kind in MAY_INDEX and out.returncode == 0:
            folio(data, config, "rm", "--library", "docs")
            assert folio(data, config, "ingest", str(SAMPLES / "dropout.md"), "--library", "docs").returncode == 0
            outcomes[kind] = {"indexed"}
            continue
        assert out.returncode == 1, f"{kind}: exit {out.returncode}: {out.stderr[-500:]}"
        report = json.loads(out.stdout)
        codes = {item["error"]["code"] for item in report["items"] if item.get("error")}
        assert report["failed"] >= 1 and report["indexed"] == 0, f"{kind}: {report}"
        assert codes <= REFUSED and codes, f"{kind}: {codes} {out.stderr[-500:]}"
        assert elapsed < TIMEOUT_SECS + 15, f"{kind} took {elapsed:.1f} s"
        outcomes[kind] = codes
    assert counts(data, config) == before, outcomes
    # The store still answers searches.
    found = json.loads(folio(data, config, "search", "dropout", "--library", "docs", "--json", "--mode", "lexical").stdout)
    assert found["hits"], found
    # What each kind must be refused as, where it is not a matter of timing.
    assert outcomes["pdf_nested_array"] == {"malformed_input"}
    assert outcomes["pdf_nested_dict"] == {"malformed_input"}
    assert outcomes["pdf_text_bomb"] == {"too_large"}
    assert outcomes["pdf_image_bomb"] == {"indexed"}
    assert outcomes["pdf_many_images"] == {"indexed"}
    for kind in ["html_10k_divs", "html_unclosed_b", "html_100k_divs", "html_1m_divs", "html_nested_tables", "epub_deep_xml",
                 "odt_deep", "rtf_deep"]:
        assert outcomes[kind] == {"malformed_input"}, (kind, outcomes[kind])
    for kind in ["odt_bomb", "odt_repeated_cells", "mbox_many", "zip_bomb", "zip_many", "tar_gz_bomb",
                 "tar_lying_size"]:
        assert outcomes[kind] == {"too_large"}, (kind, outcomes[kind])
    # calamine's own cell cap answers first; a multipart maze holds no text.
    assert outcomes["ods_repeated_cells"] == {"malformed_input"}
    assert outcomes["eml_nested"] == {"empty_content"}
    # Archives nest two deep: the note at the bottom of twenty is never read.
    assert outcomes["zip_nested"] == {"empty_content"}


def test_hostile_files_over_mcp_and_upload(tmp_path, data):
    config, fixtures, _ = setup(tmp_path, data)
    kinds = [k for k in fixtures if k not in RECORDS]
    with HttpServer(data, "--toolsets", "native", config=config) as server:

        async def go():
            async with http_mcp(server.url) as c:
                # A copy under the test's folder: a server reads only where
                # an agent may (the checkout could sit in a dot-folder).
                sample = tmp_path / "dropout.md"
                sample.write_bytes((SAMPLES / "dropout.md").read_bytes())
                seeded = await ok(c, "ingest", {"library": "docs", "paths": [str(sample)]})
                assert seeded["indexed"] == 1
                for kind in kinds:
                    started = time.monotonic()
                    report = await ok(c, "ingest", {"library": "docs", "paths": [str(fixtures[kind])]})
                    elapsed = time.monotonic() - started
                    assert elapsed < TIMEOUT_SECS + 15, f"{kind} took {elapsed:.1f} s"
                    if kind in MAY_INDEX and report["indexed"] == 1:
                        await ok(c, "delete_document", {"document_id": report["items"][0]["document_id"]})
                        continue
                    assert report["failed"] == 1 and report["indexed"] == 0, f"{kind}: {report}"
                    code = report["items"][0]["error"]["code"].lower()
                    assert code in REFUSED, f"{kind}: {report}"
                    assert elapsed < TIMEOUT_SECS + 15, f"{kind} took {elapsed:.1f} s"
                    # The server still serves between hostile files.
                    listed = await ok(c, "list_documents", {"library": "docs"})
                    assert listed["total"] == 1, f"after {kind}: {listed}"

        run(go())
        assert server.process.poll() is None, "the server died"
    # POST /upload is the mcpvectordb contract's route, served with that
    # toolset (issue 26); its own server, on a data directory of its own.
    with HttpServer(tmp_path / "uploads", "--toolsets", "mcpvectordb", config=config) as server:
        for kind in ["pdf_nested_dict", "html_unclosed_b", "epub_deep"]:
            name = fixtures[kind].name
            status, body = upload(server.url, [("file", (name, fixtures[kind].read_bytes())), ("library", "docs")])
            # Seed 004's table: a file the pipeline cannot read is a
            # pipeline error (500); one over the size limit, 413.
            assert status in (413, 500) and body["status"] == "error", f"{kind}: {status} {body}"
        assert server.process.poll() is None, "the server died"
