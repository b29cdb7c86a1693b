#!/usr/bin/python3
"""Copies the tiny checkpoints of ../shared/reference/models into tests/data/models and writes,
for every tensor, the float32 values attn must produce: weights/<tensor name>.npy; and the float32
forward pass the reference made of each (expected/<name>.npy: embeddings, q_L, k_L, v_L,
attn_weights_L, attn_out_L, hidden_L, final_hidden, logits; ids as float32, which the project's
.npy reader takes).

The conversion here is independent of attn's: F16 through numpy's float16 -> float32, BF16 through
torch's bfloat16 -> float32, F32 as stored. The safetensors files are parsed with json and
struct (the format is a length, a JSON header and raw bytes). Run once, commit the output:
    /usr/bin/python3 tests/data/models/make_expected.py /work/shared/reference/models
"""
import json
import os
import shutil
import struct
import sys

import numpy as np
import torch

CASES = ["gpt2_tiny", "llama3_tiny_bf16", "llama_tiny_f16_sharded", "qwen2_tiny"]
HERE = os.path.dirname(os.path.abspath(__file__))


def tensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    for name, t in header.items():
        if name == "__metadata__":
            continue
        b, e = t["data_offsets"]
        raw = body[b:e]
        shape = t["shape"]
        if t["dtype"] == "F32":
            values = np.frombuffer(raw, dtype="<f4").reshape(shape)
        elif t["dtype"] == "F16":
            values = np.frombuffer(raw, dtype="<f2").astype(np.float32).reshape(shape)
        elif t["dtype"] == "BF16":
            bits = torch.frombuffer(bytearray(raw), dtype=torch.int16)
            values = bits.view(torch.bfloat16).to(torch.float32).numpy().reshape(shape)
        else:
            raise SystemExit(f"{path}: {name}: unexpected dtype {t['dtype']}")
        yield name, values


def main(source):
    for case in CASES:
        src, dst = os.path.join(source, case), os.path.join(HERE, case)
        os.makedirs(os.path.join(dst, "weights"), exist_ok=True)
        files = [f for f in sorted(os.listdir(src)) if f.endswith((".json", ".safetensors"))]
        for f in files:
            shutil.copyfile(os.path.join(src, f), os.path.join(dst, f))
        count = 0
        for f in files:
            if f.endswith(".safetensors"):
                for name, values in tensors(os.path.join(src, f)):
                    np.save(os.path.join(dst, "weights", name + ".npy"), np.ascontiguousarray(values, dtype=np.float32))
                    count += 1
        os.makedirs(os.path.join(dst, "expected"), exist_ok=True)
        expected = sorted(f for f in os.listdir(os.path.join(src, "expected")) if f.endswith(".npy"))
        for f in expected:
            a = np.load(os.path.join(src, "expected", f))
            np.save(os.path.join(dst, "expected", f), np.ascontiguousarray(a, dtype=np.float32))
        print(f"{case}: {len(files)} files, {count} tensors, {len(expected)} expected")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/work/shared/reference/models")
