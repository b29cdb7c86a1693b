# The same forward pass as bench_attention.cpp, in PyTorch, on the same sizes.
# Run by run.sh with Debian's /usr/bin/python3 and python3-torch; not a test dependency.
import sys, time, torch, torch.nn as nn

reps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
torch.set_num_threads(2)
print(f"# pytorch {torch.__version__}, {torch.get_num_threads()} threads, best of {reps}")
for B, T, d, h in [(1, 128, 512, 8), (1, 512, 1024, 16), (1, 1024, 1024, 16), (4, 512, 768, 12)]:
    torch.manual_seed(0)
    x = torch.rand(B, T, d)
    wq, wk, wv = (nn.Linear(d, d, bias=False) for _ in range(3))
    wo = nn.Linear(d, d)
    mask = torch.triu(torch.ones(T, T), diagonal=1).bool()
    dk = d // h
    best = float("inf")
    with torch.no_grad():
        for _ in range(reps):
            t0 = time.perf_counter()
            q = wq(x).view(B, T, h, dk).transpose(1, 2)
            k = wk(x).view(B, T, h, dk).transpose(1, 2)
            v = wv(x).view(B, T, h, dk).transpose(1, 2)
            s = (q @ k.transpose(2, 3)).masked_fill(mask, -torch.inf)
            w = torch.softmax(s / dk ** 0.5, dim=-1)
            y = wo((w @ v).transpose(1, 2).contiguous().view(B, T, d))
            best = min(best, (time.perf_counter() - t0) * 1e3)
    flops = 2.0 * B * T * d * d * 4 + 2.0 * 2.0 * B * T * T * d
    print(f"mha B={B} T={T} d={d} h={h}  {best:9.2f} ms  {flops / (best * 1e6):7.1f} GFLOP/s")
