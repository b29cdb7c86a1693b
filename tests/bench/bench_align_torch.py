# The same training step as bench_align.cpp in PyTorch: docs/align_torch.py's model, batch and
# Adam, timed step by step. Run by run.sh with Debian's /usr/bin/python3 and python3-torch.
import importlib.util, os, sys, time
import torch

reps = int(sys.argv[1]) if len(sys.argv) > 1 else 50
torch.set_num_threads(2)
here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("align_torch", os.path.join(here, "../../docs/align_torch.py"))
A = importlib.util.module_from_spec(spec)
spec.loader.exec_module(A)
torch.manual_seed(2014)
held_out, train = A.make_data(64, 1024)
model = A.Align(len(A.SRC), len(A.TGT), d_e=16, d_h=16, d_a=16)
opt = torch.optim.Adam(model.parameters(), lr=0.01)
ms = []
for t in range(reps):
    t0 = time.perf_counter()
    batch = [train[(16 * t + k) % len(train)] for k in range(16)]
    loss = A.batch_loss(model, batch)
    opt.zero_grad()
    loss.backward()
    opt.step()
    ms.append((time.perf_counter() - t0) * 1e3)
ms.sort()
print(f"# pytorch {torch.__version__}, {torch.get_num_threads()} threads, one training step of docs/align_torch.py, {reps} steps")
print(f"align-step  best {ms[0]:7.3f} ms  median {ms[len(ms) // 2]:7.3f} ms")
