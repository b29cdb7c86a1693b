// The causal mask: token t may look at tokens 0..t and never at the future.
//
// Legend: T query tokens, S key tokens (S = T in self-attention).
#pragma once

#include <stdexcept>

#include "core/tensor.hpp"

namespace attn {

// torch.triu(torch.ones(T, T), diagonal=1): 1 above the diagonal (the future), 0 elsewhere.
Mat causal_mask(std::size_t T);  // (T, T)

// torch.tril(torch.ones(T, T)): 1 on and below the diagonal (what may be seen).
Mat lower_triangle(std::size_t T);  // (T, T)

// Where mask is 1, in every (T, S) matrix of the last two axes: replace the score with `fill`
// (scores.masked_fill(mask.bool(), fill)). Any rank >= 2. In float (the lessons) or double
// (training's attention, core/attention.hpp).
void masked_fill_inplace(float* scores, std::size_t matrices, const Mat& mask, float fill);
void masked_fill_inplace(double* scores, std::size_t matrices, const Mat& mask, double fill);

template <std::size_t N>
xt::xtensor<float, N> masked_fill(const xt::xtensor<float, N>& scores, const Mat& mask, float fill) {
  static_assert(N >= 2, "masked_fill needs (..., T, S) scores");
  const std::size_t T = scores.shape()[N - 2], S = scores.shape()[N - 1];
  if (mask.shape()[0] != T || mask.shape()[1] != S)
    throw std::invalid_argument("masked_fill: mask " + shape_of(mask) + " does not fit scores " +
                                shape_of(scores));
  xt::xtensor<float, N> out = scores;  // (..., T, S)
  masked_fill_inplace(out.data(), (T * S) != 0 ? out.size() / (T * S) : 0, mask, fill);
  return out;
}

}  // namespace attn
