# Makes tests/data/train/adam__*.npy: torch.optim.Adam's steps on one parameter, for test_adam.
# Run with Debian's PyTorch 1.13: /usr/bin/python3 tests/data/train/make_adam.py (from the repo root).
#
# torch.manual_seed(21); p = torch.randn(3, 4); grads = torch.randn(6, 3, 4) * 0.5
# Adam(lr=0.1) with the defaults (betas (0.9, 0.999), eps 1e-8, no weight decay): the parameter
# after each of 6 steps, p.grad = grads[k]. Then the same with weight_decay=0.05 and
# lr=0.02, betas=(0.8, 0.99), eps=1e-3, to exercise every setting.
import numpy as np
import torch

out = "tests/data/train/"
torch.manual_seed(21)
p0 = torch.randn(3, 4)
grads = torch.randn(6, 3, 4) * 0.5


def run(**settings):
    p = torch.nn.Parameter(p0.clone())
    opt = torch.optim.Adam([p], **settings)
    after = []
    for g in grads:
        p.grad = g.clone()
        opt.step()
        after.append(p.detach().clone())
    return torch.stack(after)


np.save(out + "adam__p0.npy", p0.numpy().astype(np.float32))
np.save(out + "adam__grads.npy", grads.numpy().astype(np.float32))
np.save(out + "adam__after.npy", run(lr=0.1).numpy().astype(np.float32))
np.save(out + "adam__after_wd.npy",
        run(lr=0.02, betas=(0.8, 0.99), eps=1e-3, weight_decay=0.05).numpy().astype(np.float32))
