"""The folio-mcp wheel as a user gets it: pip installs the built wheel
(FOLIO_WHEEL, made by scripts/wheel.sh) into an empty virtualenv, then an MCP
client starts the installed `folio-mcp` (no arguments: MCP over stdio, as a
client configuration names it) with an empty folio home and hub cache; the
server finds ONNX Runtime in the onnxruntime wheel pip installed beside it,
fetches the default model's graph from the local hub, ingests samples/ and
answers a cited search. The whole run is timed.
"""

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client

from conftest import SAMPLES, Env, sha256, setup_model

WHEEL = os.environ.get("FOLIO_WHEEL")


def test_the_installed_wheel_serves_a_cited_search_from_nothing(hub_server, tmp_path):
    assert WHEEL and Path(WHEEL).is_file(), "FOLIO_WHEEL names no wheel: run scripts/wheel.sh test"
    hub = hub_server()
    env = Env(tmp_path, hub.endpoint, runtime=False)
    venv = tmp_path / "venv"
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    installed = subprocess.run([str(venv / "bin/python"), "-m", "pip", "install", "-q",
                                "--disable-pip-version-check", WHEEL], capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr
    installed_at = time.monotonic()
    for command in ("folio", "folio-mcp"):
        assert (venv / "bin" / command).is_file(), f"the wheel installs no {command}"
    # The man page and completions land beside bin/, where man (through
    # PATH) and the shells' completion loaders look for them.
    for shared in ("share/man/man1/folio.1", "share/bash-completion/completions/folio",
                   "share/zsh/site-functions/_folio", "share/fish/vendor_completions.d/folio.fish"):
        assert (venv / shared).is_file(), f"the wheel installs no {shared}"
    man_env = {k: v for k, v in os.environ.items() if k != "MANPATH"}
    page = subprocess.run(["man", "folio"], capture_output=True, text=True,
                          env=dict(man_env, PATH=f"{venv / 'bin'}:/usr/bin:/bin", MANWIDTH="100"))
    assert page.returncode == 0 and "folio ingest [OPTIONS]" in page.stdout, page.stderr
    config = tmp_path / "config.toml"
    config.write_text(f'[ingest]\nroots = ["{SAMPLES}"]\n')
    server_env = dict(env.env, FOLIO_CONFIG=str(config), FOLIO_DATA_DIR=str(tmp_path / "data"),
                      PATH=f"{venv / 'bin'}:{os.environ.get('PATH', '')}")
    stderr_path = tmp_path / "server.stderr"

    async def session():
        params = StdioServerParameters(command=str(venv / "bin/folio-mcp"), args=[], env=server_env)
        with open(stderr_path, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                report = await client.call_tool("ingest", {"library": "notes", "paths": [str(SAMPLES)]})
                assert not report.is_error, report.content
                found = await client.call_tool("search", {"library": "notes",
                                                          "query": "why is attention quadratic in sequence length"})
                assert not found.is_error, found.content
                return found.structured_content

    hits = asyncio.run(session())["hits"]
    answered = time.monotonic()
    assert hits[0]["source"].endswith("attention.html") and hits[0]["citation"], hits[:1]
    said = stderr_path.read_text()
    # The fast path: the runtime from the onnxruntime wheel, the hub's graph.
    assert "candle" not in said, said
    assert "onnx/model.onnx" in said, said
    assert sha256(env.snapshot / "onnx/model.onnx") == sha256(setup_model() / "model.onnx")
    print(f"\nwheel: pip install {installed_at - started:.1f} s, "
          f"first cited search {answered - installed_at:.1f} s, total {answered - started:.1f} s")
