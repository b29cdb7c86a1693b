#!/usr/bin/python3
"""More tiny random checkpoints in Hugging Face's layout, beside the four that make_expected.py
copies, with the float32 forward pass of hf_forward.py (this folder; PyTorch, written from
Hugging Face's modeling_gpt2 / modeling_llama / modeling_qwen2) in expected/.

    /usr/bin/python3 tests/data/models/make_more_models.py --check   # validate the forward pass
    /usr/bin/python3 tests/data/models/make_more_models.py           # write the new cases

--check runs hf_forward.py on the four copied cases (their safetensors read by hf_forward's numpy
reader, their expected/ids.npy) and prints the largest absolute difference of every expected
tensor from the committed expected/*.npy (the shared reference's pass); it fails above 1e-5. It
also checks that the numpy reader gives weights/*.npy bit for bit.

Without --check it writes, for each case of CASES: config.json as save_pretrained writes it
(every key, sorted, indent 2), model.safetensors or shards with model.safetensors.index.json
(tensors sorted by name in each file and 8-byte padded headers, as the safetensors library writes
them), weights/<name>.npy (every stored tensor upcast to float32: what attn's readers must give),
expected/<name>.npy (ids as float32; embeddings; q_L, k_L, v_L, attn_weights_L, attn_out_L,
hidden_L; final_hidden; logits: the same layout as the copied cases, see README.md), and then
models.json listing every case in this folder. The expected tensors are computed from the stored
values (bf16 rounded to nearest even), reread from the files just written.

Measured when the cases were written (PyTorch 1.13, this script):
- validation against the four copied cases: largest difference 5.7e-6 (hidden_1 of
  llama3_tiny_bf16, values up to 15.7), logits within 2.4e-6, attention weights within 6.3e-7
  (the table per case is in README.md); the numpy reader gives weights/*.npy bit for bit;
- llama3_rope_scaled: its attention weights with the llama3 rope_scaling versus the same weights
  and ids with plain RoPE (theta 500000) differ by up to 0.28 (layer 0) and 0.18 (layer 1), logits
  by 1.9: far above the 1e-5 tolerance, so an implementation that ignores rope_scaling (or gets
  it wrong) fails this case. (For llama3_tiny_bf16, original_max_position_embeddings 8192 and
  T = 9, the same comparison gives 4.7e-3.)
"""
import json
import os
import struct
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hf_forward  # noqa: E402

COPIED = ["gpt2_tiny", "llama3_tiny_bf16", "llama_tiny_f16_sharded", "qwen2_tiny"]
TRANSFORMERS = "4.46.3"  # the version written into config.json, as save_pretrained does
BYTES = {"F32": 4, "F16": 2, "BF16": 2}
TORCH_DTYPE = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}


# ------------------------------------------------------------------ configs as save_pretrained writes them

def gpt2_config(n_layer, n_head, n_embd, n_positions, vocab_size, dtype):
    return {"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
            "bos_token_id": vocab_size - 1, "embd_pdrop": 0.1, "eos_token_id": vocab_size - 1,
            "initializer_range": 0.02, "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_embd": n_embd,
            "n_head": n_head, "n_inner": None, "n_layer": n_layer, "n_positions": n_positions,
            "reorder_and_upcast_attn": False, "resid_pdrop": 0.1, "scale_attn_by_inverse_layer_idx": False,
            "scale_attn_weights": True, "summary_activation": None, "summary_first_dropout": 0.1,
            "summary_proj_to_labels": True, "summary_type": "cls_index", "summary_use_proj": True,
            "torch_dtype": TORCH_DTYPE[dtype], "transformers_version": TRANSFORMERS, "use_cache": True,
            "vocab_size": vocab_size}


def llama_config(dtype, **kw):
    c = {"architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0, "bos_token_id": 1,
         "eos_token_id": 2, "hidden_act": "silu", "initializer_range": 0.02, "max_position_embeddings": 2048,
         "mlp_bias": False, "model_type": "llama", "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": None,
         "rope_theta": 10000.0, "tie_word_embeddings": False, "torch_dtype": TORCH_DTYPE[dtype],
         "transformers_version": TRANSFORMERS, "use_cache": True}
    c.update(kw)
    return c


def qwen2_config(dtype, **kw):
    c = {"architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 1, "eos_token_id": 2,
         "hidden_act": "silu", "initializer_range": 0.02, "max_position_embeddings": 32768, "model_type": "qwen2",
         "rms_norm_eps": 1e-06, "rope_scaling": None, "rope_theta": 1000000.0, "sliding_window": 32768,
         "tie_word_embeddings": False, "torch_dtype": TORCH_DTYPE[dtype], "transformers_version": TRANSFORMERS,
         "use_cache": True, "use_sliding_window": False}
    c.update(kw)
    c.setdefault("max_window_layers", c["num_hidden_layers"])
    return c


CASES = [
    # a) one token: T = 1, every attention row is [1]; head_dim 16 given while hidden / heads = 8
    dict(case="llama_one_token_f32", seed=21, dtype="F32", shards=1, ids=[37],
         config=llama_config("F32", hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                             head_dim=16, intermediate_size=64, vocab_size=64, tie_word_embeddings=True)),
    # b) exactly at the context limit: n_positions 16, T = 16 (every wpe row used)
    dict(case="gpt2_context_limit", seed=22, dtype="F32", shards=1,
         ids=[3, 60, 12, 12, 41, 7, 0, 63, 25, 3, 60, 12, 50, 9, 33, 18],
         config=gpt2_config(n_layer=2, n_head=3, n_embd=24, n_positions=16, vocab_size=64, dtype="F32")),
    # c) llama3 rope_scaling that matters: original_max_position_embeddings 8, T = 24
    dict(case="llama3_rope_scaled", seed=23, dtype="BF16", shards=1,
         ids=[1, 17, 4, 29, 33, 8, 45, 12, 17, 4, 29, 50, 2, 61, 5, 38, 17, 4, 29, 7, 22, 44, 10, 59],
         config=llama_config("BF16", hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=1,
                             head_dim=8, intermediate_size=64, vocab_size=64, max_position_embeddings=64,
                             rope_theta=500000.0, tie_word_embeddings=True, bos_token_id=1, eos_token_id=2,
                             rope_scaling={"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                                           "original_max_position_embeddings": 8, "rope_type": "llama3"})),
    # d) three shards with an index, F32, Qwen2 with its own lm_head
    dict(case="qwen2_three_shards", seed=24, dtype="F32", shards=3, ids=[70, 3, 15, 15, 42, 8, 66, 1, 29, 54, 3, 11],
         config=qwen2_config("F32", hidden_size=32, num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
                             intermediate_size=48, vocab_size=72, tie_word_embeddings=False)),
]


# ------------------------------------------------------------------ random weights, in model order

def gpt2_tensors(c):
    d, P, V = c["n_embd"], c["n_positions"], c["vocab_size"]
    ff = c["n_inner"] or 4 * d
    yield "wte.weight", (V, d), "w"
    yield "wpe.weight", (P, d), "w"
    for i in range(c["n_layer"]):
        p = f"h.{i}."
        yield from [(p + "ln_1.weight", (d,), "norm"), (p + "ln_1.bias", (d,), "b"),
                    (p + "attn.c_attn.weight", (d, 3 * d), "w"), (p + "attn.c_attn.bias", (3 * d,), "b"),
                    (p + "attn.c_proj.weight", (d, d), "w"), (p + "attn.c_proj.bias", (d,), "b"),
                    (p + "ln_2.weight", (d,), "norm"), (p + "ln_2.bias", (d,), "b"),
                    (p + "mlp.c_fc.weight", (d, ff), "w"), (p + "mlp.c_fc.bias", (ff,), "b"),
                    (p + "mlp.c_proj.weight", (ff, d), "w"), (p + "mlp.c_proj.bias", (d,), "b")]
    yield "ln_f.weight", (d,), "norm"
    yield "ln_f.bias", (d,), "b"


def llama_tensors(c):
    d, h, hk, ff, V = (c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["intermediate_size"],
                       c["vocab_size"])
    hd = c.get("head_dim") or d // h
    qwen = c["model_type"] == "qwen2"
    yield "model.embed_tokens.weight", (V, d), "w"
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        yield p + "input_layernorm.weight", (d,), "norm"
        yield p + "self_attn.q_proj.weight", (h * hd, d), "w"
        if qwen:
            yield p + "self_attn.q_proj.bias", (h * hd,), "b"
        yield p + "self_attn.k_proj.weight", (hk * hd, d), "w"
        if qwen:
            yield p + "self_attn.k_proj.bias", (hk * hd,), "b"
        yield p + "self_attn.v_proj.weight", (hk * hd, d), "w"
        if qwen:
            yield p + "self_attn.v_proj.bias", (hk * hd,), "b"
        yield p + "self_attn.o_proj.weight", (d, h * hd), "w"
        yield p + "post_attention_layernorm.weight", (d,), "norm"
        yield p + "mlp.gate_proj.weight", (ff, d), "w"
        yield p + "mlp.up_proj.weight", (ff, d), "w"
        yield p + "mlp.down_proj.weight", (d, ff), "w"
    yield "model.norm.weight", (d,), "norm"
    if not c["tie_word_embeddings"]:
        yield "lm_head.weight", (V, d), "w"


def random_weights(c, seed):
    rng = np.random.default_rng(seed)
    out = []
    for name, shape, kind in (gpt2_tensors(c) if c["model_type"] == "gpt2" else llama_tensors(c)):
        x = rng.standard_normal(shape, dtype=np.float32)
        if kind == "norm":
            x = 1.0 + 0.2 * x
        elif kind == "b":
            x = 0.2 * x
        else:  # scaled so that a unit-variance input gives outputs of variance about 0.5
            x = x * np.float32(0.7 / np.sqrt(shape[-1] if c["model_type"] != "gpt2" else shape[0]))
            if name.endswith(("embed_tokens.weight", "wte.weight", "wpe.weight")):
                x = x * np.float32(np.sqrt(shape[-1]) / 0.7 * 0.5)
        out.append((name, x.astype(np.float32)))
    return out


# ------------------------------------------------------------------ writing safetensors

def stored_bytes(x, dtype):
    if dtype == "F32":
        return x.astype("<f4").tobytes()
    if dtype == "F16":
        return x.astype("<f2").tobytes()
    bits = x.view(np.uint32).astype(np.uint64)  # bf16: round to nearest, ties to even (as torch's .to(bfloat16))
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return bits.astype("<u2").tobytes()


def write_safetensors(path, tensors, dtype):
    """tensors: list of (name, float32 array). Sorted by name, as the safetensors library writes a
    file whose tensors share one dtype; header padded with spaces to a multiple of 8."""
    tensors = sorted(tensors)
    header, blobs, at = {"__metadata__": {"format": "pt"}}, [], 0
    for name, x in tensors:
        raw = stored_bytes(x, dtype)
        header[name] = {"dtype": dtype, "shape": list(x.shape), "data_offsets": [at, at + len(raw)]}
        blobs.append(raw)
        at += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
    return at


def write_checkpoint(d, named, dtype, shards):
    for f in os.listdir(d):
        if f.endswith(".safetensors") or f == "model.safetensors.index.json":
            os.remove(os.path.join(d, f))
    if shards == 1:
        write_safetensors(os.path.join(d, "model.safetensors"), named, dtype)
        return
    # split in model order into `shards` parts of about equal bytes, as save_pretrained's max_shard_size does
    total = sum(x.size for _, x in named) * BYTES[dtype]
    parts, at = [[] for _ in range(shards)], 0
    for name, x in named:
        parts[min(shards - 1, at * shards // total)].append((name, x))
        at += x.size * BYTES[dtype]
    weight_map, size = {}, 0
    for i, part in enumerate(parts):
        fname = f"model-{i + 1:05d}-of-{shards:05d}.safetensors"
        size += write_safetensors(os.path.join(d, fname), part, dtype)
        weight_map.update({name: fname for name, _ in part})
    with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
        f.write(json.dumps({"metadata": {"total_size": size}, "weight_map": weight_map}, indent=2, sort_keys=True) + "\n")


# ------------------------------------------------------------------ cases

def run(d, ids, scaled_rope=True):
    config, weights = hf_forward.load_checkpoint(d)
    got = {"ids": torch.tensor(ids, dtype=torch.float32)}
    hf_forward.forward(config, weights, ids, lambda n, t: got.__setitem__(n, t.detach().clone()), scaled_rope)
    return config, weights, {n: t.numpy().astype(np.float32) for n, t in got.items()}


def check():
    worst = 0.0
    for case in COPIED:
        d = os.path.join(HERE, case)
        ids = [int(i) for i in np.load(os.path.join(d, "expected", "ids.npy"))]
        _, weights, got = run(d, ids)
        for n, t in weights.items():
            want = np.load(os.path.join(d, "weights", n + ".npy"))
            assert want.tobytes() == t.numpy().tobytes(), f"{case}: {n}: the numpy reader differs from weights/"
        names = sorted(f[:-4] for f in os.listdir(os.path.join(d, "expected")) if f.endswith(".npy"))
        assert names == sorted(got), f"{case}: names {names} vs {sorted(got)}"
        print(f"{case}: T={len(ids)}, {len(weights)} weights equal weights/*.npy bit for bit; max |ours - expected|:")
        diffs = []
        for n in names:
            want = np.load(os.path.join(d, "expected", n + ".npy"))
            assert want.shape == got[n].shape, f"{case}: {n}: shape {got[n].shape} vs {want.shape}"
            diff = float(np.max(np.abs(want - got[n])))
            diffs.append(f"{n} {diff:.1e}")
            worst = max(worst, diff)
        print("  " + ", ".join(diffs))
    print(f"largest difference over all cases and tensors: {worst:.2e}")
    if worst > 1e-5:
        raise SystemExit("FAILED: above 1e-5")


def write_case(c):
    d = os.path.join(HERE, c["case"])
    for sub in ("weights", "expected"):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
        for f in os.listdir(os.path.join(d, sub)):
            os.remove(os.path.join(d, sub, f))
    with open(os.path.join(d, "config.json"), "w") as f:
        f.write(json.dumps(c["config"], indent=2, sort_keys=True) + "\n")
    write_checkpoint(d, random_weights(c["config"], c["seed"]), c["dtype"], c["shards"])
    config, weights, got = run(d, c["ids"])
    for n, t in weights.items():
        np.save(os.path.join(d, "weights", n + ".npy"), np.ascontiguousarray(t.numpy(), dtype=np.float32))
    for n, a in got.items():
        np.save(os.path.join(d, "expected", n + ".npy"), np.ascontiguousarray(a, dtype=np.float32))
    size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(d) for f in fs)
    print(f"{c['case']}: {len(weights)} tensors, {len(got)} expected, T={len(c['ids'])}, {size:,} bytes on disk")
    if config.get("rope_scaling"):
        _, _, plain = run(d, c["ids"], scaled_rope=False)
        for n in sorted(k for k in got if k.startswith("attn_weights_")) + ["logits"]:
            print(f"  {n}: llama3 scaling vs plain RoPE, max |difference| {np.max(np.abs(got[n] - plain[n])):.3g}")


def listing():
    """models.json: every case in this folder (the copied ones and these)."""
    made = {c["case"]: c for c in CASES}
    cases = []
    for case in sorted(os.listdir(HERE)):
        d = os.path.join(HERE, case)
        if not os.path.exists(os.path.join(d, "expected", "ids.npy")):
            continue
        with open(os.path.join(d, "config.json")) as f:
            config = json.load(f)
        files = hf_forward.checkpoint_files(d)
        dtypes = sorted({t["dtype"] for fn in files for t in hf_forward.safetensors_header(os.path.join(d, fn))[1].values()})
        names = sorted(f[:-4] for f in os.listdir(os.path.join(d, "expected")) if f.endswith(".npy"))
        cases.append({"case": case, "architecture": config["model_type"], "dtype": "+".join(dtypes),
                      "shards": len(files) if os.path.exists(os.path.join(d, "model.safetensors.index.json")) else 1,
                      "ids": [int(i) for i in np.load(os.path.join(d, "expected", "ids.npy"))],
                      "made_by": "make_more_models.py" if case in made else "make_expected.py (copied)",
                      "expected": [{"name": n, "shape": list(np.load(os.path.join(d, "expected", n + ".npy")).shape)}
                                   for n in names]})
    with open(os.path.join(HERE, "models.json"), "w") as f:
        json.dump({"generator": "make_expected.py and make_more_models.py, PyTorch " + torch.__version__.split("a")[0],
                   "cases": cases}, f, indent=1)
        f.write("\n")
    print(f"models.json: {len(cases)} cases")


def main():
    torch.set_num_threads(1)
    if "--check" in sys.argv:
        check()
        return
    for c in CASES:
        write_case(c)
    listing()


if __name__ == "__main__":
    main()
