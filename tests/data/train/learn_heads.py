# The learn-heads lesson in PyTorch 1.13: the same model from the same seed, the same data, the
# same training, so the same loss curve (docs/learn-heads.md explains it line by line).
#
#   /usr/bin/python3 tests/data/train/learn_heads.py [seed] [steps] [lr]    prints the losses
#   /usr/bin/python3 tests/data/train/learn_heads.py --fixture              writes the test fixture
#
# The fixture, tests/data/train/learn_heads_losses.txt, holds the loss of every step at the
# lesson's defaults (seed 1, 300 steps, lr 0.01), one per line with 17 significant digits;
# tests/lessons/test_learn_heads.cpp holds attn's curve to it.
import math
import sys

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
    """n sequences of T + 1 letters ending in a stretch of L letters written twice; inputs and targets."""
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


def run(seed=1, steps=300, lr=0.01):
    torch.manual_seed(seed)
    model = TinyLm(vocab=V, context=T, d=D, heads=H, layers=LAYERS)
    # normal_ gives CPU-dependent last bits (an AVX2 path with approximate log/sin/cos); uniform_
    # does not, so the embeddings are redrawn from it with the variance of N(0, 1).
    nn.init.uniform_(model.tok.weight, -math.sqrt(3), math.sqrt(3))
    nn.init.uniform_(model.pos.weight, -math.sqrt(3), math.sqrt(3))
    model = model.double()  # drawn in float32, trained in float64
    held_out = make_batch(torch.Generator().manual_seed(seed + 2), 64)
    losses = train(model, torch.Generator().manual_seed(seed + 1), steps=steps, lr=lr)
    return model, held_out, losses


if __name__ == "__main__":
    torch.set_num_threads(1)
    if sys.argv[1:] == ["--fixture"]:
        _, _, losses = run()
        with open("tests/data/train/learn_heads_losses.txt", "w") as f:
            f.writelines("%.17g\n" % l for l in losses)
    else:
        args = sys.argv[1:]
        seed = int(args[0]) if args else 1
        steps = int(args[1]) if len(args) > 1 else 300
        lr = float(args[2]) if len(args) > 2 else 0.01
        model, (inputs, targets, lens), losses = run(seed, steps, lr)
        for step, loss in enumerate(losses, 1):
            print(step, "%.4f" % loss)
