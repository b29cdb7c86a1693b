# The learn-heads lesson's model, data and training in PyTorch 1.13 (docs/learn-heads.md explains
# it line by line). The lesson's "reproduce in PyTorch" block starts with
#   from learn_heads_torch import *
# and runs from this folder (cd docs) as printed; docs/learn-heads.md carries this file verbatim,
# then the run itself. tests/data/train/learn_heads.py is the same with the fixture writer.
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

V, T, D, H, LAYERS, B = 32, 24, 32, 2, 2, 32  # vocabulary, tokens read, width, heads, layers, batch


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.W_query = nn.Linear(d, d, bias=False)
        self.W_key = nn.Linear(d, d, bias=False)
        self.W_value = nn.Linear(d, d, bias=False)
        self.out_proj = nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        split = lambda y: y.view(b, t, self.heads, d // self.heads).transpose(1, 2)  # (b, h, t, d_k)
        q, k, v = split(self.W_query(x)), split(self.W_key(x)), split(self.W_value(x))
        scores = q @ k.transpose(2, 3) / math.sqrt(d // self.heads)
        future = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        weights = scores.masked_fill(future, -math.inf).softmax(dim=-1)  # (b, h, t, t)
        context = (weights @ v).transpose(1, 2).reshape(b, t, d)
        return x + self.out_proj(context), weights


class TinyLm(nn.Module):
    def __init__(self, vocab=32, context=24, d=32, heads=2, layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(context, d)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(layers)])
        self.unembed = nn.Linear(d, vocab, bias=False)

    def forward(self, ids):
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1]))
        weights = []
        for block in self.blocks:
            x, w = block(x)
            weights.append(w)
        return self.unembed(x), weights


def make_batch(g, n):
    ids = torch.randint(0, V, (n, T + 1), generator=g)
    lens = torch.randint(6, 12, (n,), generator=g).tolist()
    for i, L in enumerate(lens):
        ids[i, T + 1 - L:] = ids[i, T + 1 - 2 * L:T + 1 - L]
    targets = ids[:, 1:].clone()
    for i, L in enumerate(lens):
        targets[i, :T + 1 - L] = -100  # graded only on the second copy, after its first letter
    return ids[:, :T], targets, lens


def train(model, g, steps=300, lr=0.01):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        inputs, targets, _ = make_batch(g, B)
        logits, _ = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1))  # ignore_index=-100
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses
