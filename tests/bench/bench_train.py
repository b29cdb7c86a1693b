# One training step of the learn-heads model in PyTorch 1.13 (forward, loss, backward, Adam),
# the same sizes as tests/bench/bench_train.cpp; run by tests/bench/run_train.sh.
#   /usr/bin/python3 tests/bench/bench_train.py [reps] [threads]
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "data", "train"))
import learn_heads as lh  # noqa: E402  (the docs' script: TinyLm, make_batch)

reps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
torch.set_num_threads(threads)
print("# PyTorch %s, %d thread(s), one training step, %d reps, ms" % (torch.__version__, threads, reps))
for name, dtype in (("float64", torch.float64), ("float32", torch.float32)):
    torch.manual_seed(1)
    model = lh.TinyLm().to(dtype)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(2)
    ms = []
    for _ in range(reps):
        inputs, targets, _ = lh.make_batch(g, lh.B)  # drawn outside the timed step
        t0 = time.perf_counter()
        logits, _ = model(inputs)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, lh.V), targets.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        ms.append((time.perf_counter() - t0) * 1e3)
    ms.sort()
    print("step %-8s %8.3f %8.3f" % (name, ms[0], statistics.median(ms)))
torch.manual_seed(1)
t0 = time.perf_counter()
_, _, losses = lh.run()
print("run300 float64 %8.1f" % ((time.perf_counter() - t0) * 1e3))
