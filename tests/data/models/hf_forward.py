"""A float32 forward pass of GPT-2, Llama and Qwen2 checkpoints in plain PyTorch, written from
Hugging Face's modeling_gpt2 / modeling_llama / modeling_qwen2 (transformers 4.4x, eager
attention), and a safetensors reader in numpy. Shared by make_more_models.py (the fixtures'
expected tensors) and tests/bench/model_torch.py (the PyTorch side of the model benchmark).

What it follows, operation by operation:
- GPT-2: token + learned position embeddings; LayerNorm (layer_norm_epsilon); Conv1D weights
  stored (in, out), y = b + x @ W (torch.addmm, as Conv1D does); c_attn split into q, k, v in
  that order; scores / sqrt(head_dim) (scale_attn_weights); the causal mask by torch.where with
  finfo(float32).min; softmax in float32; gelu_new (the tanh approximation); lm_head tied to wte
  (or lm_head.weight when stored).
- Llama / Qwen2: RMSNorm in float32, w * (x * rsqrt(mean(x^2) + eps)); Linear (out, in), with
  biases on q, k, v for Qwen2 (and where attention_bias / mlp_bias say so for Llama); RoPE in
  the rotate-half layout, inv_freq = 1 / theta^(arange(0, hd, 2) / hd) in float32, optionally
  rescaled by rope_scaling of type llama3, cos/sin of positions x inv_freq; grouped-query
  attention, query head i reads kv head i // (h / h_kv); scores * head_dim^-0.5, plus the causal
  mask (finfo(float32).min), softmax in float32; MLP down(silu(gate(x)) * up(x)); tied or untied
  lm_head.

No dropout (eval mode), batch 1, positions 0..T-1, no padding.
"""
import json
import math
import os
import struct

import numpy as np
import torch
import torch.nn.functional as F

MIN = torch.finfo(torch.float32).min


# ------------------------------------------------------------------ reading safetensors (numpy)

def safetensors_header(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    return 8 + n, {k: v for k, v in header.items() if k != "__metadata__"}


def to_f32(raw, dtype, shape):
    """Stored bytes (a uint8 numpy array) -> a new float32 numpy array. BF16: the 16 bits shifted
    into the high half of a float32 (exact); F16: numpy's float16 -> float32 (exact); F32 as
    stored."""
    if dtype == "F32":
        a = raw.view("<f4").astype(np.float32)
    elif dtype == "F16":
        a = raw.view("<f2").astype(np.float32)
    elif dtype == "BF16":
        a = np.left_shift(raw.view("<u2"), np.uint32(16), dtype=np.uint32).view(np.float32)
    else:
        raise ValueError(f"unsupported dtype {dtype}")
    return a.reshape(shape)


def read_safetensors(path):
    """Yields (name, float32 numpy array) for every tensor of one file, one tensor at a time (F32
    read straight into its array; F16 and BF16 into a buffer of the stored bytes, freed once
    converted), so that a big model's memory is its float32 weights plus one stored tensor."""
    start, header = safetensors_header(path)
    with open(path, "rb") as f:
        for name, t in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
            b, e = t["data_offsets"]
            n = e - b
            f.seek(start + b)
            if t["dtype"] == "F32":
                a = np.empty(n // 4, dtype=np.float32)
                got = f.readinto(memoryview(a.view(np.uint8)))
                a = a.reshape(t["shape"])
            else:
                raw = np.empty(n, dtype=np.uint8)
                got = f.readinto(memoryview(raw))
                a = to_f32(raw, t["dtype"], t["shape"])
                del raw
            if got != n:
                raise ValueError(f"{path}: {name} runs past the end")
            yield name, a


def checkpoint_files(d):
    index = os.path.join(d, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            return sorted(set(json.load(f)["weight_map"].values()))
    return ["model.safetensors"]


def load_checkpoint(d):
    """config dict and {name: float32 torch tensor}. GPT-2's `transformer.` prefix is dropped and
    its h.N.attn.bias / masked_bias buffers (causal masks, not weights) skipped."""
    with open(os.path.join(d, "config.json")) as f:
        config = json.load(f)
    weights = {}
    for fname in checkpoint_files(d):
        for name, a in read_safetensors(os.path.join(d, fname)):
            if config["model_type"] == "gpt2":
                if name.startswith("transformer."):
                    name = name[len("transformer."):]
                if name.endswith((".attn.bias", ".attn.masked_bias")):
                    continue
            weights[name] = torch.from_numpy(a)
    return config, weights


# ------------------------------------------------------------------ GPT-2

def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def conv1d(x, w, b):
    """Hugging Face's Conv1D: weight (in, out), y = b + x @ w."""
    return torch.addmm(b, x.reshape(-1, x.shape[-1]), w).view(*x.shape[:-1], w.shape[1])


def causal(T):
    return torch.tril(torch.ones(T, T, dtype=torch.bool)).view(1, 1, T, T)


def gpt2_forward(c, w, ids, record):
    d, h, L = c["n_embd"], c["n_head"], c["n_layer"]
    hd = d // h
    eps = c.get("layer_norm_epsilon", 1e-5)
    T = len(ids)
    if T > c["n_positions"]:
        raise ValueError(f"{T} tokens, n_positions {c['n_positions']}")
    ln = lambda x, p: F.layer_norm(x, (d,), w[p + ".weight"], w[p + ".bias"], eps)
    x = (w["wte.weight"][ids] + w["wpe.weight"][torch.arange(T)]).unsqueeze(0)
    record("embeddings", x)
    mask = causal(T)
    for i in range(L):
        p = f"h.{i}."
        qkv = conv1d(ln(x, p + "ln_1"), w[p + "attn.c_attn.weight"], w[p + "attn.c_attn.bias"])
        q, k, v = (t.view(1, T, h, hd).permute(0, 2, 1, 3) for t in qkv.split(d, dim=2))
        s = torch.matmul(q, k.transpose(-1, -2)) / torch.full([], hd ** 0.5, dtype=torch.float32)
        s = torch.where(mask, s, torch.full([], MIN, dtype=torch.float32))
        a = torch.softmax(s, dim=-1)
        ctx = torch.matmul(a, v).permute(0, 2, 1, 3).reshape(1, T, d)
        ao = conv1d(ctx, w[p + "attn.c_proj.weight"], w[p + "attn.c_proj.bias"])
        x = x + ao
        m = gelu_new(conv1d(ln(x, p + "ln_2"), w[p + "mlp.c_fc.weight"], w[p + "mlp.c_fc.bias"]))
        x = x + conv1d(m, w[p + "mlp.c_proj.weight"], w[p + "mlp.c_proj.bias"])
        for n, t in (("q", q), ("k", k), ("v", v), ("attn_weights", a), ("attn_out", ao), ("hidden", x)):
            record(f"{n}_{i}", t)
    x = ln(x, "ln_f")
    record("final_hidden", x)
    head = w["wte.weight"] if c.get("tie_word_embeddings", True) else w["lm_head.weight"]
    logits = F.linear(x, head)
    record("logits", logits)
    return logits


# ------------------------------------------------------------------ Llama / Qwen2

def rope_config(c):
    """(theta, scaling dict or None) from transformers 4.x (rope_theta, rope_scaling) or 5
    (rope_parameters)."""
    params = c.get("rope_parameters")
    if params:
        theta = params.get("rope_theta", c.get("rope_theta", 10000.0))
        scaling = params
    else:
        theta = c.get("rope_theta", 10000.0)
        scaling = c.get("rope_scaling")
    if scaling:
        kind = scaling.get("rope_type", scaling.get("type", "default"))
        if kind == "default":
            scaling = None
        elif kind != "llama3":
            raise ValueError(f"rope type {kind} not implemented")
    return float(theta), scaling


def inv_freq(c, hd, scaled=True):
    theta, scaling = rope_config(c)
    inv = 1.0 / (theta ** (torch.arange(0, hd, 2, dtype=torch.int64).float() / hd))
    if scaling and scaled:
        factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
        old = scaling["original_max_position_embeddings"]
        wavelen = 2 * math.pi / inv
        out = torch.where(wavelen > old / low, inv / factor, inv)            # low frequencies / factor
        s = (old / wavelen - low) / (high - low)
        smoothed = (1 - s) * out / factor + s * out
        medium = ~(wavelen < old / high) * ~(wavelen > old / low)
        inv = torch.where(medium, smoothed, out)
    return inv


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rms_norm(x, weight, eps):
    x32 = x.to(torch.float32)
    return weight * (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps))


def linear(x, w, p):
    return F.linear(x, w[p + ".weight"], w.get(p + ".bias"))


def llama_forward(c, w, ids, record, scaled_rope=True):
    d, L, h = c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"]
    hk = c.get("num_key_value_heads") or h
    hd = c.get("head_dim") or d // h
    eps = c["rms_norm_eps"]
    T = len(ids)
    inv = inv_freq(c, hd, scaled_rope)
    # as LlamaRotaryEmbedding: (hd/2, 1) @ (1, T) in float32, then transposed
    freqs = (inv[:, None] @ torch.arange(T, dtype=torch.int64).float()[None, :]).transpose(0, 1)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[None, None], emb.sin()[None, None]              # (1, 1, T, hd)
    mask = torch.triu(torch.full((T, T), MIN, dtype=torch.float32), diagonal=1).view(1, 1, T, T)
    group = h // hk
    x = w["model.embed_tokens.weight"][ids].unsqueeze(0)
    record("embeddings", x)
    for i in range(L):
        p = f"model.layers.{i}."
        a = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        q = linear(a, w, p + "self_attn.q_proj").view(1, T, h, hd).transpose(1, 2)
        k = linear(a, w, p + "self_attn.k_proj").view(1, T, hk, hd).transpose(1, 2)
        v = linear(a, w, p + "self_attn.v_proj").view(1, T, hk, hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        # repeat_kv: (1, hk, T, hd) -> (1, h, T, hd), query head j reads kv head j // group
        kr = k[:, :, None].expand(1, hk, group, T, hd).reshape(1, h, T, hd)
        vr = v[:, :, None].expand(1, hk, group, T, hd).reshape(1, h, T, hd)
        s = torch.matmul(q, kr.transpose(2, 3)) * hd ** -0.5 + mask
        att = torch.softmax(s, dim=-1, dtype=torch.float32)
        ctx = torch.matmul(att, vr).transpose(1, 2).reshape(1, T, h * hd)
        ao = linear(ctx, w, p + "self_attn.o_proj")
        x = x + ao
        m = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        m = linear(F.silu(linear(m, w, p + "mlp.gate_proj")) * linear(m, w, p + "mlp.up_proj"), w, p + "mlp.down_proj")
        x = x + m
        for n, t in (("q", q), ("k", k), ("v", v), ("attn_weights", att), ("attn_out", ao), ("hidden", x)):
            record(f"{n}_{i}", t)
    x = rms_norm(x, w["model.norm.weight"], eps)
    record("final_hidden", x)
    head = w["model.embed_tokens.weight"] if c.get("tie_word_embeddings", False) else w["lm_head.weight"]
    logits = F.linear(x, head)
    record("logits", logits)
    return logits


def forward(config, weights, ids, record=lambda name, t: None, scaled_rope=True):
    """Runs the model over ids (a list of ints); calls record(name, tensor) for every expected
    tensor (names as in expected/); returns the logits (1, T, V)."""
    ids = torch.tensor(ids, dtype=torch.int64)
    with torch.no_grad():
        if config["model_type"] == "gpt2":
            return gpt2_forward(config, weights, ids, record)
        if config["model_type"] in ("llama", "qwen2"):
            return llama_forward(config, weights, ids, record, scaled_rope)
        raise ValueError(f"model_type {config['model_type']} not implemented")
