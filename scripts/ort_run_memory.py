#!/usr/bin/env python3
"""Resident memory one ONNX Runtime run adds, by batch shape: a session over
GRAPH (2 intra-op threads, memory pattern off, as folio runs it), then two
runs of BATCH sequences of TOKENS random ids; prints how far the process's
peak resident memory rose over the loaded session. Run each shape in a fresh
process (the arena keeps what a run took).

    PY=~/.local/share/folio/setup-venv/bin/python
    for s in "16 256" "4 256"; do $PY scripts/ort_run_memory.py $s ~/.local/share/folio/models/all-MiniLM-L6-v2/model_int8.onnx; done
"""
import sys

import numpy as np
import onnxruntime as ort


def peak_mb():
    with open("/proc/self/status") as f:
        return int(f.read().split("VmHWM:")[1].split()[0]) // 1024


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    batch, tokens, graph = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    options.enable_mem_pattern = False
    session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
    base = peak_mb()
    ids = np.random.default_rng(1).integers(1000, 20000, size=(batch, tokens), dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    for _ in range(2):
        session.run(None, feed)
    print(f"batch {batch:3} x {tokens:3} tokens: +{peak_mb() - base} MB")


if __name__ == "__main__":
    main()
