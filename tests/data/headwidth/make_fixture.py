"""Fixtures for heads that are not d_in wide together (num_heads * head_dim != hidden_size).

Run with PyTorch 1.13 on CPU from this directory: /usr/bin/python3 make_fixture.py
Writes float32 .npy files, in C order:

  x.npy                    (1, 5, 12)  torch.manual_seed(8); torch.rand(1, 5, 12)
  gqa/W_query.npy ...      the grouped-query layer of `attn lesson gqa --input x.npy --heads 4
                           --kv-heads 2 --d-k 6 --seed 9` (and of kv-cache): torch.manual_seed(9), then
                           nn.Linear(12, 24), nn.Linear(12, 12) twice, nn.Linear(24, 12), all
                           bias=False, saved as PyTorch keeps them, (out, in)
  gqa_expected/*.npy       its forward pass, causal: q_heads (1, 4, 5, 6), k_heads and v_heads
                           (1, 2, 5, 6), k_repeated (1, 4, 5, 6), attn_weights (1, 4, 5, 5),
                           context (1, 5, 24), output (1, 5, 12); output_incremental (1, 5, 12),
                           cache_k and cache_v (1, 2, 5, 6): the same layer decoded one token at
                           a time with a KV cache (torch.cat per step)
  heads/W_query.npy ...    the multi-head layer of `attn lesson heads --input x.npy --d-out 24
                           --heads 4 --out-proj-width 12 --seed 123`: torch.manual_seed(123),
                           then nn.Linear(12, 24, bias=False) three times and nn.Linear(24, 12)
                           (with its bias, as the book's out_proj), (out, in); out_proj_bias (12,)
  heads_expected/*.npy     its forward pass, causal, Raschka's order (mask with -inf, then
                           divide by sqrt(d_k)): q_heads (1, 4, 5, 6), attn_weights (1, 4, 5, 5),
                           context_vec (1, 5, 24), output (1, 5, 12)

The issue's case is the heads/ and gqa/ folders read as --weights DIR --weights-layout torch:
W_query (24, 12), out_proj (12, 24).
"""
import os

import numpy as np
import torch
import torch.nn as nn

B, T, D_IN, H, D_K = 1, 5, 12, 4, 6
H_KV = 2


def save(path, t):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    np.save(path, t.detach().numpy().astype(np.float32))


def gqa():
    torch.manual_seed(9)
    W_query = nn.Linear(D_IN, H * D_K, bias=False)
    W_key = nn.Linear(D_IN, H_KV * D_K, bias=False)
    W_value = nn.Linear(D_IN, H_KV * D_K, bias=False)
    out_proj = nn.Linear(H * D_K, D_IN, bias=False)
    for name, layer in [("W_query", W_query), ("W_key", W_key), ("W_value", W_value), ("out_proj", out_proj)]:
        save(f"gqa/{name}.npy", layer.weight)

    def forward(x):
        b, t, _ = x.shape
        q = W_query(x).view(b, t, H, D_K).transpose(1, 2)
        k = W_key(x).view(b, t, H_KV, D_K).transpose(1, 2)
        v = W_value(x).view(b, t, H_KV, D_K).transpose(1, 2)
        return q, k, v

    def attend(q, k, v, causal):
        k_rep = k.repeat_interleave(H // H_KV, dim=1)
        v_rep = v.repeat_interleave(H // H_KV, dim=1)
        scores = q @ k_rep.transpose(2, 3)
        if causal:
            t = q.shape[2]
            mask = torch.triu(torch.ones(t, t), diagonal=1).bool()
            scores = scores.masked_fill(mask, float("-inf"))
        w = torch.softmax(scores / D_K ** 0.5, dim=-1)
        return k_rep, w, w @ v_rep

    with torch.no_grad():
        q, k, v = forward(x)
        k_rep, w, ctx = attend(q, k, v, True)
        context = ctx.transpose(1, 2).reshape(B, T, H * D_K)
        output = out_proj(context)
        cache_k = torch.zeros(B, H_KV, 0, D_K)
        cache_v = torch.zeros(B, H_KV, 0, D_K)
        rows = []
        for t in range(T):
            q_t, k_t, v_t = forward(x[:, t:t + 1])
            cache_k = torch.cat([cache_k, k_t], dim=2)
            cache_v = torch.cat([cache_v, v_t], dim=2)
            _, _, c_t = attend(q_t, cache_k, cache_v, False)
            rows.append(out_proj(c_t.transpose(1, 2).reshape(B, 1, H * D_K)))
        incremental = torch.cat(rows, dim=1)
    for name, t in [("q_heads", q), ("k_heads", k), ("v_heads", v), ("k_repeated", k_rep), ("attn_weights", w),
                    ("context", context), ("output", output), ("output_incremental", incremental),
                    ("cache_k", cache_k), ("cache_v", cache_v)]:
        save(f"gqa_expected/{name}.npy", t)
    print("gqa: output", tuple(output.shape), "max |incremental - output|", (incremental - output).abs().max().item())


def heads():
    d_out = H * D_K
    torch.manual_seed(123)
    W_query = nn.Linear(D_IN, d_out, bias=False)
    W_key = nn.Linear(D_IN, d_out, bias=False)
    W_value = nn.Linear(D_IN, d_out, bias=False)
    out_proj = nn.Linear(d_out, D_IN)  # d_out -> d_in, not the book's (d_out, d_out)
    for name, layer in [("W_query", W_query), ("W_key", W_key), ("W_value", W_value), ("out_proj", out_proj)]:
        save(f"heads/{name}.npy", layer.weight)
    save("heads/out_proj_bias.npy", out_proj.bias)
    with torch.no_grad():
        q = W_query(x).view(B, T, H, D_K).transpose(1, 2)
        k = W_key(x).view(B, T, H, D_K).transpose(1, 2)
        v = W_value(x).view(B, T, H, D_K).transpose(1, 2)
        scores = q @ k.transpose(2, 3)
        mask = torch.triu(torch.ones(T, T), diagonal=1).bool()
        scores.masked_fill_(mask, -torch.inf)
        w = torch.softmax(scores / D_K ** 0.5, dim=-1)
        context_vec = (w @ v).transpose(1, 2).contiguous().view(B, T, d_out)
        output = out_proj(context_vec)
    for name, t in [("q_heads", q), ("attn_weights", w), ("context_vec", context_vec), ("output", output)]:
        save(f"heads_expected/{name}.npy", t)
    print("heads: output", tuple(output.shape))


torch.manual_seed(8)
x = torch.rand(B, T, D_IN)
save("x.npy", x)
gqa()
heads()
