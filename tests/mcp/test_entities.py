"""The entity graph over MCP (issue 30): native `declare_entities`,
`entities`, `entity` and the `entity` search filter; bmcis
`find_vendor_info` in its four response modes. Which documents mention a
vendor is decided by an independent oracle: a case-insensitive,
word-bounded string search of the texts for the vendor's names."""

import collections
import json
import random
import re

import pytest
from mcp.shared.exceptions import MCPError

from conftest import BMCIS_SHAPES, fails, ok, run, stdio, write_config

VENDORS = [
    {"name": "Acme Holdings", "type": "organization", "aliases": ["Acme Corp.", "ACME"], "attributes": {"country": "US", "tier": 1}},
    {"name": "Globex", "type": "organization", "aliases": ["Globex GmbH"], "attributes": {"country": "DE"}},
    {"name": "Initech", "type": "organization", "aliases": [], "attributes": {}},
    {"name": "Umbrella Supplies", "type": "organization", "aliases": ["Umbrella"], "attributes": {}},
    {"name": "Jane Roe", "type": "person", "relations": [{"type": "account manager of", "target": "Globex"}]},
]
TOPICS = ["turbine maintenance", "invoice disputes", "delivery schedules", "security audits", "pricing terms"]


def corpus(seed=7, documents=40):
    """Documents that each mention a few vendors by a name or alias, and
    some that mention none."""
    rng = random.Random(seed)
    docs = []
    for i in range(documents):
        topic = rng.choice(TOPICS)
        named = rng.sample(VENDORS[:4], rng.choice([0, 1, 1, 2]))
        sentences = [f"Note {i} covers {topic} for the quarter."]
        for v in named:
            surface = rng.choice([v["name"], *v["aliases"]])
            sentences.append(f"The team reviewed {topic} with {surface} in detail.")
            sentences.append(f"Our contact at {surface} confirmed the plan.")
        if named and rng.random() < 0.3:
            sentences.append("Jane Roe will follow up next week.")
        docs.append({"name": f"note-{i:03}.md", "text": "# Note\n\n" + " ".join(sentences)})
    return docs


def mentions(text, vendor):
    names = [vendor["name"], *vendor.get("aliases", [])]
    # A name, not a longer word: letters and digits do not continue it.
    return any(re.search(r"(?<![\w])" + re.escape(n) + r"(?![\w])", text, re.IGNORECASE) for n in names)


def declared(vendors):
    return [{k: v for k, v in vendor.items()} for vendor in vendors]


def test_native_entities_end_to_end(data):
    docs = corpus()

    async def go():
        async with stdio(data) as c:
            for d in docs:
                await ok(c, "ingest", {"library": "kb", "content": d})
            report = await ok(c, "declare_entities", {"library": "kb", "entities": declared(VENDORS)})
            assert report["declared"] == len(VENDORS) and report["relinked_documents"] == len(docs)

            # The card of a vendor asked for by an alias: every document the
            # oracle finds, and no other.
            acme = VENDORS[0]
            card = await ok(c, "entity", {"library": "kb", "name": "acme corp"})
            assert (card["entity"], card["name"], card["matched_by"]) == ("acme holdings", "Acme Holdings", "alias")
            assert card["attributes"] == {"country": "US", "tier": 1} and card["declared"] is True
            expected = sorted(d["name"] for d in docs if mentions(d["text"], acme))
            assert card["documents"] == len(expected) > 0
            names = {n.lower().rstrip(".") for n in [acme["name"], *acme["aliases"]]}
            assert card["evidence"]
            for e in card["evidence"]:
                assert e["surface"].lower().rstrip(".") in names, e
            for r in card["related"]:
                assert r["shared_chunks"] >= 1 and -1 <= r["npmi"] <= 1 and r["evidence"]

            # The card as a resource, by a percent-encoded alias.
            resource = await c.read_resource("folio://entity/kb/Acme%20Corp.")
            body = json.loads(resource.contents[0].text)
            assert (body["entity"], body["documents"]) == ("acme holdings", card["documents"])
            with pytest.raises(MCPError):
                await c.read_resource("folio://entity/kb/Nonexistent%20Vendor%20Group")
            with pytest.raises(MCPError):
                await c.read_resource("folio://entity/kb/%ZZ")

            # Declared relations show on both ends.
            globex = await ok(c, "entity", {"library": "kb", "name": "Globex"})
            assert {"type": "account manager of", "direction": "incoming", "entity": "Jane Roe", "records": 0} in globex["relations"]

            # Lookups: most mentioned, by type, by prefix, by typo.
            top = await ok(c, "entities", {"library": "kb", "type": "organization", "limit": 10})
            counts = [e["mentions"] for e in top["entities"]]
            assert counts == sorted(counts, reverse=True)
            assert {e["type"] for e in top["entities"]} == {"organization"}
            prefix = await ok(c, "entities", {"library": "kb", "query": "umbr"})
            assert prefix["entities"][0]["entity"] == "umbrella supplies"
            assert prefix["entities"][0]["matched_by"] in ("alias", "prefix")
            typo = await ok(c, "entities", {"library": "kb", "query": "Initeck"})
            assert typo["entities"][0]["entity"] == "initech" and typo["entities"][0]["matched_by"] == "fuzzy"
            assert (await fails(c, "entity", {"library": "kb", "name": "Nonexistent Vendor Group"}))["error"]["code"] == "NOT_FOUND"

            # The search filter: only chunks that mention the entity.
            hits = await ok(c, "search", {"library": "kb", "query": "delivery schedules", "top_k": 50, "filter": {"entity": "ACME"}})
            assert hits["hits"]
            sources = {h["source"].rsplit("/", 1)[-1] for h in hits["hits"]}
            assert sources <= set(expected), sources - set(expected)

            # Bad lists change nothing: a name two entities share, a
            # relation without a target, an unknown field.
            shared = declared(VENDORS) + [{"name": "Acme", "type": "organization"}]
            refused = await fails(c, "declare_entities", {"library": "kb", "entities": shared})
            assert refused["error"]["code"] == "INVALID_ARGUMENT" and "acme" in refused["error"]["message"].lower()
            no_target = [{"name": "X Corp", "type": "organization", "relations": [{"type": "owns", "target": " "}]}]
            assert (await fails(c, "declare_entities", {"library": "kb", "entities": no_target}))["error"]["code"] == "INVALID_ARGUMENT"
            assert (await fails(c, "declare_entities", {"library": "kb", "entities": [{"name": "Y", "type": "x", "colour": 1}]}))["error"]["code"] == "INVALID_ARGUMENT"
            again = await ok(c, "entity", {"library": "kb", "name": "acme corp"})
            assert again["documents"] == card["documents"] and again["entity"] == "acme holdings"

        async with stdio(data, "--read-only") as c:
            names = [t.name for t in (await c.list_tools()).tools]
            assert "declare_entities" not in names and "entity" in names
            card = await ok(c, "entity", {"library": "kb", "name": "Globex GmbH"})
            assert card["entity"] == "globex"

    run(go())


def test_find_vendor_info_contract(data, tmp_path):
    config = write_config(tmp_path / "c.toml", '[serve]\nbmcis_library = "kb"\n')
    docs = corpus(seed=11, documents=30)
    shapes = BMCIS_SHAPES

    async def go():
        async with stdio(data, "--toolsets", "native,bmcis", config=config) as c:
            await ok(c, "declare_entities", {"library": "kb", "entities": declared(VENDORS)})
            for d in docs:
                await ok(c, "ingest", {"library": "kb", "content": d})
            for vendor in VENDORS[:4]:
                expected = sorted(d["name"] for d in docs if mentions(d["text"], vendor))
                out = await ok(c, "find_vendor_info", {"vendor_name": vendor["name"], "top_k": 50})
                assert set(out) == {"vendor", "results", "documents", "total_documents", "related_entities", "total_found", "strategy_used", "execution_time_ms"}
                assert out["vendor"]["vendor_name"] == vendor["name"] and out["vendor"]["entity_type"] == "organization"
                found = sorted(d["source_file"].rsplit("/", 1)[-1] for d in out["documents"])
                assert found == expected, vendor["name"]
                assert out["total_documents"] == len(expected)
                # Every passage returned mentions the vendor.
                for r in out["results"]:
                    assert set(r) == shapes["metadata"]
                    assert r["source_file"].rsplit("/", 1)[-1] in expected
            for mode, keys in shapes.items():
                out = await ok(c, "find_vendor_info", {"vendor_name": "Globex GmbH", "top_k": 2, "response_mode": mode})
                assert out["vendor"]["matched_by"] == "alias" and out["vendor"]["vendor_name"] == "Globex"
                assert 1 <= len(out["results"]) <= 2 and out["total_found"] == len(out["results"])
                for r in out["results"]:
                    assert set(r) == keys, mode
                    assert isinstance(r["chunk_id"], int)
                if mode == "ids_only":
                    assert out["documents"] == [] and out["related_entities"] == [] and "aliases" not in out["vendor"]
                else:
                    assert out["vendor"]["aliases"] == ["Globex GmbH"] and out["documents"]
                if mode == "full":
                    assert all("Globex" in r["chunk_text"] for r in out["results"])
            typo = await ok(c, "find_vendor_info", {"vendor_name": "Initeh"})
            assert typo["vendor"]["vendor_name"] == "Initech" and typo["vendor"]["matched_by"] == "fuzzy"
            # A person is not a vendor; an unknown name is not found.
            for name in ["Jane Roe", "Nonexistent Vendor Group"]:
                assert (await fails(c, "find_vendor_info", {"vendor_name": name}))["error"]["code"] == "NOT_FOUND"
            for bad in [{"vendor_name": ""}, {"vendor_name": "x" * 201}, {"vendor_name": "Globex", "top_k": 0}, {"vendor_name": "Globex", "response_mode": "all"}]:
                assert (await fails(c, "find_vendor_info", bad))["error"]["code"] == "INVALID_ARGUMENT"

    run(go())


def test_record_fields_are_entities_with_relations(data, tmp_path):
    """The speeches schema marks speaker (person) and party (organization)
    as entity fields, with the speaker a "member of" the party: each speech
    mentions both, and the cards state the membership both ways, counted
    against the records themselves."""
    from speeches import generate
    from test_hansard import load

    records = generate(60, seed=3, speaker_count=8)
    load(data, records, tmp_path)
    speaker = records[0]["speaker"]
    party = records[0]["party"]
    own = [r for r in records if r["speaker"] == speaker]
    members = collections.Counter(r["speaker"] for r in records if r["party"] == party)

    async def go():
        async with stdio(data) as c:
            card = await ok(c, "entity", {"library": "hansard", "name": speaker})
            assert (card["name"], card["type"]) == (speaker, "person")
            assert card["documents"] == len(own)
            stated = {(r["type"], r["direction"], r["entity"]): r["records"] for r in card["relations"]}
            assert stated == {("member of", "outgoing", party): len(own)}
            organisation = await ok(c, "entity", {"library": "hansard", "name": party})
            assert organisation["type"] == "organization"
            incoming = {r["entity"]: r["records"] for r in organisation["relations"] if r["direction"] == "incoming"}
            assert incoming == dict(members)
            people = await ok(c, "entities", {"library": "hansard", "type": "person", "limit": 200})
            assert {e["entity"] for e in people["entities"]} >= {speaker.lower().replace("'", "")}

    run(go())
