"""Models fetched on first use from a hub speaking the Hugging Face layout:
a fresh fetch then a cited search, the candle path without ONNX Runtime, a
fetch killed and resumed, files that do not match their hashes refused,
offline mode, and a hub cache shared with the Python `huggingface_hub`
client both ways (it is the independent oracle of the cache layout).
"""

import json
import os
import subprocess
import sys
import time

import pytest

from conftest import BIN, COMMIT, REPO, SAMPLES, Env, sha256, setup_model

PINNED_SAFETENSORS = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


def search(env, query="why is attention quadratic in sequence length"):
    out = env.run("--json", "search", query, "--library", "notes")
    return json.loads(out.stdout)


def test_a_first_search_fetches_the_default_model_then_answers(hub_server, tmp_path):
    hub = hub_server()
    env = Env(tmp_path, hub.endpoint)
    ingest = env.run("ingest", str(SAMPLES), "--library", "notes")
    assert "fetching sentence-transformers/all-MiniLM-L6-v2 onnx/model.onnx" in ingest.stderr
    # The graph on disk is the one the hub served, in the hub's cache layout.
    graph = env.snapshot / "onnx/model.onnx"
    assert os.readlink(graph) == "../../../blobs/" + sha256(setup_model() / "model.onnx")
    assert sha256(graph) == sha256(setup_model() / "model.onnx")
    assert not list(env.repo_dir.glob("blobs/*.incomplete"))
    hits = search(env)["hits"]
    assert hits and hits[0]["source"].endswith("attention.html"), hits[:1]
    assert hits[0]["citation"]
    inspect = json.loads(env.run("--json", "inspect", "notes").stdout)
    assert inspect["info"]["space"]["model"] == REPO, inspect
    # Pinned and whole: later runs ask the hub nothing.
    before = len(hub.requests())
    search(env)
    assert len(hub.requests()) == before


def test_without_onnx_runtime_the_candle_path_fetches_the_pinned_safetensors(hub_server, tmp_path):
    hub = hub_server()
    env = Env(tmp_path, hub.endpoint, runtime=False)
    pull = env.run("models", "pull", "all-MiniLM-L6-v2")
    assert "candle path" in pull.stderr
    weights = env.snapshot / "model.safetensors"
    assert sha256(weights) == PINNED_SAFETENSORS
    assert not (env.snapshot / "onnx").exists()
    listing = json.loads(env.run("--json", "models", "ls").stdout)
    row = next(m for m in listing["models"] if m["name"] == "all-MiniLM-L6-v2")
    assert row["installed"] and row["revision"] == COMMIT and listing["onnx_runtime"] is False
    env.run("ingest", str(SAMPLES), "--library", "notes")
    assert search(env)["hits"][0]["source"].endswith("attention.html")


def test_a_killed_fetch_resumes_where_it_stopped(hub_server, tmp_path):
    slow = hub_server("--throttle", "6000000")
    env = Env(tmp_path, slow.endpoint, runtime=False)
    pull = env.popen("models", "pull", "all-MiniLM-L6-v2")
    partial = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = list(env.repo_dir.glob("blobs/*.incomplete"))
        if found and found[0].stat().st_size > 10_000_000:
            partial = found[0]
            break
        time.sleep(0.05)
    pull.kill()
    pull.wait()
    assert partial is not None, "the fetch never got going"
    kept = partial.stat().st_size
    # No half model: the snapshot has no weights, so nothing uses it.
    assert not (env.snapshot / "model.safetensors").exists()
    slow.stop()
    fast = hub_server()
    env.env["HF_ENDPOINT"] = fast.endpoint
    env.run("models", "pull", "all-MiniLM-L6-v2")
    ranges = [r["range"] for r in fast.requests() if r["method"] == "GET" and "/cdn/" in r["path"]]
    assert len(ranges) == 1 and ranges[0].startswith("bytes="), ranges
    assert int(ranges[0][len("bytes="):].rstrip("-")) >= kept
    assert sha256(env.snapshot / "model.safetensors") == PINNED_SAFETENSORS
    assert not list(env.repo_dir.glob("blobs/*.incomplete"))


def test_bytes_that_do_not_match_the_pinned_hash_are_refused(hub_server, tmp_path):
    # A mirror that states the right hash but serves other bytes.
    hub = hub_server("--lie", "model.safetensors")
    env = Env(tmp_path, hub.endpoint, runtime=False)
    failed = env.run("models", "pull", "all-MiniLM-L6-v2", check=False)
    assert failed.returncode == 1
    assert "does not match its pinned hash" in failed.stderr, failed.stderr
    assert not (env.snapshot / "model.safetensors").exists()
    assert not list(env.repo_dir.glob("blobs/*.incomplete"))
    assert not (env.repo_dir / "blobs" / PINNED_SAFETENSORS).exists()


def test_a_repository_changed_under_the_pin_is_refused_before_downloading(hub_server, tmp_path):
    hub = hub_server("--substitute", "model.safetensors")
    env = Env(tmp_path, hub.endpoint, runtime=False)
    failed = env.run("models", "pull", "all-MiniLM-L6-v2", check=False)
    assert failed.returncode == 1 and "content address" in failed.stderr, failed.stderr
    assert not [r for r in hub.requests() if "/cdn/" in r["path"]]


def test_a_pinned_file_is_never_linked_to_a_blob_the_hub_names(hub_server, tmp_path):
    """Issue 46 §9: for a pinned file any ETag that was not 64 hex digits
    was accepted and an existing blob of that name linked unchecked, so a
    hostile endpoint could plant a blob under a git address (an earlier
    fetch of a small file) and name it as the pinned file's ETag."""
    import urllib.request

    hub = hub_server("--disguise", "model.safetensors")
    env = Env(tmp_path, hub.endpoint, runtime=False)
    # The git address the hub will state for the pinned file, with a blob
    # already in the cache under that name.
    head = urllib.request.Request(f"{hub.endpoint}/{REPO}/resolve/{COMMIT}/model.safetensors", method="HEAD")
    with urllib.request.urlopen(head, timeout=30) as r:
        address = r.headers["ETag"].strip('"')
    assert len(address) == 40
    (env.repo_dir / "blobs").mkdir(parents=True)
    (env.repo_dir / "blobs" / address).write_bytes(b"not the model's weights")
    failed = env.run("models", "pull", "all-MiniLM-L6-v2", check=False)
    assert failed.returncode == 1 and "does not match its pinned hash" in failed.stderr, failed.stderr
    assert not (env.snapshot / "model.safetensors").exists()
    assert not (env.repo_dir / "blobs" / PINNED_SAFETENSORS).exists()


def test_a_body_longer_than_stated_is_cut_off(hub_server, tmp_path):
    hub = hub_server("--understate", "model.safetensors")
    env = Env(tmp_path, hub.endpoint, runtime=False)
    failed = env.run("models", "pull", "all-MiniLM-L6-v2", check=False)
    assert failed.returncode == 1 and "more than the" in failed.stderr, failed.stderr
    assert not list(env.repo_dir.glob("blobs/*.incomplete"))
    assert not (env.snapshot / "model.safetensors").exists()


def test_a_graph_the_hub_hashes_wrongly_is_refused(hub_server, tmp_path):
    # onnx/model.onnx has no pinned hash: the hub's content address checks it.
    hub = hub_server("--lie", "onnx/model.onnx")
    env = Env(tmp_path, hub.endpoint)
    failed = env.run("models", "pull", "all-MiniLM-L6-v2", check=False)
    assert failed.returncode == 1 and "does not match" in failed.stderr, failed.stderr
    assert not (env.snapshot / "onnx/model.onnx").exists()


def test_offline_mode_reads_the_cache_or_says_how_to_provide_a_model(hub_server, tmp_path):
    hub = hub_server()
    env = Env(tmp_path, hub.endpoint)
    env.env["HF_HUB_OFFLINE"] = "1"
    failed = env.run("search", "attention", "--library", "notes", check=False)
    assert failed.returncode == 1
    for hint in ("HF_HUB_OFFLINE", "--model-dir", "scripts/setup.sh"):
        assert hint in failed.stderr, failed.stderr
    assert hub.requests() == []
    del env.env["HF_HUB_OFFLINE"]
    env.run("models", "pull", "all-MiniLM-L6-v2")
    hub.stop()
    env.env["HF_HUB_OFFLINE"] = "1"
    env.run("ingest", str(SAMPLES), "--library", "notes")
    assert search(env)["hits"]


def test_the_cache_is_shared_with_huggingface_hub_both_ways(hub_server, tmp_path):
    hub = hub_server()
    env = Env(tmp_path, hub.endpoint, runtime=False)
    # The Python client fills the cache from the same hub ...
    script = (
        "import sys; from huggingface_hub import snapshot_download; "
        "print(snapshot_download(sys.argv[1], revision=sys.argv[2], allow_patterns=sys.argv[3:]))"
    )
    patterns = ["*.json", "model.safetensors"]
    made = subprocess.run([sys.executable, "-c", script, REPO, COMMIT, *patterns],
                          env=env.env, capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip().endswith(COMMIT)
    # ... and folio uses it as it is, offline, asking the hub nothing.
    before = len(hub.requests())
    env.env["HF_HUB_OFFLINE"] = "1"
    env.run("ingest", str(SAMPLES), "--library", "notes")
    assert search(env)["hits"][0]["source"].endswith("attention.html")
    assert len(hub.requests()) == before
    # The other way: what folio fetches, the Python client finds offline.
    del env.env["HF_HUB_OFFLINE"]
    other = Env(tmp_path / "other", hub.endpoint)
    other.run("models", "pull", "all-MiniLM-L6-v2")
    other.env["HF_HUB_OFFLINE"] = "1"
    read = (
        "import sys; from huggingface_hub import hf_hub_download; "
        "print(hf_hub_download(sys.argv[1], 'onnx/model.onnx', revision=sys.argv[2], local_files_only=True))"
    )
    found = subprocess.run([sys.executable, "-c", read, REPO, COMMIT], env=other.env,
                           capture_output=True, text=True, timeout=120)
    assert found.returncode == 0, found.stderr
    assert sha256(found.stdout.strip()) == sha256(setup_model() / "model.onnx")


def test_the_token_goes_to_the_hub_and_never_to_its_cdn(hub_server, tmp_path):
    hub = hub_server()
    env = Env(tmp_path, hub.endpoint)
    env.env["HF_TOKEN"] = "hf_test_token"
    env.run("models", "pull", "all-MiniLM-L6-v2")
    asked = hub.requests()
    on_hub = [r for r in asked if "/resolve/" in r["path"]]
    on_cdn = [r for r in asked if "/cdn/" in r["path"]]
    assert on_hub and on_cdn
    assert all(r["authorization"] == "Bearer hf_test_token" for r in on_hub)
    assert all(r["authorization"] is None for r in on_cdn)


def test_a_server_without_its_model_answers_then_fetches_it_on_first_use(hub_server, tmp_path):
    """No cached model and no hub: `folio serve --stdio` still answers
    initialize and tools/list (a host shows its tools, not "server
    disconnected"); a call that needs the model fails with the message the
    CLI gives. Once the hub is up, the next such call fetches the model and
    answers."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = Env(tmp_path, f"http://127.0.0.1:{port}")
    env.env["FOLIO_DATA_DIR"] = str(tmp_path / "data")
    server = subprocess.Popen([BIN, "serve", "--stdio"], env=env.env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def ask(id_, method, params=None):
        message = {"jsonrpc": "2.0", "id": id_, "method": method, "params": params or {}}
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()
        while True:
            answer = json.loads(server.stdout.readline())
            if answer.get("id") == id_:
                return answer

    ingest = {"name": "ingest", "arguments": {"library": "notes", "paths": [str(SAMPLES)]}}
    try:
        started = time.time()
        init = ask(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "host", "version": "1"}})
        assert init["result"]["serverInfo"]["name"] == "folio"
        server.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        tools = ask(2, "tools/list")["result"]["tools"]
        assert "search" in {t["name"] for t in tools} and time.time() - started < 10
        failed = ask(3, "tools/call", ingest)["result"]
        assert failed["isError"] and failed["structuredContent"]["error"]["code"] == "MODEL"
        offline = env.run("ingest", str(SAMPLES), "--library", "notes", check=False)
        assert offline.returncode != 0
        # The same words as the CLI's.
        assert f"cannot reach the model hub at http://127.0.0.1:{port}" in failed["structuredContent"]["error"]["message"]
        assert f"cannot reach the model hub at http://127.0.0.1:{port}" in offline.stderr
        hub_server("--port", str(port))
        done = ask(4, "tools/call", ingest)["result"]
        assert not done.get("isError"), done
        assert done["structuredContent"]["indexed"] >= 3
        assert (env.snapshot / "onnx/model.onnx").exists()
        found = ask(5, "tools/call", {"name": "search", "arguments": {
            "library": "notes", "query": "why is attention quadratic in sequence length"}})["result"]
        assert found["structuredContent"]["hits"][0]["source"].endswith("attention.html")
    finally:
        server.stdin.close()
        server.wait(timeout=30)


GERMAN = {
    "handschriften.md": "# Handschriften\n\nDie Bibliothek bewahrt alte Handschriften in klimatisierten Räumen auf, "
                        "damit das Pergament über Jahrhunderte erhalten bleibt. Besucher lesen nur Kopien.",
    "volltext.md": "# Volltextsuche\n\nEine Volltextsuchmaschine baut einen invertierten Index auf, der jedes Wort "
                   "den Dokumenten zuordnet, die es enthalten.",
    "vitamin.md": "# Vitamin D\n\nVitamin-D-Präparate erhöhten in einer zweijährigen randomisierten Studie die "
                  "Knochendichte älterer Patienten.",
}


def test_text_not_in_english_gets_the_advice_of_a_multilingual_model_and_the_advice_works(hub_server, tmp_path):
    """German documents in a library of the default (English) model: the
    ingest says so and names the command that moves the library to the
    multilingual model; that command fetches it from the hub at its
    catalogue commit and re-embeds the library, after which an English
    question finds the German document it asks about by meaning alone."""
    hub = hub_server()
    env = Env(tmp_path, hub.endpoint)
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in GERMAN.items():
        (docs / name).write_text(text, encoding="utf-8")
    report = json.loads(env.run("--json", "ingest", str(docs), "--library", "archiv").stdout)
    assert report["indexed"] == 3 and report["languages"] == {"de": report["chunks"]}, report
    advice = report["advice"]
    assert "100 % of this text is not English (de 100 %)" in advice and REPO in advice, advice
    command = advice.split("`")[1]
    assert command == "folio --model multilingual-e5-small rebuild archiv", advice
    env.run(*command.split()[1:])
    inspect = json.loads(env.run("--json", "inspect", "archiv").stdout)
    assert inspect["info"]["space"]["model"] == "intfloat/multilingual-e5-small", inspect
    assert inspect["info"]["space"]["query_prefix"] == "query: ", inspect
    for question, expected in [("How is old parchment preserved for centuries?", "handschriften.md"),
                               ("Does vitamin D make older people's bones denser?", "vitamin.md")]:
        found = json.loads(env.run("--json", "--model", "multilingual-e5-small", "search", question,
                                   "--library", "archiv", "--mode", "dense").stdout)
        assert found["hits"][0]["source"].endswith(expected), (question, found["hits"])
    # A library of the multilingual model gets no such advice.
    more = tmp_path / "more"
    more.mkdir()
    (more / "neu.md").write_text("# Neu\n\nEin weiteres deutsches Dokument über alte Bücher.", encoding="utf-8")
    again = json.loads(env.run("--json", "--model", "multilingual-e5-small", "ingest", str(more),
                               "--library", "archiv").stdout)
    assert again["indexed"] == 1 and "advice" not in again, again
