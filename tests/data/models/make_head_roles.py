#!/usr/bin/python3
"""Head role scores and the logit lens of every checkpoint fixture, computed in PyTorch from the
fixture's own expected tensors, for tests/cli/test_model_heads.cpp to hold attn model against.

    /usr/bin/python3 tests/data/models/make_head_roles.py   # writes <case>/expected/roles_*.npy, lens_*.npy

The definitions are those of docs/model.md ("Head roles"), written here a second time, in torch,
from the docs rather than from attn's code:

    previous   mean over queries t = 1..T-1 of w[t, t-1]
    first      mean over queries t = 1..T-1 of w[t, 0]
    self       mean over queries t = 0..T-1 of w[t, t]
    entropy    mean over queries t = 0..T-1 of -sum_j w[t, j] log w[t, j]   (0 log 0 = 0)
    induction  mean over pairs (t, j + 1) of w[t, j + 1]: t's token occurs exactly once before t,
               at j, with j + 1 < t; NaN without a pair

Each (L, h) map is written as roles_<name>.npy (float32). The logit lens: every layer's output
hidden_<n> (the residual stream after layer n) through the final norm and the unembedding,
softmax over the vocabulary; written as lens_top_id, lens_top_p (the top token and its p),
lens_answer_p and lens_answer_rank (the p and the rank, 1 = first, of the token the last layer
ranks first at that position), each (L, T) float32. Before writing, the lens of the last layer is
checked against expected/logits.npy: it must give the same top tokens and probabilities within 1e-5.
"""
import json
import pathlib

import numpy as np
import torch

HERE = pathlib.Path(__file__).resolve().parent


def induction_pairs(ids):
    pairs = []
    for t in range(len(ids)):
        earlier = [k for k in range(t) if ids[k] == ids[t]]
        if len(earlier) == 1 and earlier[0] + 1 < t:
            pairs.append((t, earlier[0] + 1))
    return pairs


def roles(w, ids):
    """w: (h, T, T) float64 tensor -> dict of (h,) tensors."""
    h, T, _ = w.shape
    nan = torch.full((h,), float("nan"), dtype=torch.float64)
    t = torch.arange(1, T)
    out = {
        "previous_token": w[:, t, t - 1].mean(-1) if T > 1 else nan,
        "first_token": w[:, 1:, 0].mean(-1) if T > 1 else nan,
        "self": torch.diagonal(w, dim1=-2, dim2=-1).mean(-1),
        "entropy": -torch.where(w > 0, w * torch.log(torch.where(w > 0, w, torch.ones_like(w))), torch.zeros_like(w)).sum(-1).mean(-1),
    }
    pairs = induction_pairs(ids)
    if pairs:
        q = torch.tensor([p[0] for p in pairs])
        k = torch.tensor([p[1] for p in pairs])
        out["induction"] = w[:, q, k].mean(-1)
    return out


def weight(case_dir, *names):
    for n in names:
        p = case_dir / "weights" / (n + ".npy")
        if p.exists():
            return torch.from_numpy(np.load(p)).double()
    raise FileNotFoundError(names)


def main():
    cases = json.loads((HERE / "models.json").read_text())["cases"]
    for case in cases:
        d = HERE / case["case"]
        cfg = json.loads((d / "config.json").read_text())
        gpt2 = cfg["model_type"] == "gpt2"
        L = cfg["n_layer"] if gpt2 else cfg["num_hidden_layers"]
        ids = [int(i) for i in case["ids"]]
        maps = {}
        for n in range(L):
            w = torch.from_numpy(np.load(d / "expected" / f"attn_weights_{n}.npy")).double()[0]  # (h, T, T)
            for name, v in roles(w, ids).items():
                maps.setdefault(name, []).append(v)
        for name, rows in maps.items():
            np.save(d / "expected" / f"roles_{name}.npy", torch.stack(rows).float().numpy())
        # The logit lens.
        hidden = torch.stack([torch.from_numpy(np.load(d / "expected" / f"hidden_{n}.npy")).double()[0] for n in range(L)])  # (L, T, d)
        if gpt2:
            g, b = weight(d, "ln_f.weight", "transformer.ln_f.weight"), weight(d, "ln_f.bias", "transformer.ln_f.bias")
            normed = torch.nn.functional.layer_norm(hidden, (hidden.shape[-1],), g, b, cfg.get("layer_norm_epsilon", 1e-5))
            head = weight(d, "lm_head.weight", "wte.weight", "transformer.wte.weight")
        else:
            g = weight(d, "model.norm.weight")
            eps = cfg.get("rms_norm_eps", 1e-6)
            normed = hidden * torch.rsqrt(hidden.pow(2).mean(-1, keepdim=True) + eps) * g
            head = weight(d, "lm_head.weight", "model.embed_tokens.weight")
        p = torch.softmax(normed @ head.T, dim=-1)  # (L, T, V)
        top_p, top_id = p.max(-1)
        answer = top_id[-1]  # (T,) the last layer's top token at each position
        answer_p = p.gather(-1, answer.expand(L, -1).unsqueeze(-1)).squeeze(-1)
        answer_rank = (p > answer_p.unsqueeze(-1)).sum(-1) + 1
        model_p = torch.softmax(torch.from_numpy(np.load(d / "expected" / "logits.npy")).double()[0], -1)  # (T, V)
        assert torch.equal(model_p.argmax(-1), answer), case["case"]
        gap = (model_p.max(-1).values - top_p[-1]).abs().max().item()
        assert gap < 1e-5, (case["case"], gap)
        for name, v in {"top_id": top_id, "top_p": top_p, "answer_p": answer_p, "answer_rank": answer_rank}.items():
            np.save(d / "expected" / f"lens_{name}.npy", v.float().numpy())
        print(f"{case['case']}: {L} layers, {len(induction_pairs(ids))} induction pairs, last-layer lens vs logits {gap:.1e}")


if __name__ == "__main__":
    main()
