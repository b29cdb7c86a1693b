#!/usr/bin/python3
"""The PyTorch side of the model benchmark (model_bench.sh): one float32 forward pass of a
Hugging Face checkpoint folder, every layer's attention weights kept (as output_attentions=True
keeps them), timed.

    model_torch.py DIR --ids 1,2,3 [--threads 2] [--name gpt2]
    model_torch.py --check [MODELS_DIR]     # against tests/data/models' expected logits

Prints one JSON line: {"model", "tokens", "import_s" (import of numpy and torch), "load_s"
(safetensors read with numpy, bf16 = uint16 << 16 viewed as float32, f16 through numpy, to
float32 torch tensors), "forward_s", "total_s" (from the script's first line to the end),
"peak_rss_mb" (resource.getrusage ru_maxrss), "threads" (torch.get_num_threads())}.

The model is tests/data/models/hf_forward.py, the forward pass whose outputs are the fixtures'
expected tensors (validated there against the shared reference's); --check prints, for every
case of tests/data/models, the largest absolute difference of the logits and attention weights
from expected/*.npy. Needs Debian's python3-torch and python3-numpy (/usr/bin/python3).
"""
import time

START = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "data", "models")


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dir", nargs="?", help="checkpoint folder (with --check: the fixtures folder)")
    p.add_argument("--ids", help="comma-separated token ids")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--name", help="model name in the JSON line (default: the folder's name)")
    p.add_argument("--check", action="store_true", help="compare with the tiny fixtures' expected tensors")
    a = p.parse_args()
    if not a.check and (not a.dir or not a.ids):
        p.error("DIR and --ids are needed (or --check)")
    return a


ARGS = parse()
# Debian's torch calls the system OpenBLAS: give it the same thread count (before it loads).
os.environ.setdefault("OPENBLAS_NUM_THREADS", str(ARGS.threads))

import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, MODELS)
import hf_forward  # noqa: E402

IMPORTED = time.perf_counter()


def run(d, ids):
    """(logits, [attention weights per layer], load seconds, forward seconds)."""
    t0 = time.perf_counter()
    config, weights = hf_forward.load_checkpoint(d)
    t1 = time.perf_counter()
    attentions = []
    keep = lambda name, t: attentions.append(t) if name.startswith("attn_weights_") else None  # noqa: E731
    logits = hf_forward.forward(config, weights, ids, keep)
    t2 = time.perf_counter()
    return logits, attentions, t1 - t0, t2 - t1


def check(models):
    worst = 0.0
    with open(os.path.join(models, "models.json")) as f:
        cases = json.load(f)["cases"]
    for c in cases:
        d = os.path.join(models, c["case"])
        logits, attentions, _, _ = run(d, c["ids"])
        want = np.load(os.path.join(d, "expected", "logits.npy"))
        dl = float(np.max(np.abs(logits.numpy() - want)))
        da = max(float(np.max(np.abs(a.numpy() - np.load(os.path.join(d, "expected", f"attn_weights_{i}.npy")))))
                 for i, a in enumerate(attentions))
        worst = max(worst, dl)
        print(f"{c['case']:24s} T={len(c['ids']):2d}  logits max |diff| {dl:.2e} (max |logit| {np.max(np.abs(want)):.2f})"
              f"  attention weights {da:.2e}")
    print(f"largest logits difference: {worst:.2e}")
    if worst > 1e-4:
        raise SystemExit("FAILED: above 1e-4")


def main():
    torch.set_num_threads(ARGS.threads)
    if ARGS.check:
        check(ARGS.dir or MODELS)
        return
    ids = [int(i) for i in ARGS.ids.split(",") if i.strip()]
    logits, attentions, load_s, forward_s = run(ARGS.dir, ids)
    assert logits.shape[1] == len(ids) and len(attentions) > 0 and torch.isfinite(logits).all()
    end = time.perf_counter()
    print(json.dumps({"model": ARGS.name or os.path.basename(os.path.normpath(ARGS.dir)), "tokens": len(ids),
                      "import_s": round(IMPORTED - START, 3), "load_s": round(load_s, 3),
                      "forward_s": round(forward_s, 3), "total_s": round(end - START, 3),
                      "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                      "threads": torch.get_num_threads()}))


if __name__ == "__main__":
    main()
