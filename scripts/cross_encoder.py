"""Cross-encoders for folio's reranker tests and cost measurements.

  cross_encoder.py make OUT --tokenizer MODEL_DIR [--body MODEL_DIR]
        [--layers N --hidden H --heads A --seed S]
      Writes a BertForSequenceClassification folder in Hugging Face layout
      (config.json, tokenizer.json, model.safetensors) and its model.onnx
      (export_onnx.py). Weights are random (seeded), or, with --body, the
      encoder of an existing BERT-family model under a random head: the
      compute of a real cross-encoder of that shape, not its judgement.

  cross_encoder.py score MODEL_DIR < pairs.json
      Reads [{"ids": [...], "types": [...]}, ...] (token ids and token type
      ids of query-passage pairs) and prints their logits, computed in numpy
      from model.safetensors: a forward pass independent of ONNX Runtime.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys

import numpy as np
from safetensors.numpy import load_file, save_file

HERE = os.path.dirname(os.path.abspath(__file__))


def make(args):
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    shutil.copy(os.path.join(args.tokenizer, "tokenizer.json"), os.path.join(args.out, "tokenizer.json"))
    vocab = json.load(open(os.path.join(args.tokenizer, "config.json")))["vocab_size"]
    if args.body:
        cfg = json.load(open(os.path.join(args.body, "config.json")))
        weights = dict(load_file(os.path.join(args.body, "model.safetensors")))
        hidden = cfg["hidden_size"]
    else:
        hidden = args.hidden
        cfg = {
            "model_type": "bert", "vocab_size": vocab, "hidden_size": hidden,
            "num_hidden_layers": args.layers, "num_attention_heads": args.heads,
            "intermediate_size": 4 * hidden, "max_position_embeddings": 512,
            "type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_act": "gelu",
        }
        weights = {}

        def normal(*shape):
            return rng.normal(0.0, 0.3, shape).astype(np.float32)

        def linear(name, n_out, n_in):
            weights[name + ".weight"] = normal(n_out, n_in)
            weights[name + ".bias"] = normal(n_out)

        def norm(name):
            weights[name + ".weight"] = (1.0 + 0.1 * normal(hidden)).astype(np.float32)
            weights[name + ".bias"] = normal(hidden)

        weights["embeddings.word_embeddings.weight"] = normal(vocab, hidden)
        weights["embeddings.position_embeddings.weight"] = normal(512, hidden)
        weights["embeddings.token_type_embeddings.weight"] = normal(2, hidden)
        norm("embeddings.LayerNorm")
        for i in range(args.layers):
            p = f"encoder.layer.{i}"
            for part in ("query", "key", "value"):
                linear(f"{p}.attention.self.{part}", hidden, hidden)
            linear(f"{p}.attention.output.dense", hidden, hidden)
            norm(f"{p}.attention.output.LayerNorm")
            linear(f"{p}.intermediate.dense", 4 * hidden, hidden)
            linear(f"{p}.output.dense", hidden, 4 * hidden)
            norm(f"{p}.output.LayerNorm")
    weights = {"bert." + k: v for k, v in weights.items()}
    weights["bert.pooler.dense.weight"] = rng.normal(0.0, 0.3, (hidden, hidden)).astype(np.float32)
    weights["bert.pooler.dense.bias"] = rng.normal(0.0, 0.3, hidden).astype(np.float32)
    weights["classifier.weight"] = rng.normal(0.0, 1.0, (1, hidden)).astype(np.float32)
    weights["classifier.bias"] = np.zeros(1, np.float32)
    cfg["architectures"] = ["BertForSequenceClassification"]
    cfg["num_labels"] = 1
    json.dump(cfg, open(os.path.join(args.out, "config.json"), "w"), indent=1)
    save_file(weights, os.path.join(args.out, "model.safetensors"))
    subprocess.run([sys.executable, os.path.join(HERE, "export_onnx.py"), args.out,
                    os.path.join(args.out, "model.onnx")], check=True)


def layer_norm(x, w, b, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def logits(model_dir, ids, types):
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    w = {k[5:] if k.startswith("bert.") else k: v.astype(np.float64)
         for k, v in load_file(os.path.join(model_dir, "model.safetensors")).items()}
    eps = cfg.get("layer_norm_eps", 1e-12)
    heads = cfg["num_attention_heads"]
    ids, types = np.array(ids), np.array(types)
    x = w["embeddings.word_embeddings.weight"][ids] \
        + w["embeddings.position_embeddings.weight"][: len(ids)] \
        + w["embeddings.token_type_embeddings.weight"][types]
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    erf = np.vectorize(math.erf)

    def lin(v, name):
        return v @ w[name + ".weight"].T + w[name + ".bias"]

    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        n, d = x.shape
        split = lambda t: t.reshape(n, heads, d // heads).transpose(1, 0, 2)
        q, k, v = (split(lin(x, f"{p}.attention.self.{part}")) for part in ("query", "key", "value"))
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(d // heads)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        ctx = (scores / scores.sum(-1, keepdims=True)) @ v
        ctx = ctx.transpose(1, 0, 2).reshape(n, d)
        x = layer_norm(lin(ctx, f"{p}.attention.output.dense") + x,
                       w[f"{p}.attention.output.LayerNorm.weight"], w[f"{p}.attention.output.LayerNorm.bias"], eps)
        h = lin(x, f"{p}.intermediate.dense")
        h = 0.5 * h * (1.0 + erf(h / math.sqrt(2.0)))
        x = layer_norm(lin(h, f"{p}.output.dense") + x,
                       w[f"{p}.output.LayerNorm.weight"], w[f"{p}.output.LayerNorm.bias"], eps)
    pooled = np.tanh(lin(x[0], "pooler.dense"))
    return lin(pooled, "classifier").tolist()


def score(args):
    pairs = json.load(sys.stdin)
    json.dump([logits(args.model, p["ids"], p["types"]) for p in pairs], sys.stdout)


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make")
    m.add_argument("out")
    m.add_argument("--tokenizer", required=True)
    m.add_argument("--body")
    m.add_argument("--layers", type=int, default=2)
    m.add_argument("--hidden", type=int, default=32)
    m.add_argument("--heads", type=int, default=4)
    m.add_argument("--seed", type=int, default=7)
    s = sub.add_parser("score")
    s.add_argument("model")
    args = parser.parse_args()
    make(args) if args.command == "make" else score(args)


if __name__ == "__main__":
    main()
