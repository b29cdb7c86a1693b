# Makes the align fixture: the first training steps of `attn lesson align` (seed 2014, lr 0.01)
# run by the PyTorch script of docs/align.md (docs/align_torch.py, imported as it is), with
# /usr/bin/python3 and PyTorch 1.13 on CPU. tests/lessons/test_align.cpp holds attn to it.
#   /usr/bin/python3 tests/data/align/make_fixture.py
# writes, beside this file, float32 .npy files:
#   params_init.npy   (P,)   parameters_to_vector(model.parameters()) before training
#   alpha_init.npy    (T, S) the untrained alignment of training sentence 1 (teacher forcing)
#   logits_init.npy   (T, V) its logits
#   grad_step1.npy    (P,)   every parameter's gradient of the first batch's loss
#   losses.npy        (5,)   the batch loss of steps 1..5, each before its update
#   params_step5.npy  (P,)   the parameters after 5 Adam steps
import importlib.util
import os

import numpy as np
import torch

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("align_torch", os.path.join(here, "../../../docs/align_torch.py"))
A = importlib.util.module_from_spec(spec)
spec.loader.exec_module(A)

torch.manual_seed(2014)
held_out, train = A.make_data(64, 1024)
model = A.Align(len(A.SRC), len(A.TGT), d_e=16, d_h=16, d_a=16)
opt = torch.optim.Adam(model.parameters(), lr=0.01)
vec = lambda ts: torch.nn.utils.parameters_to_vector(ts).detach().numpy().astype(np.float32)
save = lambda name, a: np.save(os.path.join(here, name), np.asarray(a, dtype=np.float32))

save("params_init.npy", vec(model.parameters()))
src, tgt, _ = train[0]
with torch.no_grad():
    logits, alpha = model(src, A.decoder_inputs(tgt))
save("alpha_init.npy", alpha.numpy())
save("logits_init.npy", logits.numpy())
losses = []
for t in range(5):
    batch = [train[(16 * t + k) % len(train)] for k in range(16)]
    loss = A.batch_loss(model, batch)
    opt.zero_grad()
    loss.backward()
    if t == 0:
        save("grad_step1.npy", vec(p.grad for p in model.parameters()))
    opt.step()
    losses.append(loss.item())
save("losses.npy", losses)
save("params_step5.npy", vec(model.parameters()))
print("losses", losses)
