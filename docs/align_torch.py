# The run of `attn lesson align` in PyTorch 1.13: the same task drawn from the same seed, the same
# model built in the same order, the same batches and Adam. Usage:
#   python3 docs/align_torch.py [--seed 2014] [--steps 300] [--lr 0.01] [--src "the black cat sees a dog"]
# It prints the loss at the lesson's snapshot steps, the held-out measures and the alignment of the
# followed sentence, which agree with attn's within the tolerance docs/align.md states.
import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

DET = "the a this my your his".split()
ADJ = "red black green white blue grey".split()
NOUN = "cat dog bird horse fish wolf".split()
VERB = "sees likes follows eats finds hears".split()
SRC = DET + ADJ + NOUN + VERB
TGT = ("le un ce mon ton son rouge noir vert blanc bleu gris "
       "chat chien oiseau cheval poisson loup voit aime suit mange trouve entend").split()
START = len(TGT)  # "<s>", the decoder's first input


def translate(src):
    """Word for word, each adjective that stands before a noun moved after it. Returns the target
    ids and, for each target word, the source position it came from."""
    origin, j = [], 0
    while j < len(src):
        if SRC[src[j]] in ADJ and j + 1 < len(src) and SRC[src[j + 1]] in NOUN:
            origin += [j + 1, j]
            j += 2
        else:
            origin.append(j)
            j += 1
    return [src[j] for j in origin], origin


def draw_sentence():
    u = torch.rand(9).tolist()  # Python floats: floor(u * 6) is exact
    pick = lambda x, words: SRC.index(words[int(x * len(words))])
    def noun_phrase(v):
        ids = [pick(v[0], DET)]
        if v[1] < 0.5:
            ids.append(pick(v[2], ADJ))
        return ids + [pick(v[3], NOUN)]
    src = noun_phrase(u[0:4]) + [pick(u[4], VERB)] + noun_phrase(u[5:9])
    return (src,) + tuple(translate(src))


def make_data(n_held_out, n_train):
    held_out, seen = [], set()
    while len(held_out) < n_held_out:
        s = draw_sentence()
        if tuple(s[0]) not in seen:
            seen.add(tuple(s[0]))
            held_out.append(s)
    train = []
    while len(train) < n_train:
        s = draw_sentence()
        if tuple(s[0]) not in seen:
            train.append(s)
    return held_out, train


class Align(nn.Module):
    def __init__(self, v_src, v_out, d_e, d_h, d_a):
        super().__init__()
        self.src_emb = nn.Embedding(v_src, d_e)
        self.tgt_emb = nn.Embedding(v_out + 1, d_e)  # + <s>
        self.enc_fwd = nn.RNNCell(d_e, d_h)
        self.enc_bwd = nn.RNNCell(d_e, d_h)
        self.W_s = nn.Linear(d_h, d_h)
        self.W_a = nn.Linear(d_h, d_a, bias=False)
        self.U_a = nn.Linear(2 * d_h, d_a, bias=False)
        self.v_a = nn.Linear(d_a, 1, bias=False)
        self.decoder = nn.RNNCell(d_e + 2 * d_h, d_h)
        self.out = nn.Linear(3 * d_h, v_out)

    def forward(self, src, tgt_in):
        x = self.src_emb(torch.tensor(src))                      # (S, d_e)
        h, fwd = torch.zeros(self.enc_fwd.hidden_size), []
        for j in range(len(src)):
            h = self.enc_fwd(x[j], h); fwd.append(h)
        h, bwd = torch.zeros(self.enc_bwd.hidden_size), [None] * len(src)
        for j in reversed(range(len(src))):
            h = self.enc_bwd(x[j], h); bwd[j] = h
        H = torch.cat([torch.stack(fwd), torch.stack(bwd)], dim=1)  # (S, 2 d_h)
        UH = self.U_a(H)                                            # (S, d_a), once per sentence
        s = torch.tanh(self.W_s(bwd[0]))                            # s_0
        y = self.tgt_emb(torch.tensor(tgt_in))                      # (T, d_e)
        logits, alphas = [], []
        for i in range(len(tgt_in)):
            e = self.v_a(torch.tanh(self.W_a(s) + UH)).squeeze(-1)  # (S,)
            alpha = torch.softmax(e, dim=-1)
            c = alpha @ H                                           # (2 d_h,)
            s = self.decoder(torch.cat([y[i], c]), s)
            logits.append(self.out(torch.cat([s, c])))
            alphas.append(alpha)
        return torch.stack(logits), torch.stack(alphas)             # (T, V_out), (T, S)


def decoder_inputs(tgt):
    return [START] + tgt[:-1]


def evaluate(model, sentences):
    words = right = aligned = 0
    with torch.no_grad():
        for src, tgt, origin in sentences:
            logits, alpha = model(src, decoder_inputs(tgt))
            right += (logits.argmax(-1) == torch.tensor(tgt)).sum().item()
            aligned += (alpha.argmax(-1) == torch.tensor(origin)).sum().item()
            words += len(tgt)
    return right / words, aligned / words


def batch_loss(model, batch):
    logits = torch.cat([model(src, decoder_inputs(tgt))[0] for src, tgt, _ in batch])
    return F.cross_entropy(logits, torch.tensor([w for _, tgt, _ in batch for w in tgt]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=2014)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--src", default=None)
    args = ap.parse_args()
    torch.set_printoptions(precision=4)

    torch.manual_seed(args.seed)
    held_out, train = make_data(64, 1024)              # the data first, then the model
    model = Align(len(SRC), len(TGT), d_e=16, d_h=16, d_a=16)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    if args.src:
        src = [SRC.index(w) for w in args.src.lower().split()]
        shown = (src,) + tuple(translate(src))
    else:                                              # the held-out sentence with the most swaps
        swaps = lambda s: sum(o != i for i, o in enumerate(s[2]))
        shown = max(held_out, key=swaps)               # max keeps the first of equals, as attn does
    print("sentence:", " ".join(SRC[w] for w in shown[0]), "->", " ".join(TGT[w] for w in shown[1]))

    snapshots = {int(f * args.steps + 0.5) for f in (0.0, 0.1, 0.25, 0.5, 1.0)}  # halves round up, as in attn
    print("step 0: held-out accuracy %.3f, aligned %.3f" % evaluate(model, held_out))
    for t in range(args.steps):
        batch = [train[(16 * t + k) % len(train)] for k in range(16)]
        loss = batch_loss(model, batch)
        if not math.isfinite(loss.item()):
            raise SystemExit("the loss is %s at step %d: try a smaller --lr" % (loss.item(), t + 1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if t + 1 in snapshots:
            print("step %d: batch loss %.4f, held-out accuracy %.3f, aligned %.3f"
                  % ((t + 1, loss.item()) + evaluate(model, held_out)))
    with torch.no_grad():
        _, alpha = model(shown[0], decoder_inputs(shown[1]))
    print("alignment after step %d =" % args.steps)
    print(alpha)


if __name__ == "__main__":
    main()
