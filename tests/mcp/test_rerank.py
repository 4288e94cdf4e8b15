"""Reranking as an agent asks for it: the native MCP `search` tool with
`rerank`, on the embedded store and (FOLIO_MCP_BACKEND=postgres) on
PostgreSQL. The CLI test (a_cross_encoder_reranks_the_best_candidates_within_its_budget)
checks the budget and configuration; this one checks the tool's wiring and
the blend on both backends, with a cross-encoder of random weights made by
scripts/cross_encoder.py."""

import os
import subprocess
import sys
from pathlib import Path

from conftest import call, ok, run, stdio

ROOT = Path(__file__).resolve().parents[2]


def cross_encoder(tmp_path):
    home = Path(os.environ.get("FOLIO_HOME", Path.home() / ".local/share/folio"))
    out = tmp_path / "cross-encoder"
    subprocess.run([sys.executable, str(ROOT / "scripts/cross_encoder.py"), "make", str(out),
                    "--tokenizer", str(home / "models/all-MiniLM-L6-v2")], check=True, capture_output=True)
    return out


def test_the_search_tool_reranks_on_request(data, corpus, tmp_path):
    model = cross_encoder(tmp_path)
    query = "how does dropout keep a network from overfitting"

    async def go():
        async with stdio(data) as c:
            await ok(c, "ingest", {"library": "lib", "paths": [str(corpus)]})
            is_error, out = await call(c, "search", {"library": "lib", "query": query, "rerank": True})
            assert is_error and "no reranker is configured" in str(out), out

        async with stdio(data, env={"FOLIO_RERANK_MODEL": model}) as c:
            args = {"library": "lib", "query": query, "top_k": 50, "group_by_document": False,
                    "response_mode": "ids_only"}
            plain = await ok(c, "search", args)
            assert all("rerank_score" not in h for h in plain["hits"]), plain
            fused = {h["chunk_id"]: h["score"] for h in plain["hits"]}
            assert len(fused) >= 5, plain

            reranked = await ok(c, "search", {**args, "rerank": True})
            hits = reranked["hits"]
            assert {h["chunk_id"] for h in hits} == set(fused), "the same candidates, reordered"
            raw = [h["rerank_score"] for h in hits]
            low, high = min(raw), max(raw)
            assert high - low > 1e-6, "the cross-encoder tells the chunks apart"
            # Each score is half the fused score plus half the cross-encoder's
            # scaled over the candidates, and hits come best first.
            for hit in hits:
                want = 0.5 * fused[hit["chunk_id"]] + 0.5 * (hit["rerank_score"] - low) / (high - low)
                assert abs(hit["score"] - want) < 1e-4, (hit, want)
            assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
            assert [h["chunk_id"] for h in hits] != [h["chunk_id"] for h in plain["hits"]], "the reranker moved hits"

            off = await ok(c, "search", {**args, "rerank": False})
            assert [(h["chunk_id"], h["score"]) for h in off["hits"]] == [(h["chunk_id"], h["score"]) for h in plain["hits"]]

    run(go())
