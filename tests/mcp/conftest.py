"""Shared helpers for the MCP end-to-end tests.

Every test drives the real `folio` binary (FOLIO_BIN) with the official
Python MCP SDK, over stdio or streamable HTTP, with the real embedding model.
"""

import asyncio
import atexit
import contextlib
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from pdfs import assemble_pdf, pdf
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

BIN = os.environ.get("FOLIO_BIN") or str(Path(__file__).resolve().parents[2] / "target/debug/folio")
SAMPLES = Path(__file__).resolve().parents[2] / "samples"
MODES = ["legacy", "2026-07-28"]
# FOLIO_MCP_BACKEND=postgres runs every test against the PostgreSQL server of
# scripts/postgres.sh: each data directory gets a database of its own.
BACKEND = os.environ.get("FOLIO_MCP_BACKEND", "embedded")
POSTGRES = Path(__file__).resolve().parents[2] / "scripts/postgres.sh"
_databases = {}


def postgres(*args):
    """scripts/postgres.sh with `args`; its output, or a failure that says
    what the script said."""
    done = subprocess.run([str(POSTGRES), *args], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"postgres.sh {' '.join(args)} failed: {done.stderr}"
    return done.stdout


def store_url(data_dir):
    """The database standing for `data_dir` on the PostgreSQL backend,
    created on first use and dropped when the session ends."""
    key = str(Path(data_dir).resolve())
    if key not in _databases:
        name = "mcp_" + hashlib.sha1(key.encode()).hexdigest()[:20]
        made = postgres("createdb", name)
        _databases[key] = (name, made.strip())
    return _databases[key][1]


@contextlib.contextmanager
def holding_table(data_dir, table, seconds=5):
    """On the PostgreSQL backend: another session holds `table` exclusively
    (for at most `seconds`) while the block runs, so folio's queries of it
    wait."""
    name = _databases[str(Path(data_dir).resolve())][0]
    holder = subprocess.Popen([str(POSTGRES), "sql", name,
                               f"BEGIN; LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep({seconds}); COMMIT;"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    held = (f"SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
            f"WHERE c.relname = '{table}' AND l.mode = 'AccessExclusiveLock' AND l.granted")
    try:
        deadline = time.monotonic() + seconds
        while subprocess.run([str(POSTGRES), "sql", name, held], capture_output=True, text=True).stdout.strip() != "1":
            assert time.monotonic() < deadline and holder.poll() is None, "the lock was never taken"
            time.sleep(0.05)
        yield
    finally:
        holder.kill()
        holder.wait()


@atexit.register
def _drop_databases():
    for name, _ in _databases.values():
        subprocess.run([str(POSTGRES), "dropdb", name], capture_output=True)


def pytest_configure(config):
    config.addinivalue_line("markers", "embedded_only: about the embedded store's data directory or owner process")
    config.addinivalue_line("markers", "one_backend: about what happens before any store is written; run on the "
                                       "embedded backend only")


def pytest_collection_modifyitems(config, items):
    if BACKEND != "embedded":
        skip = pytest.mark.skip(reason="about the embedded store's data directory")
        once = pytest.mark.skip(reason="about what happens before any store is written: run on the embedded backend")
        for item in items:
            if "embedded_only" in item.keywords:
                item.add_marker(skip)
            elif "one_backend" in item.keywords:
                item.add_marker(once)


def run(coro):
    return asyncio.run(coro)


def folio_env(data_dir, config=None, backend=None, **extra):
    """The environment of a folio process on `data_dir`: the embedded store
    there, or on the PostgreSQL backend a database of its own (`backend`
    overrides the suite's choice)."""
    env = dict(os.environ)
    env["FOLIO_DATA_DIR"] = str(data_dir)
    env.pop("FOLIO_STORE_URL", None)
    if (backend or BACKEND) == "postgres":
        env["FOLIO_STORE_URL"] = store_url(data_dir)
    env.setdefault("FOLIO_LOG", "warn")
    if config is not None:
        env["FOLIO_CONFIG"] = str(config)
    env.update({k: str(v) for k, v in extra.items()})
    return env


@contextlib.asynccontextmanager
async def stdio(data_dir, *args, mode="legacy", config=None, env=None, **client):
    params = StdioServerParameters(
        command=BIN,
        args=["serve", "--stdio", *args],
        env=folio_env(data_dir, config, **(env or {})),
    )
    async with Client(params, mode=mode, read_timeout_seconds=300, **client) as session:
        yield session


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HttpServer:
    """`folio serve --http` on a free loopback port, stopped on exit."""

    def __init__(self, data_dir, *args, config=None, env=None, port=None):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [BIN, "serve", "--http", f"127.0.0.1:{self.port}", *args],
            env=folio_env(data_dir, config, **(env or {})),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(self.process.stderr.read().decode())
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=1):
                    return
            except urllib.error.HTTPError:
                return  # answering (a token is required): up
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the HTTP server did not start")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        assert self.process.returncode is not None


@contextlib.asynccontextmanager
async def http_mcp(url, mode="legacy", key=None):
    """An MCP client over streamable HTTP; with `key`, every request carries
    it as the bearer token."""
    if key is None:
        async with Client(url + "/mcp", mode=mode, read_timeout_seconds=300) as client:
            yield client
        return
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {key}"}) as http:
        transport = streamable_http_client(url + "/mcp", http_client=http)
        async with Client(transport, mode=mode, read_timeout_seconds=300) as client:
            yield client


async def call(client, name, arguments=None, **kw):
    """Calls a tool; returns (is_error, structured content)."""
    result = await client.call_tool(name, arguments or {}, **kw)
    data = result.structured_content
    if data is None and result.content:
        data = json.loads(result.content[0].text)
    return result.is_error, data


async def ok(client, name, arguments=None, **kw):
    is_error, data = await call(client, name, arguments, **kw)
    assert not is_error, f"{name} failed: {data}"
    return data


async def fails(client, name, arguments=None):
    is_error, data = await call(client, name, arguments)
    assert is_error, f"{name} should have failed: {data}"
    return data


def scanned_pdf(pages, dpi=200):
    """A scan: each page's text typeset by `pdf`, rendered to grey pixels by
    pdftoppm and stored as a page-sized image, with no text layer."""
    import tempfile
    import zlib

    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{3 + 3 * i} 0 R" for i in range(len(pages)))
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    for i, text in enumerate(pages):
        with tempfile.TemporaryDirectory() as tmp:
            source = Path(tmp) / "page.pdf"
            source.write_bytes(pdf([text]))
            subprocess.run(["pdftoppm", "-r", str(dpi), "-gray", "-singlefile", str(source), f"{tmp}/page"], check=True)
            pgm = (Path(tmp) / "page.pgm").read_bytes()
        header = re.match(rb"P5\s+(\d+)\s+(\d+)\s+255\s", pgm)
        width, height = header.group(1), header.group(2)
        pixels = pgm[header.end():]
        content, image = 4 + 3 * i, 5 + 3 * i
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                       f"/Resources << /XObject << /Im1 {image} 0 R >> >> /Contents {content} 0 R >>".encode())
        draw = b"q 612 0 0 792 0 0 cm /Im1 Do Q"
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(draw), draw))
        data = zlib.compress(pixels[: int(width) * int(height)])
        objects.append(b"<< /Type /XObject /Subtype /Image /Width %s /Height %s /ColorSpace /DeviceGray "
                       b"/BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream"
                       % (width, height, len(data), data))
    return assemble_pdf(objects)


@pytest.fixture
def corpus(tmp_path):
    """The sample documents plus a two-page PDF and a nested folder."""
    docs = tmp_path / "docs"
    shutil.copytree(SAMPLES, docs)
    (docs / "nested").mkdir()
    (docs / "nested" / "transformers.pdf").write_bytes(
        pdf(
            [
                "Transformers replace recurrence with self-attention over all positions.",
                "Positional encodings give the model the order of the tokens in a sequence.",
            ]
        )
    )
    return docs


@pytest.fixture
def data(tmp_path):
    return tmp_path / "data"


def write_config(path, text):
    path.write_text(text)
    return path


# Seed 003's result shapes, by response mode (semantic_search and
# find_vendor_info).
BMCIS_SHAPES = {
    "ids_only": {"chunk_id", "hybrid_score", "rank"},
    "metadata": {"chunk_id", "source_file", "source_category", "hybrid_score", "rank", "chunk_index", "total_chunks"},
    "preview": {"chunk_id", "source_file", "source_category", "hybrid_score", "rank", "chunk_index", "total_chunks", "chunk_snippet", "context_header"},
    "full": {"chunk_id", "chunk_text", "similarity_score", "bm25_score", "hybrid_score", "rank", "score_type", "source_file", "source_category", "context_header", "chunk_index", "total_chunks", "chunk_token_count"},
}
