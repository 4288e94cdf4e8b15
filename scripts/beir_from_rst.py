#!/usr/bin/env python3
"""Builds a BEIR corpus (corpus.jsonl) from a tree of reStructuredText
sources, one document per section: its heading is the title, its prose
paragraphs the text (directives, literal blocks, tables and doctest lines
left out). With `known_item_collection.py` it gives a second public
collection with long queries in another domain than SciFact's abstracts:

    apt-get install python3-doc
    python3 scripts/beir_from_rst.py /usr/share/doc/python3.11/html/_sources/library /tmp/pydoc-corpus
    python3 scripts/known_item_collection.py /tmp/pydoc-corpus /tmp/pydoc-ki
"""

import argparse
import json
import re
from pathlib import Path

UNDERLINE = re.compile(r"^([=\-~^*#+\"'`])\1{2,}\s*$")
MARKUP = re.compile(r":[a-z:]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`|``([^`]*)``|\*\*?([^*]+)\*\*?|`([^`<]*?)(?:\s*<[^>]*>)?`_*")


def plain(text):
    """Inline markup reduced to its words."""
    return MARKUP.sub(lambda m: next(g for g in m.groups() if g is not None), text)


def sections(lines):
    """(title, [paragraph]) per section of one file."""
    title, paragraphs, block, literal = None, [], [], False
    for i, line in enumerate(lines):
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and UNDERLINE.match(following) and len(following.strip()) >= len(line.strip()):
            if title is not None:
                yield title, paragraphs
            title, paragraphs, block, literal = plain(line.strip()), [], [], False
            continue
        if UNDERLINE.match(line):
            continue
        if not line.strip():
            if block:
                paragraphs.append(" ".join(block))
                literal = block[-1].endswith("::")
                block = []
            continue
        indented = line[:1] in (" ", "\t")
        if literal and indented:
            continue
        literal = False
        stripped = line.strip()
        if indented or stripped.startswith(("..", ">>>", "...", "+-", "|")) or stripped.startswith("==="):
            if block:
                paragraphs.append(" ".join(block))
                block = []
            continue
        block.append(plain(stripped))
    if block:
        paragraphs.append(" ".join(block))
    if title is not None:
        yield title, paragraphs


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", help="a folder of .rst or .rst.txt files")
    parser.add_argument("target", help="the BEIR folder to write (corpus.jsonl)")
    parser.add_argument("--min-words", type=int, default=40)
    args = parser.parse_args()
    documents = []
    for path in sorted(Path(args.source).rglob("*.rst*")):
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        for n, (title, paragraphs) in enumerate(sections(lines)):
            text = " ".join(p.rstrip(":") + ("" if p.endswith((".", "?", "!")) else ".") for p in paragraphs)
            if len(text.split()) >= args.min_words:
                # The path keeps ids unique: stems repeat across folders
                # (library/email.rst, whatsnew/3.5.rst and howto/email...).
                name = str(path.relative_to(args.source)).split(".rst")[0].replace("/", ".")
                documents.append({"_id": f"{name}-{n}", "title": title, "text": text})
    assert len({d["_id"] for d in documents}) == len(documents), "document ids repeat"
    target = Path(args.target)
    target.mkdir(parents=True, exist_ok=True)
    with open(target / "corpus.jsonl", "w") as f:
        for d in documents:
            f.write(json.dumps(d) + "\n")
    words = sum(len(d["text"].split()) for d in documents) / max(len(documents), 1)
    print(f"{len(documents)} documents (mean {words:.0f} words) in {target}")


if __name__ == "__main__":
    main()
