# PyTorch's side of the benchmark: the cases of bench_attention.cpp by the same ids, written the
# way PyTorch code writes them (masked_fill, softmax, matmul; repeat_interleave for grouped
# key/value heads). Run by run.sh with Debian's /usr/bin/python3 and python3-torch; not a test
# dependency.
#
#   bench_torch.py THREADS --about      torch's version, threads and OpenBLAS kernel
#   bench_torch.py THREADS CASE...      one line per case, as bench_attention prints them:
#                                       id, best wall ms, best CPU ms, "-" (no allocation count),
#                                       peak RSS of the process in KB
import ctypes, resource, sys, time
import torch, torch.nn as nn


def blas():
    """The OpenBLAS that torch's BLAS calls go to (Debian links torch to libblas.so.3)."""
    try:
        lib = ctypes.CDLL("libblas.so.3")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        lib.openblas_get_config.restype = ctypes.c_char_p
        return (f"{lib.openblas_get_config().decode().strip()}, kernel {lib.openblas_get_corename().decode()}, "
                f"{lib.openblas_get_num_threads()} threads")
    except (OSError, AttributeError):
        return "BLAS not OpenBLAS"


def causal_core(q, k, v, mask):
    dk = q.shape[-1]
    s = (q @ k.transpose(2, 3)).masked_fill(mask, -torch.inf)
    w = torch.softmax(s / dk ** 0.5, dim=-1)
    return w @ v


def core_case(B, h, h_kv, T, dk):
    torch.manual_seed(0)
    q = torch.randn(B, h, T, dk)
    k = torch.randn(B, h_kv, T, dk)
    v = torch.randn(B, h_kv, T, dk)
    mask = torch.triu(torch.ones(T, T), diagonal=1).bool()
    groups = h // h_kv

    def call():
        kk, vv = (k, v) if groups == 1 else (k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1))
        return causal_core(q, kk, vv, mask)
    return call


def forward_case(B, T, d, h, h_kv, bias):
    torch.manual_seed(0)
    x = torch.rand(B, T, d)
    dk = d // h
    wq = nn.Linear(d, d, bias=False)
    wk = nn.Linear(d, dk * h_kv, bias=False)
    wv = nn.Linear(d, dk * h_kv, bias=False)
    wo = nn.Linear(d, d, bias=bias)
    mask = torch.triu(torch.ones(T, T), diagonal=1).bool()
    groups = h // h_kv

    def call():
        q = wq(x).view(B, T, h, dk).transpose(1, 2)
        k = wk(x).view(B, T, h_kv, dk).transpose(1, 2)
        v = wv(x).view(B, T, h_kv, dk).transpose(1, 2)
        if groups > 1:
            k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
        return wo(causal_core(q, k, v, mask).transpose(1, 2).contiguous().view(B, T, d))
    return call


def setup(case):
    kind, *n = case.split("-")
    n = [int(x) for x in n]
    if kind == "core":
        return core_case(1, 24, 24, n[0], 128), 5
    if kind == "gqa":
        return core_case(1, 24, 8, n[0], 128), 5
    if kind == "mha":
        B, T, d, h = n
        return forward_case(B, T, d, h, h, True), 5
    if kind == "llama":
        return forward_case(1, n[0], 3072, 24, 8, False), 3
    if kind == "large":
        return core_case(1, 4, 4, n[0], 64), 2
    raise SystemExit(f"bench_torch.py: unknown case {case}")


torch.set_num_threads(int(sys.argv[1]))
if sys.argv[2] == "--about":
    sdpa = hasattr(torch.nn.functional, "scaled_dot_product_attention")
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; {blas()}; "
          f"torch.nn.functional.scaled_dot_product_attention {'exists' if sdpa else 'does not exist (added in 2.0)'}"
          f", so the reference is matmul, masked_fill, softmax, matmul")
    sys.exit(0)
for case in sys.argv[2:]:
    call, reps = setup(case)
    best = best_cpu = float("inf")
    with torch.no_grad():
        for _ in range(reps):
            c0, t0 = time.process_time(), time.perf_counter()
            y = call()
            best = min(best, (time.perf_counter() - t0) * 1e3)
            best_cpu = min(best_cpu, (time.process_time() - c0) * 1e3)
            del y
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{case}\t{best:.2f}\t{best_cpu:.2f}\t-\t{peak_kb}", flush=True)
