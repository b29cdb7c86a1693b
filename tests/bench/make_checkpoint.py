#!/usr/bin/python3
"""Writes a random checkpoint folder with a real model's exact config, for timing attn model.

    /usr/bin/python3 tests/bench/make_checkpoint.py llama-3.2-3b /tmp/llama-3.2-3b
    /usr/bin/python3 tests/bench/make_checkpoint.py llama-3.2-1b /tmp/llama-3.2-1b
    /usr/bin/python3 tests/bench/make_checkpoint.py gpt2 /tmp/gpt2

config.json as the Hub's (sizes, RoPE, dtype, tying), tensors named and shaped as Hugging Face
stores them, values random (normal, std 0.02, written in the stored dtype), split into shards of
at most --shard-gb GB with model.safetensors.index.json as save_pretrained writes them. Data is
written in chunks of a few MB, so a 6.4 GB checkpoint never sits in memory. Not for committing:
delete the folder when done (docs/checkpoints.md has the figures measured with it).
"""
import argparse
import json
import os
import struct

import numpy as np

LLAMA_3B = dict(hidden_size=3072, num_hidden_layers=28, num_attention_heads=24, num_key_value_heads=8, head_dim=128,
                intermediate_size=8192, vocab_size=128256)
LLAMA_1B = dict(hidden_size=2048, num_hidden_layers=16, num_attention_heads=32, num_key_value_heads=8, head_dim=64,
                intermediate_size=8192, vocab_size=128256)


def llama_config(sizes):
    return dict(architectures=["LlamaForCausalLM"], model_type="llama", hidden_act="silu", attention_bias=False,
                mlp_bias=False, max_position_embeddings=131072, rms_norm_eps=1e-05, rope_theta=500000.0,
                rope_scaling=dict(rope_type="llama3", factor=32.0, low_freq_factor=1.0, high_freq_factor=4.0,
                                  original_max_position_embeddings=8192),
                tie_word_embeddings=True, torch_dtype="bfloat16", bos_token_id=128000, eos_token_id=128001, **sizes)


def llama_tensors(c):
    d, ff, hd = c["hidden_size"], c["intermediate_size"], c["head_dim"]
    q, kv = c["num_attention_heads"] * hd, c["num_key_value_heads"] * hd
    yield "model.embed_tokens.weight", (c["vocab_size"], d)
    for l in range(c["num_hidden_layers"]):
        m = f"model.layers.{l}."
        yield m + "input_layernorm.weight", (d,)
        yield m + "self_attn.q_proj.weight", (q, d)
        yield m + "self_attn.k_proj.weight", (kv, d)
        yield m + "self_attn.v_proj.weight", (kv, d)
        yield m + "self_attn.o_proj.weight", (d, q)
        yield m + "post_attention_layernorm.weight", (d,)
        yield m + "mlp.gate_proj.weight", (ff, d)
        yield m + "mlp.up_proj.weight", (ff, d)
        yield m + "mlp.down_proj.weight", (d, ff)
    yield "model.norm.weight", (d,)


GPT2 = dict(architectures=["GPT2LMHeadModel"], model_type="gpt2", n_embd=768, n_layer=12, n_head=12, n_positions=1024,
            n_ctx=1024, n_inner=None, vocab_size=50257, layer_norm_epsilon=1e-05, activation_function="gelu_new",
            embd_pdrop=0.1, attn_pdrop=0.1, resid_pdrop=0.1, tie_word_embeddings=True, bos_token_id=50256,
            eos_token_id=50256)


def gpt2_tensors(c):
    d = c["n_embd"]
    yield "wte.weight", (c["vocab_size"], d)
    yield "wpe.weight", (c["n_positions"], d)
    for l in range(c["n_layer"]):
        h = f"h.{l}."
        for name, shape in [("ln_1.weight", (d,)), ("ln_1.bias", (d,)), ("attn.c_attn.weight", (d, 3 * d)),
                            ("attn.c_attn.bias", (3 * d,)), ("attn.c_proj.weight", (d, d)), ("attn.c_proj.bias", (d,)),
                            ("ln_2.weight", (d,)), ("ln_2.bias", (d,)), ("mlp.c_fc.weight", (d, 4 * d)),
                            ("mlp.c_fc.bias", (4 * d,)), ("mlp.c_proj.weight", (4 * d, d)), ("mlp.c_proj.bias", (d,))]:
            yield h + name, shape
    yield "ln_f.weight", (d,)
    yield "ln_f.bias", (d,)


MODELS = {
    "llama-3.2-3b": (llama_config(LLAMA_3B), llama_tensors, "BF16"),
    "llama-3.2-1b": (llama_config(LLAMA_1B), llama_tensors, "BF16"),
    "gpt2": (GPT2, gpt2_tensors, "F32"),
}


def random_chunk(rng, n, dtype):
    x = (rng.standard_normal(n, dtype=np.float32) * 0.02)
    if dtype == "F32":
        return x.astype("<f4").tobytes()
    return (x.view(np.uint32) >> 16).astype("<u2").tobytes()  # bf16: the high half (truncated)


def write_shard(path, tensors, dtype, rng):
    size = 2 if dtype == "BF16" else 4
    header, at = {"__metadata__": {"format": "pt"}}, 0
    for name, shape in tensors:
        n = int(np.prod(shape)) * size
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [at, at + n]}
        at += n
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)  # as the reference writer pads: data starts 8-aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for name, shape in tensors:
            left = int(np.prod(shape))
            while left:
                n = min(left, 1 << 22)  # 4 Mi values per write
                f.write(random_chunk(rng, n, dtype))
                left -= n
    return at


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model", choices=sorted(MODELS))
    p.add_argument("out")
    p.add_argument("--shard-gb", type=float, default=5.0)
    a = p.parse_args()
    config, tensors_of, dtype = MODELS[a.model]
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    size = 2 if dtype == "BF16" else 4
    shards, current, current_bytes = [], [], 0
    for name, shape in tensors_of(config):
        n = int(np.prod(shape)) * size
        if current and current_bytes + n > a.shard_gb * 1e9:
            shards.append(current)
            current, current_bytes = [], 0
        current.append((name, shape))
        current_bytes += n
    shards.append(current)
    rng = np.random.default_rng(0)
    if len(shards) == 1:
        total = write_shard(os.path.join(a.out, "model.safetensors"), shards[0], dtype, rng)
        print(f"{a.out}/model.safetensors: {total} bytes of tensors")
        return
    weight_map, total = {}, 0
    for i, shard in enumerate(shards):
        fname = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        total += write_shard(os.path.join(a.out, fname), shard, dtype, rng)
        weight_map.update({name: fname for name, _ in shard})
        print(f"{a.out}/{fname}: {len(shard)} tensors")
    with open(os.path.join(a.out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
    print(f"{a.out}: {len(shards)} shards, {total} bytes of tensors")


if __name__ == "__main__":
    main()
