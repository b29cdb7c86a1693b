# How tests/data/presets/*.npy were made (by hand, once; the tests never run this). Each preset's
# article code, fixed where the article's own code fails, run in PyTorch 1.13 on CPU:
#
#   /usr/bin/python3 tests/data/presets/make_fixtures.py ../shared/articles
#
# llama__x.npy is attn's own input (attn lesson heads --preset llama --values --dump DIR,
# s01_x.npy): the article's Llama embeddings are not available, so attn's seeded word vectors
# stand in; every other tensor below is PyTorch's.
import math
import os
import re
import sys

import numpy as np
import torch
import torch.nn as nn

here = os.path.dirname(os.path.abspath(__file__))
articles = sys.argv[1]


def save(name, t):
    np.save(os.path.join(here, name + ".npy"), t.detach().numpy().astype(np.float32))


# Phillips: X as the article prints it (parsed from the article's text), then its
# MultiHeadAttention (Wq, Wk, Wv, Wo with bias, in that order) after torch.manual_seed(0), mask=None.
# Dropout(0.1) on attn_probs is switched off with .eval() so that the numbers are deterministic.
text = open(os.path.join(articles, "002_3e76572482d58af6.txt")).read()
start = text.index("X = pe(embeddings)\ntensor(")
block = text[start:text.index("grad_fn=<MulBackward0>", start)]
X = torch.tensor([float(v) for v in re.findall(r"-?\d+\.\d+", block)]).reshape(3, 6, 8)
save("phillips__X_article", X)


class PhillipsMHA(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads, self.d_key = n_heads, d_model // n_heads
        self.Wq = nn.Linear(d_model, d_model)
        self.Wk = nn.Linear(d_model, d_model)
        self.Wv = nn.Linear(d_model, d_model)
        self.Wo = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        b = key.size(0)
        Q = self.Wq(query).view(b, -1, self.n_heads, self.d_key).permute(0, 2, 1, 3)
        K = self.Wk(key).view(b, -1, self.n_heads, self.d_key).permute(0, 2, 1, 3)
        V = self.Wv(value).view(b, -1, self.n_heads, self.d_key).permute(0, 2, 1, 3)
        s = torch.matmul(Q, K.permute(0, 1, 3, 2)) / math.sqrt(self.d_key)
        if mask is not None:
            s = s.masked_fill(mask == 0, -1e10)
        p = torch.softmax(s, dim=-1)
        A = torch.matmul(p, V).permute(0, 2, 1, 3).contiguous().view(b, -1, self.n_heads * self.d_key)
        return self.Wo(A), p


torch.manual_seed(0)
mha = PhillipsMHA(8, 4).eval()
out, probs = mha(X, X, X, mask=None)
save("phillips__output", out)
save("phillips__attn_probs", probs)
out, probs = mha(X, X, X, mask=torch.tril(torch.ones(6, 6)))  # --causal: mask == 0 filled with -1e10
save("phillips_causal__attn_probs", probs)

# Rakesh: the article's code with .transpose(1, 2) added (its own code stops at masked_fill_), seed 123.
torch.manual_seed(123)
x = torch.tensor([[[0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [0.7, 0.8, 0.9, 0.10, 0.11, 0.12],
                   [0.13, 0.14, 0.15, 0.16, 0.17, 0.18]]])
batch, tokenid, d_in = x.shape
d_out, num_heads, head_dimn = 6, 2, 3
W_Query = torch.nn.Linear(d_in, d_out, bias=False)
W_Key = torch.nn.Linear(d_in, d_out, bias=False)
W_Value = torch.nn.Linear(d_in, d_out, bias=False)
keys = W_Key(x).view(batch, tokenid, num_heads, head_dimn)
query = W_Query(x).view(batch, tokenid, num_heads, head_dimn)
values = W_Value(x).view(batch, tokenid, num_heads, head_dimn)
wrong = query @ keys.transpose(2, 3)  # the article's line: (1, 3, 2, 2)
save("rakesh__att_score_article", wrong)
keys, query, values = keys.transpose(1, 2), query.transpose(1, 2), values.transpose(1, 2)  # the fix
att_score = query @ keys.transpose(2, 3)
mask = torch.triu(torch.ones(3, 3), diagonal=1).bool()
att_score.masked_fill_(mask, float("-inf"))
attn_weights = torch.softmax(att_score / keys.shape[-1] ** 0.5, dim=-1)
save("rakesh__attn_weights", attn_weights)
save("rakesh__context_vector", attn_weights @ values)

# Llama: the model's bias-free q/k/v/o projections (8 key/value heads, repeated for 3 query heads
# each), the walk-through's masked_fill(mask == 0, -1e9) on the scaled scores, combine_heads with
# its return. No rotary embedding (the walk-through's class has none).
torch.manual_seed(0)
q_proj = nn.Linear(3072, 3072, bias=False)
k_proj = nn.Linear(3072, 1024, bias=False)
v_proj = nn.Linear(3072, 1024, bias=False)
o_proj = nn.Linear(3072, 3072, bias=False)
xl = torch.from_numpy(np.load(os.path.join(here, "llama__x.npy")))
B, T, _ = xl.shape
Q = q_proj(xl).view(B, T, 24, 128).transpose(1, 2)
K = k_proj(xl).view(B, T, 8, 128).transpose(1, 2).repeat_interleave(3, dim=1)
V = v_proj(xl).view(B, T, 8, 128).transpose(1, 2).repeat_interleave(3, dim=1)
s = torch.matmul(Q, K.transpose(-2, -1)) / math.sqrt(128)
s = s.masked_fill(torch.tril(torch.ones(T, T)) == 0, -1e9)
p = torch.softmax(s, dim=-1)
ctx = torch.matmul(p, V).transpose(1, 2).contiguous().view(B, T, 3072)
save("llama__attn_weights", p)
save("llama__output", o_proj(ctx)[:, :, :16])  # the first 16 columns are enough to compare


# Evolution of Attention: the article's Attention class as printed (seed 0 in __init__, wk first,
# mask triu(attn_score)), on the book's six tokens with embedding_dim 3, attention_dim 2; then on
# the same tokens with the last embedding set to zeros, with the article's mask and with the fix.
class Attention(nn.Module):
    def __init__(self, embedding_dim, attention_dim, fixed=False):
        super().__init__()
        torch.manual_seed(0)
        self.wk = nn.Linear(embedding_dim, attention_dim, bias=False)
        self.wq = nn.Linear(embedding_dim, attention_dim, bias=False)
        self.wv = nn.Linear(embedding_dim, attention_dim, bias=False)
        self.fixed = fixed

    def forward(self, embedded):
        q, k, v = self.wq(embedded), self.wk(embedded), self.wv(embedded)
        attn_score = q @ torch.transpose(k, -2, -1) / (k.shape[-1] ** 0.5)
        if self.fixed:
            T = attn_score.shape[-1]
            mask = torch.triu(torch.ones(T, T), diagonal=1).bool()
            attn_score = attn_score.masked_fill(mask, float("-inf"))  # a (T, T) index would not fit (B, T, T)
        else:
            upper_triangular = torch.triu(attn_score, diagonal=1).bool()
            attn_score[upper_triangular] = float("-inf")
        self.weights = nn.functional.softmax(attn_score, dim=-1)
        return self.weights @ v


inputs = torch.tensor([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
                       [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]])
article = Attention(3, 2)
save("evolution__wk_weight", article.wk.weight)
save("evolution__wq_weight", article.wq.weight)
save("evolution__context", article(inputs.unsqueeze(0)))
padded = inputs.clone()
padded[-1] = 0.0
save("evolution__pad_context_article", article(padded.unsqueeze(0)))
save("evolution__pad_weights_article", article.weights)
fixed = Attention(3, 2, fixed=True)
save("evolution__pad_context_fixed", fixed(padded.unsqueeze(0)))
