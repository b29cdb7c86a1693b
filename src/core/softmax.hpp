// Softmax over the last axis: each row of scores becomes a row of weights summing to 1.
//
// Stable form: softmax(x) = exp(x - max(x)) / sum(exp(x - max(x))), so logits of +-1e4 do not
// overflow. A row that is all -inf (a fully masked row) has max -inf and becomes NaN, exactly
// as in PyTorch; the causal lesson shows why some articles fill with -1e9 instead.
#pragma once

#include "core/tensor.hpp"

namespace attn {

// In place over `rows` contiguous rows of length n.
void softmax_rows_inplace(float* data, std::size_t rows, std::size_t n);

// Any rank: (..., n) -> (..., n)
template <std::size_t N>
xt::xtensor<float, N> softmax_rows(const xt::xtensor<float, N>& x) {
  xt::xtensor<float, N> y = x;  // same shape; rows are contiguous in row-major order
  const std::size_t n = N ? y.shape()[N - 1] : 1;
  softmax_rows_inplace(y.data(), n ? y.size() / n : 0, n);
  return y;
}

}  // namespace attn
