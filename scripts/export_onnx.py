"""Exports a BERT-family encoder in Hugging Face layout to ONNX, straight from
model.safetensors and config.json, without torch.

The graph takes input_ids, attention_mask and token_type_ids (int64 [batch, seq])
and returns last_hidden_state (float32 [batch, seq, hidden]) — the same interface
as the hub's onnx/model.onnx, so folio's ONNX Runtime embedder treats both alike.
Pooling and normalisation stay in folio, so one code path serves every model.

A cross-encoder (BertForSequenceClassification: a pooler and a classifier over
the [CLS] state) returns logits (float32 [batch, labels]) instead, as the hub's
exports of such models do; folio's reranker reads them.

With --int8 the graph is quantised dynamically (ONNX Runtime's quantiser):
each linear layer's weights become signed 8-bit with one scale per output
column (one scale per matrix lost 0.019 nDCG@10 on SciFact; this loses less), and
its activations are quantised per batch at run time (MatMulInteger), which
ONNX Runtime runs on VNNI or AVX2 integer kernels. Attention products,
embeddings and layer norms stay fp32. folio runs this graph, written as
`model_int8.onnx`, with `[model] precision = "int8"`; only this quantiser's
graph, because another's gives other vectors. Needs the onnxruntime package.

usage: export_onnx.py [--int8] MODEL_DIR OUT.onnx
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load_file


class Graph:
    def __init__(self, weights):
        self.weights = weights
        self.initializers = []
        self.nodes = []
        self.counter = 0

    def const(self, name, array):
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def weight(self, key, transpose=False):
        array = self.weights[key]
        return self.const(key + (".T" if transpose else ""), array.T if transpose else array)

    def op(self, kind, inputs, **attrs):
        self.counter += 1
        out = f"{kind.lower()}_{self.counter}"
        self.nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def linear(self, x, prefix):
        y = self.op("MatMul", [x, self.weight(prefix + ".weight", transpose=True)])
        return self.op("Add", [y, self.weight(prefix + ".bias")])

    def layer_norm(self, x, prefix, eps):
        return self.op("LayerNormalization",
                       [x, self.weight(prefix + ".weight"), self.weight(prefix + ".bias")],
                       axis=-1, epsilon=eps)


def strip_prefix(weights):
    # Some checkpoints prefix the encoder's tensors with "bert." or "model."
    # (a classification head's "classifier.*" stays unprefixed).
    for prefix in ("bert.", "model."):
        if any(k.startswith(prefix + "embeddings") for k in weights):
            return {k[len(prefix):] if k.startswith(prefix) else k: v for k, v in weights.items()}
    return weights


def is_classifier(cfg, weights):
    return any(a.endswith("ForSequenceClassification") for a in cfg.get("architectures") or []) \
        and "classifier.weight" in weights


def export(model_dir, out_path):
    cfg = json.load(open(f"{model_dir}/config.json"))
    weights = strip_prefix(load_file(f"{model_dir}/model.safetensors"))
    hidden = cfg["hidden_size"]
    heads = cfg["num_attention_heads"]
    head_dim = hidden // heads
    eps = cfg.get("layer_norm_eps", 1e-12)
    g = Graph(weights)

    seq_len = g.op("Shape", ["input_ids"], start=1, end=2)
    positions = g.op("Slice", [g.weight("embeddings.position_embeddings.weight"),
                               g.const("zero", np.array([0], np.int64)), seq_len,
                               g.const("axis0", np.array([0], np.int64))])
    x = g.op("Gather", [g.weight("embeddings.word_embeddings.weight"), "input_ids"])
    x = g.op("Add", [x, positions])
    x = g.op("Add", [x, g.op("Gather", [g.weight("embeddings.token_type_embeddings.weight"), "token_type_ids"])])
    x = g.layer_norm(x, "embeddings.LayerNorm", eps)

    # Additive attention mask [batch, 1, 1, seq]: 0 where attended, -1e9 on padding.
    one = g.const("one", np.array(1.0, np.float32))
    mask = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    mask = g.op("Unsqueeze", [mask, g.const("axes12", np.array([1, 2], np.int64))])
    mask = g.op("Mul", [g.op("Sub", [one, mask]), g.const("neg", np.array(-1e9, np.float32))])

    split_heads = g.const("split_heads", np.array([0, 0, heads, head_dim], np.int64))
    merge_heads = g.const("merge_heads", np.array([0, 0, hidden], np.int64))
    scale = g.const("scale", np.array(1.0 / np.sqrt(head_dim), np.float32))
    half = g.const("half", np.array(0.5, np.float32))
    sqrt2 = g.const("sqrt2", np.array(np.sqrt(2.0), np.float32))
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}"
        q = g.op("Transpose", [g.op("Reshape", [g.linear(x, f"{p}.attention.self.query"), split_heads])], perm=[0, 2, 1, 3])
        k = g.op("Transpose", [g.op("Reshape", [g.linear(x, f"{p}.attention.self.key"), split_heads])], perm=[0, 2, 3, 1])
        v = g.op("Transpose", [g.op("Reshape", [g.linear(x, f"{p}.attention.self.value"), split_heads])], perm=[0, 2, 1, 3])
        scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), scale]), mask])
        ctx = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), v])
        ctx = g.op("Reshape", [g.op("Transpose", [ctx], perm=[0, 2, 1, 3]), merge_heads])
        x = g.layer_norm(g.op("Add", [g.linear(ctx, f"{p}.attention.output.dense"), x]),
                         f"{p}.attention.output.LayerNorm", eps)
        h = g.linear(x, f"{p}.intermediate.dense")
        # Exact GELU, as BERT uses: 0.5 * h * (1 + erf(h / sqrt 2)).
        gelu = g.op("Mul", [g.op("Mul", [h, half]), g.op("Add", [g.op("Erf", [g.op("Div", [h, sqrt2])]), one])])
        x = g.layer_norm(g.op("Add", [g.linear(gelu, f"{p}.output.dense"), x]), f"{p}.output.LayerNorm", eps)
    dims = ["batch", "seq"]
    if is_classifier(cfg, weights):
        # The pooler (dense + tanh over the [CLS] state), then the classifier.
        cls = g.op("Gather", [x, g.const("first", np.array([0], np.int64))], axis=1)
        cls = g.op("Squeeze", [cls, g.const("axis1", np.array([1], np.int64))])
        pooled = g.op("Tanh", [g.linear(cls, "pooler.dense")])
        g.nodes.append(helper.make_node("Identity", [g.linear(pooled, "classifier")], ["logits"]))
        labels = weights["classifier.weight"].shape[0]
        output = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", labels])
    else:
        g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
        output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, dims + [hidden])

    graph = helper.make_graph(
        g.nodes, "bert",
        [helper.make_tensor_value_info(n, TensorProto.INT64, dims)
         for n in ("input_ids", "attention_mask", "token_type_ids")],
        [output],
        g.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out_path)


def quantize(fp32_path, out_path):
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    # It advises a pre-processing pass that only matters for static quantisation.
    logging.getLogger().setLevel(logging.ERROR)
    quantize_dynamic(fp32_path, out_path, weight_type=QuantType.QInt8, per_channel=True,
                     op_types_to_quantize=["MatMul"])


if __name__ == "__main__":
    args = sys.argv[1:]
    int8 = "--int8" in args
    args = [a for a in args if a != "--int8"]
    if len(args) != 2:
        sys.exit("usage: export_onnx.py [--int8] MODEL_DIR OUT.onnx")
    model_dir, out = args
    if not int8:
        export(model_dir, out)
    else:
        fp32 = out + ".fp32"
        try:
            export(model_dir, fp32)
            quantize(fp32, out)
        finally:
            if os.path.exists(fp32):
                os.remove(fp32)
