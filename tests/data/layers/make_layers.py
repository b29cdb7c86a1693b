# Makes tests/data/layers/: the operation fixtures of tests/core/test_model_layers.cpp.
# Run with Debian's PyTorch 1.13 from the repository root:
#   /usr/bin/python3 tests/data/layers/make_layers.py
#
# 1. ops__*.npy: each real-model operation of src/core on random inputs, computed as PyTorch /
#    Hugging Face compute it in float32 (one thread):
#    - layer_norm: torch.nn.functional.layer_norm (what nn.LayerNorm calls), eps 1e-5, on x and
#      on x + 100 (a large mean, where the order "mean, then variance of x - mean" matters);
#    - rms_norm: LlamaRMSNorm's forward, w * (x * rsqrt(mean(x^2) + eps)), eps 1e-6;
#    - both again on x * 1e-3, where eps is a large part of the denominator;
#    - gelu_new: NewGELUActivation's formula, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) with
#      math.sqrt(2.0 / math.pi) a Python float and torch.pow(x, 3.0); silu: F.silu;
#    - conv1d / gpt2_mlp: GPT-2's Conv1D (x @ W + b, W (in, out)) and its MLP c_proj(gelu_new(c_fc(x)));
#    - gated_mlp: Llama's down(silu(gate(x)) * up(x)), nn.Linear weights (out, in), no bias;
#    - llama3_inv_freq_<d>: transformers' _compute_llama3_parameters (rope_type "llama3"), written
#      out below from its description: theta 500000, factor 32, low 1, high 4, original 8192.
#    The four tiny checkpoints' weights and expected tensors are in tests/data/models/ (written by
#    tests/data/models/make_expected.py), which test_model_layers reads too.
import math

import numpy as np
import torch

torch.set_num_threads(1)
OUT = "tests/data/layers/"


def save(name, t):
    a = t.detach().numpy() if isinstance(t, torch.Tensor) else t
    np.save(OUT + name + ".npy", np.ascontiguousarray(a, dtype=np.float32))


def gelu_new(x):  # transformers.activations.NewGELUActivation.forward
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def rms_norm(x, w, eps):  # transformers' LlamaRMSNorm.forward for float32 input
    variance = x.pow(2).mean(-1, keepdim=True)
    return w * (x * torch.rsqrt(variance + eps))


def llama3_inv_freq(d, theta, factor, low, high, old):
    inv = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    low_wavelen, high_wavelen = old / low, old / high
    wavelen = 2 * math.pi / inv
    inv_l = torch.where(wavelen > low_wavelen, inv / factor, inv)
    smooth = (old / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
    medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
    return torch.where(medium, smoothed, inv_l)


def ops():
    g = torch.Generator().manual_seed(2024)
    x = torch.randn(2, 5, 48, generator=g) * 2.0                         # (B, T, d)
    w, b = 1 + 0.3 * torch.randn(48, generator=g), 0.3 * torch.randn(48, generator=g)
    save("ops__norm_x", x)
    save("ops__norm_weight", w)
    save("ops__norm_bias", b)
    save("ops__layer_norm", torch.nn.functional.layer_norm(x, (48,), w, b, 1e-5))
    save("ops__layer_norm_offset", torch.nn.functional.layer_norm(x + 100.0, (48,), w, b, 1e-5))
    save("ops__rms_norm", rms_norm(x, w, 1e-6))
    # x * 1e-3: mean(x^2) near 4e-6, so eps (1e-6 here, 1e-5 for LayerNorm) changes every output.
    save("ops__layer_norm_small", torch.nn.functional.layer_norm(x * 1e-3, (48,), w, b, 1e-5))
    save("ops__rms_norm_small", rms_norm(x * 1e-3, w, 1e-6))

    a = torch.linspace(-10.0, 10.0, 4001).view(1, 1, -1)                  # (1, 1, N): every region
    a = torch.cat([a, (torch.randn(1, 1, 999, generator=g) * 3.0)], dim=2)
    save("ops__act_x", a)
    save("ops__gelu_new", gelu_new(a))
    save("ops__silu", torch.nn.functional.silu(a))

    x = torch.randn(2, 5, 16, generator=g)                                # (B, T, d)
    c_fc_w, c_fc_b = 0.3 * torch.randn(16, 64, generator=g), 0.3 * torch.randn(64, generator=g)
    c_proj_w, c_proj_b = 0.3 * torch.randn(64, 16, generator=g), 0.3 * torch.randn(16, generator=g)
    save("ops__mlp_x", x)
    for n, t in [("c_fc_weight", c_fc_w), ("c_fc_bias", c_fc_b), ("c_proj_weight", c_proj_w),
                 ("c_proj_bias", c_proj_b)]:
        save("ops__" + n, t)
    save("ops__conv1d", x @ c_fc_w + c_fc_b)                             # Conv1D: (B, T, 64)
    save("ops__gpt2_mlp", gelu_new(x @ c_fc_w + c_fc_b) @ c_proj_w + c_proj_b)
    gate, up, down = (0.3 * torch.randn(40, 16, generator=g), 0.3 * torch.randn(40, 16, generator=g),
                      0.3 * torch.randn(16, 40, generator=g))
    for n, t in [("gate_weight", gate), ("up_weight", up), ("down_weight", down)]:
        save("ops__" + n, t)
    lin = torch.nn.functional.linear
    save("ops__gated_mlp", lin(torch.nn.functional.silu(lin(x, gate)) * lin(x, up), down))

    for d in (64, 128):
        save(f"ops__llama3_inv_freq_{d}", llama3_inv_freq(d, 500000.0, 32.0, 1.0, 4.0, 8192))


# ---- the checkpoints: a small safetensors reader (docs/architecture.md, "Real-model layers")

if __name__ == "__main__":
    ops()
