// Exercise swiglu (lesson: block). Check it with: attn check swiglu
//
// PyTorch -> xtensor 0.24, for this exercise:
//   x.shape[0], gate_w.shape[0]        x.shape()[0], gate_w.shape()[0]   (std::size_t)
//   torch.zeros(T, f)                  Mat g = xt::zeros<float>({T, f});
//   x @ gate_w.T   (nn.Linear, no bias) no @ or .T: g(t, i) = the loop over c of x(t, c) * gate_w(i, c)
//   torch.sigmoid(z), F.silu(z)        1.0f / (1.0f + std::exp(-z)), z / (1.0f + std::exp(-z))
//   raise ValueError(...)              throw std::invalid_argument("...");
//
// Llama's feed-forward half (LlamaMLP) is a gated MLP, SwiGLU: two projections of the same
// input, one of them through silu, multiplied entry by entry, then projected back:
// down_proj(silu(gate_proj(x)) * up_proj(x)). The gate decides how much of each up_proj
// feature passes. `attn lesson block` prints the step as `hidden` and `mlp_out` at stage 8.
//
// Shape legend: T tokens, d hidden size, f the MLP's width (Llama-3.2-3B: d 3072, f 8192).
//
// Contract
//   swiglu(x, gate_w, up_w, down_w) = (silu(x @ gate_w^T) * (x @ up_w^T)) @ down_w^T
//   x (T, d); gate_w, up_w (f, d); down_w (d, f): nn.Linear's weights, (out, in), no biases
//   silu(z) = z * sigmoid(z) = z / (1 + exp(-z)), on the gate only; * is entry by entry
//   -> (T, d); throws std::invalid_argument when the shapes do not chain like that.
//
// Worked example (T 1, d 2, f 2)
//   x = [[1, 2]], gate_w = [[1, 0], [0, -1]], up_w = [[1, 1], [0, 1]], down_w = [[1, 0], [1, 1]]
//   gate = x @ gate_w^T = [[1, -2]]      silu(gate) = [[0.7311, -0.2384]]
//   up   = x @ up_w^T   = [[3, 2]]       hidden = silu(gate) * up = [[2.1932, -0.4768]]
//   hidden @ down_w^T   = [[2.1932, 1.7164]]
#include <cmath>
#include <stdexcept>

#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;

Mat swiglu(const Mat& x, const Mat& gate_w, const Mat& up_w, const Mat& down_w) {
  // TODO: check that the shapes chain (throw std::invalid_argument if not), then compute
  // gate = x @ gate_w^T and up = x @ up_w^T, hidden = silu(gate) * up, and hidden @ down_w^T.
  return {};  // TODO: return the (T, d) result instead of this empty (0, 0) tensor.
}

}  // namespace exercise
