"""Folders that stay indexed (issue 31) through the CLI and the server:
`folio sync` (dry run, then a pass) and `folio serve --watch FOLDER=LIBRARY`
keeping a library equal to a folder while an agent searches. What the
library should hold is read from the folder here."""

import asyncio
import json
import subprocess
import time
from pathlib import Path

from mcp import types

from conftest import BIN, folio_env, ok, run, stdio, write_config


def files(folder):
    return sorted(str(p.resolve()) for p in Path(folder).rglob("*") if p.is_file() and p.suffix in (".md", ".txt") and not any(part.startswith(".") for part in p.relative_to(folder).parts))


def test_sync_cli_dry_run_then_pass(data, tmp_path):
    folder = tmp_path / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text("# A\n\nAlpha apples.")
    (folder / "sub" / "b.md").write_text("# B\n\nBeta bananas.")

    def cli(*args):
        out = subprocess.run([BIN, "--json", *args], env=folio_env(data), capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    first = cli("sync", str(folder), "--library", "notes")
    assert sorted(first["added"]) == files(folder)
    (folder / "sub" / "b.md").rename(folder / "b-moved.md")
    (folder / "a.md").unlink()
    dry = cli("sync", str(folder), "--library", "notes", "--dry-run")
    assert dry["dry_run"] and len(dry["moved"]) == 1 and len(dry["removed"]) == 1
    listed = cli("ls", "notes")
    assert sorted(d["source"] for d in listed["documents"]) != files(folder), "a dry run changes nothing"
    done = cli("sync", str(folder), "--library", "notes")
    assert done["moved"][0]["to"] == str((folder / "b-moved.md").resolve()) and done["embedded_chunks"] == 0
    listed = cli("ls", "notes")
    assert sorted(d["source"] for d in listed["documents"]) == files(folder)


def test_a_served_folder_stays_indexed(data, tmp_path):
    folder = tmp_path / "watched"
    folder.mkdir()
    (folder / "first.md").write_text("# First\n\nFigs are sweet and soft.")
    config = write_config(tmp_path / "c.toml", f'[[watch]]\nfolder = "{folder}"\nlibrary = "notes"\n')

    async def until(client, query, wanted, limit=15):
        started = time.time()
        while True:
            hits = await ok(client, "search", {"library": "notes", "query": query, "mode": "lexical"})
            sources = sorted(h["source"] for h in hits["hits"])
            if sources == wanted:
                return time.time() - started
            assert time.time() - started < limit, (query, sources, wanted)
            time.sleep(0.1)

    heard = []

    async def on_message(message):
        if isinstance(message, types.ResourceListChangedNotification):
            heard.append(time.time())

    async def go():
        async with stdio(data, config=config, message_handler=on_message) as c:
            # The first pass runs on start; the library may not exist yet.
            started = time.time()
            while True:
                result = await c.call_tool("search", {"library": "notes", "query": "figs", "mode": "lexical"})
                if not result.is_error and result.structured_content["hits"]:
                    break
                if time.time() - started >= 60:
                    # What the watch did, and what the library holds, say
                    # which side failed.
                    info = await ok(c, "server_info")
                    listed = await c.call_tool("list_documents", {"library": "notes"})
                    raise AssertionError(f"the first pass never came: watches {info['watches']}, documents {listed.structured_content}")
                time.sleep(0.2)
            info = await ok(c, "server_info")
            assert [(w["folder"], w["library"], w["state"]) for w in info["watches"]] == [(str(folder), "notes", "watching")]
            before = len(heard)
            (folder / "second.md").write_text("# Second\n\nGuavas are tropical fruit.")
            await until(c, "guavas", [str((folder / "second.md").resolve())])
            started = time.time()
            while len(heard) == before:
                assert time.time() - started < 10, "no notifications/resources/list_changed after a pass"
                await asyncio.sleep(0.1)
            (folder / "first.md").unlink()
            await until(c, "figs", [])
            (folder / "deep").mkdir()
            (folder / "second.md").rename(folder / "deep" / "second.md")
            await until(c, "guavas", [str((folder / "deep" / "second.md").resolve())])
            listed = await ok(c, "list_documents", {"library": "notes"})
            assert sorted(d["source"] for d in listed["documents"]) == files(folder)
            info = await ok(c, "server_info")
            assert info["watches"][0]["changes"] >= 3 and info["watches"][0]["last_error"] is None

    run(go())

    # A read-only server cannot watch.
    out = subprocess.run([BIN, "serve", "--stdio", "--read-only"], env=folio_env(data, config), capture_output=True, text=True, timeout=60, input="")
    assert out.returncode == 2 and "read-only" in out.stderr, out.stderr


def test_a_pass_keeps_what_it_cannot_read(data, tmp_path):
    """Issue 46 §3: documents under a folder a pass could not read counted
    as gone (`chmod 000 docs/sub` removed them, `chmod 755` re-embedded
    them). They are kept and the folder is reported. As root, whom
    permissions do not stop, the pass runs without the capabilities that
    override them."""
    import os

    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text("# A\n\nAlpha apples.")
    (folder / "sub" / "b.md").write_text("# B\n\nBeta bananas.")

    def cli(*args, bound=False):
        command = [BIN, "--json", *args]
        if bound and os.geteuid() == 0:
            command = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]
        out = subprocess.run(command, env=folio_env(data), capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    first = cli("sync", str(folder), "--library", "notes")
    assert sorted(first["added"]) == files(folder)
    (folder / "sub").chmod(0)
    try:
        kept = cli("sync", str(folder), "--library", "notes", bound=True)
    finally:
        (folder / "sub").chmod(0o755)
    assert kept["removed"] == [], kept
    assert [u["source"] for u in kept["unreadable"]] == [str((folder / "sub").resolve())], kept
    back = cli("sync", str(folder), "--library", "notes")
    assert back["added"] == [] and back["replaced"] == [] and back["removed"] == [], back
    assert back["unchanged"] == 2 and back["embedded_chunks"] == 0


def test_a_folder_that_cannot_be_watched_is_polled_and_said_so(data, tmp_path):
    """Issue 46 §4: after the watcher failed (an unreadable subfolder) the
    loop tried again every 100 ms, each try walking the whole tree. The
    watch now rescans on a schedule, backs off its tries, and `server_info`
    says `polling` and why. As root the server runs without the
    capabilities that would let it read the folder anyway."""
    import os
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    from load_keys import free_port, post, result_of, session_when_up

    folder = tmp_path / "watched"
    (folder / "locked").mkdir(parents=True)
    (folder / "a.md").write_text("# A\n\nAlpha apples.")
    (folder / "locked").chmod(0)
    port = free_port()
    command = [BIN, "serve", "--http", f"127.0.0.1:{port}", "--watch", f"{folder}=notes"]
    if os.geteuid() == 0:
        command = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]
    server = subprocess.Popen(command, env=folio_env(data), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        headers = session_when_up(port)
        deadline = time.time() + 120
        while True:
            body = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "server_info", "arguments": {}}}
            watch = result_of(post(port, body, headers)[3])["result"]["structuredContent"]["watches"][0]
            if watch["passes"] >= 1:
                break
            assert time.time() < deadline, watch
            time.sleep(0.2)
        assert watch["state"] == "polling", watch
        assert "rescans every 30 s" in watch["last_error"] and "Permission denied" in watch["last_error"], watch
        assert any("locked" in f for f in watch["failing"]), watch
    finally:
        server.terminate()
        server.wait(timeout=30)
        (folder / "locked").chmod(0o755)


def test_a_watched_file_that_keeps_failing_stays_listed_as_failing(data, tmp_path):
    """A file that fails (a note of blank lines: no text to index) is not
    read again while it is unchanged; later passes still list it, with its
    reason, under the watch's failing files in server_info (before, only the
    pass that first read it did, and the next pass emptied the list)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    from load_keys import free_port, post, result_of, session_when_up

    folder = tmp_path / "watched"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nAlpha apples.")
    (folder / "empty.md").write_text("\n   \n\n")
    port = free_port()
    server = subprocess.Popen([BIN, "serve", "--http", f"127.0.0.1:{port}", "--watch", f"{folder}=notes"],
                              env=folio_env(data), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        headers = session_when_up(port)

        def watch_when(ready):
            deadline = time.time() + 120
            while True:
                body = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "server_info", "arguments": {}}}
                watch = result_of(post(port, body, headers)[3])["result"]["structuredContent"]["watches"][0]
                if ready(watch):
                    return watch
                assert time.time() < deadline, watch
                time.sleep(0.2)

        first = watch_when(lambda w: w["passes"] >= 1 and w["failing"])
        assert [f.split(": ")[0] for f in first["failing"]] == [str(folder / "empty.md")], first
        # Another file arrives: a pass that reads it and not empty.md again.
        (folder / "b.md").write_text("# B\n\nBeta bananas.")
        later = watch_when(lambda w: w["passes"] > first["passes"] and w["changes"] > first["changes"])
        assert later["failing"] == first["failing"], (first, later)
        # Fixed, it is read again and leaves the list.
        (folder / "empty.md").write_text("# Now\n\nIt has words.")
        fixed = watch_when(lambda w: w["passes"] > later["passes"] and w["changes"] > later["changes"])
        assert fixed["failing"] == [], fixed
    finally:
        server.terminate()
        server.wait(timeout=30)
