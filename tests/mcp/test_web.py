"""Issue 51: the web app served by `folio serve --http` at `/`, driven in a
real browser (Playwright's library on Debian's chromium, tests/web/app.mjs):
libraries listed, a search with a format filter, a hit opened by keyboard
with its cited passage marked in the document, no script errors, no
accessibility violations axe-core reports, a layout that fits 360 px. On a
server that asks for keys: a key signed in once is kept in an HttpOnly,
SameSite=Strict cookie no script reads, shows only the key's libraries,
and a request without the app's header carries no credential."""

import json
import subprocess
from pathlib import Path

from conftest import BIN, SAMPLES, HttpServer, folio_env
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
    assert seen["violations_document"] == [] and seen["violations_search"] == [], seen
    for shot in ["search.png", "document.png"]:
        assert (artifacts / shot).stat().st_size > 10_000, shot


def test_search_and_a_cited_passage_in_the_browser(data, tmp_path):
    ingest(data, "docs", SAMPLES)
    # A file added through the page (a path on the server, as an agent's
    # ingest takes it).
    added = tmp_path / "notes" / "optimisers.txt"
    added.parent.mkdir()
    added.write_bytes((SAMPLES / "optimisers.txt").read_bytes())
    with HttpServer(data) as server:
        for width in [1280, 360]:
            artifacts = ARTIFACTS / f"loopback-{width}"
            seen = drive(server.url, artifacts, library="docs", format="markdown", width=width,
                         query="why does dropout reduce overfitting",
                         add={"library": "notes", "path": str(added)} if width == 1280 else None)
            assert_page_sound(seen, artifacts)
            assert seen["add_visible"]
            if width == 1280:
                assert seen["add_status"].startswith("1 indexed, 0 unchanged, 0 failed"), seen["add_status"]
                assert seen["libraries"] == ["docs"]
                assert sorted(seen["libraries_after_add"]) == ["docs", "notes"]
            else:
                assert sorted(seen["libraries"]) == ["docs", "notes"]
            # The facet offers the library's formats; the filter holds.
            assert {"markdown", "html", "text"} <= set(seen["formats"]), seen["formats"]
            assert seen["hits"][0] == "Dropout as regularisation", seen["hits"]
            assert all(".md" in c for c in seen["citations"]), seen["citations"]
            # The hit's passage, marked where it stands in its document.
            text = (SAMPLES / "dropout.md").read_text()
            assert seen["cited"].strip() and seen["cited"].split()[0] in text
            assert "co-adaptation" in seen["cited"], seen["cited"]
            assert seen["cited_visible"] and seen["focused"] == "back"
            assert not seen["overflows"], f"the page is wider than {width} px"


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
        # A search-only key is offered no ingest control.
        assert not seen["add_visible"]
        assert seen["cookies"] == [{"name": "folio_key", "httpOnly": True, "sameSite": "Strict"}], seen["cookies"]
        assert not seen["script_sees_cookie"]
        # The key's libraries only.
        assert seen["libraries"] == ["docs"], seen["libraries"]
        assert seen["hits"][0] == "Dropout as regularisation"
        # Without the app's header the cookie is no credential.
        assert seen["forged_status"] == 401, seen
        # A wrong key is refused at sign-in.
        refused = subprocess.run(
            ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "X-Folio-App: 1",
             "-H", "Content-Type: application/json", "--data", '{"key": "folio_nothing"}', server.url + "/app/session"],
            capture_output=True, text=True)
        assert refused.stdout == "401", refused


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
    ingest(data, "docs", SAMPLES)
    with HttpServer(data) as server:
        seen = drive_app(server.url, library="docs", query="why does dropout reduce overfitting")
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

        plain = drive_app(server.url, plain=True)
        assert "io.modelcontextprotocol/ui" not in (plain["server_extensions"] or {}), plain
        assert plain["tool_views"] == {} and plain["ui_resources"] == [], plain
