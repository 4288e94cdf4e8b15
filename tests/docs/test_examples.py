"""The examples of the README and the guide, run as a reader would run them.

Every fenced block of shell, JSON or TOML in README.md and docs/ is an
example. Each file's examples run in order in a world of their own: a
working folder holding copies of samples/ and examples/, an empty home, a
fresh data directory, this build's `folio` first on PATH, the installed
model (nothing is fetched). Then:

- `sh`: the block runs in bash (`set -euo pipefail`) and must exit 0;
- `json`: it must parse; a host's server entry (`mcpServers` or `servers`)
  with a `command` is started as the host would start it (`uvx folio-mcp`
  and `folio` both mean this build) and must list its toolsets' tools
  over MCP; one with a `url` must name an MCP endpoint;
- `toml`: it must be a configuration folio accepts (`folio --config FILE
  models ls` reads every key).

A block that cannot run here says why in its fence (`sh no-run: serves
until stopped`). The counts are printed at the end of the run.
"""

import asyncio
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[2]
BIN = os.environ.get("FOLIO_BIN") or str(ROOT / "target/debug/folio")
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# Generated pages hold schemas, not examples; the benchmark history is a
# log of what was run then, against data of that time.
DOCUMENTS = [d for d in DOCUMENTS
             if "reference" not in d.relative_to(ROOT).parts and d.name != "benchmarks-history.md"]
LANGUAGES = {"sh", "bash", "json", "toml"}
FENCE = re.compile(r"^```(\S*)\s*(.*)$")
COUNTS = {"run": 0, "not run": 0, "commands": 0}


def examples(path):
    """(language, info after it, text, line) of each fenced block."""
    found, block = [], None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        match = FENCE.match(line)
        if block is None and match and match.group(1):
            block = (match.group(1), match.group(2), [], number)
        elif block is not None and line.startswith("```"):
            found.append((block[0], block[1], "\n".join(block[2]) + "\n", block[3]))
            block = None
        elif block is not None:
            block[2].append(line)
    assert block is None, f"{path}: a block opened at line {block[3]} is never closed"
    return found


def folio_home():
    home = os.environ.get("FOLIO_HOME") or os.path.join(
        os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share"), "folio")
    assert os.path.isdir(os.path.join(home, "models")), f"{home} holds no models: run scripts/setup.sh"
    return home


def world(tmp_path):
    """The folder and environment a file's examples run in."""
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    for folder in ("samples", "examples"):
        shutil.copytree(ROOT / folder, work / folder)
    env = {
        "PATH": f"{Path(BIN).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "FOLIO_HOME": folio_home(),
        "FOLIO_DATA_DIR": str(tmp_path / "data"),
        "HF_HUB_OFFLINE": "1",
        "FOLIO_LOG": "warn",
        "NO_COLOR": "1",
        "LANG": "C.UTF-8",
    }
    return work, env


def run_shell(text, work, env, where):
    out = subprocess.run(["bash", "-c", "set -euo pipefail\n" + text], cwd=work, env=env,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, f"{where} failed (exit {out.returncode}):\n{text}\n--- stdout\n{out.stdout[-3000:]}\n--- stderr\n{out.stderr[-3000:]}"


def host_command(entry):
    """The command line a host runs for a server entry, as this build."""
    command, args = entry["command"], list(entry.get("args", []))
    if command == "uvx":
        assert args and args[0] == "folio-mcp", entry
        args = args[1:] or ["serve", "--stdio"]
    else:
        assert command in ("folio", "folio-mcp"), entry
    return args


def check_server(entry, work, env, where):
    if "url" in entry:
        assert entry["url"].rstrip("/").endswith("/mcp"), f"{where}: {entry['url']} is no MCP endpoint"
        return
    args = host_command(entry)
    toolsets = ["native"]
    if "--toolsets" in args:
        toolsets = args[args.index("--toolsets") + 1].split(",")
    params = StdioServerParameters(command=BIN, args=args, env=env, cwd=str(work))

    async def listed():
        async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
            return [t.name for t in (await client.list_tools()).tools]

    names = asyncio.run(listed())
    # One tool each toolset is known by.
    expected = {"native": "get_chunks", "citeloom": "query_hybrid", "bmcis": "semantic_search",
                "mcpvectordb": "ingest_folder", "hansard": "search_speeches"}
    for toolset in toolsets:
        assert expected[toolset] in names, f"{where}: the {toolset} toolset is not served: {names}"
    if "--read-only" in args:
        assert "ingest" not in names, f"{where}: a read-only server lists ingest"


def check_json(text, work, env, where):
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        pytest.fail(f"{where}: not JSON: {e}\n{text}")
    servers = value.get("mcpServers") or value.get("servers") if isinstance(value, dict) else None
    for entry in (servers or {}).values():
        check_server(entry, work, env, where)


def check_toml(text, work, env, where, tmp_path):
    config = tmp_path / "example.toml"
    config.write_text(text)
    out = subprocess.run([BIN, "--config", str(config), "models", "ls"], cwd=work, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, f"{where}: folio refuses this configuration:\n{text}\n{out.stderr}"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda d: str(d.relative_to(ROOT)))
def test_the_examples_run_as_written(document, tmp_path):
    work, env = world(tmp_path)
    ran = 0
    for language, info, text, line in examples(document):
        if language not in LANGUAGES:
            continue
        where = f"{document.relative_to(ROOT)}:{line}"
        if info.startswith("no-run"):
            assert re.match(r"no-run: \S", info), f"{where}: say why it is not run (`{language} no-run: why`)"
            COUNTS["not run"] += 1
            continue
        if language in ("sh", "bash"):
            run_shell(text, work, env, where)
            COUNTS["commands"] += sum(1 for l in text.splitlines() if l.strip() and not l.lstrip().startswith("#"))
        elif language == "json":
            check_json(text, work, env, where)
        else:
            check_toml(text, work, env, where, tmp_path)
        ran += 1
        COUNTS["run"] += 1
    print(f"{document.relative_to(ROOT)}: {ran} examples run")


def test_a_broken_example_fails(tmp_path):
    """The runner is no formality: a misspelt flag, a key folio does not
    know and a host entry whose server cannot start each fail."""
    work, env = world(tmp_path)
    with pytest.raises(AssertionError, match="failed"):
        run_shell("folio search dropout --library x --moode lexical\n", work, env, "broken")
    with pytest.raises(AssertionError, match="refuses this configuration"):
        check_toml('[search]\nfuson = "rrf"\n', work, env, "broken", tmp_path)
    with pytest.raises(Exception):
        check_json('{"mcpServers": {"folio": {"command": "folio", "args": ["serve", "--stdio", "--toolset", "native"]}}}',
                   work, env, "broken")
    with pytest.raises(AssertionError, match="no MCP endpoint"):
        check_json('{"servers": {"folio": {"url": "https://folio.example.org/"}}}', work, env, "broken")


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading):
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[`*_]|<[^>]+>", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    text = path.read_text()
    found = set(re.findall(r'<a id="([^"]+)"', text))
    in_code = False
    for line in text.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and line.startswith("#"):
            found.add(slug(line.lstrip("#")))
    return found


def test_every_link_of_the_documentation_leads_somewhere():
    pages = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted((ROOT / "docs").rglob("*.md"))]
    broken = []
    for page in pages:
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            resolved = (page.parent / file).resolve() if file else page
            if not resolved.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)
