// Solution of exercise swiglu: Llama's gated MLP, down_proj(silu(gate_proj(x)) * up_proj(x)).
//
// Shape legend: T tokens, d hidden size, f the MLP's width.
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;

namespace {

// x @ w^T for nn.Linear's (out, in) weight: (T, in) -> (T, out).
Mat times_transposed(const Mat& x, const Mat& w) {
  const std::size_t T = x.shape()[0], in = x.shape()[1], out = w.shape()[0];
  Mat y = xt::zeros<float>({T, out});  // (T, out)
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t o = 0; o < out; ++o) {
      float sum = 0.0f;
      for (std::size_t c = 0; c < in; ++c) sum += x(t, c) * w(o, c);
      y(t, o) = sum;
    }
  return y;
}

}  // namespace

Mat swiglu(const Mat& x, const Mat& gate_w, const Mat& up_w, const Mat& down_w) {
  const std::size_t d = x.shape()[1], f = gate_w.shape()[0];
  if (gate_w.shape()[1] != d || up_w.shape()[0] != f || up_w.shape()[1] != d || down_w.shape()[0] != d ||
      down_w.shape()[1] != f)
    throw std::invalid_argument("swiglu: x " + attn::shape_of(x) + ", gate_w " + attn::shape_of(gate_w) + ", up_w " +
                                attn::shape_of(up_w) + ", down_w " + attn::shape_of(down_w) +
                                ": need gate_w and up_w (f, d), down_w (d, f)");
  const Mat gate = times_transposed(x, gate_w);  // (T, f)
  const Mat up = times_transposed(x, up_w);      // (T, f)
  Mat hidden = xt::zeros<float>({x.shape()[0], f});  // (T, f)
  for (std::size_t t = 0; t < x.shape()[0]; ++t)
    for (std::size_t i = 0; i < f; ++i) {
      const float z = gate(t, i);
      hidden(t, i) = z / (1.0f + std::exp(-z)) * up(t, i);  // silu(z) * up
    }
  return times_transposed(hidden, down_w);  // (T, d)
}

}  // namespace exercise
