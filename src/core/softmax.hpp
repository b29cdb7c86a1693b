// Softmax over the last axis, forward and backward: each row of scores becomes a row of weights
// summing to 1.
//
// Forward, stable form: softmax(x) = exp(x - max(x)) / sum(exp(x - max(x))), so logits of +-1e4
// do not overflow. A row that is all -inf (a fully masked row) has max -inf and becomes NaN,
// exactly as in PyTorch; the causal lesson shows why some articles fill with -1e9 instead.
//
// Backward, from the output: for one row y = softmax(x), dy_i/dx_j = y_i (delta_ij - y_j), so
//   dL/dx_j = y_j (dL/dy_j - sum_i dL/dy_i y_i)
// It needs only the output y: the forward pass already holds it (attn_weights), so nothing else
// is kept. A masked entry has y = 0 and therefore gets gradient 0: the mask passes nothing back.
//
// Legend: (..., n) any leading axes, n the row length. T is float or double (softmax.cpp
// instantiates both; the lessons run float, training double).
#pragma once

#include <stdexcept>

#include "core/tensor.hpp"

namespace attn {

// In place over `rows` contiguous rows of length n.
template <class T>
void softmax_rows_inplace(T* data, std::size_t rows, std::size_t n);

// Any rank: (..., n) -> (..., n)
template <class T, std::size_t N>
xt::xtensor<T, N> softmax_rows(const xt::xtensor<T, N>& x) {
  xt::xtensor<T, N> y = x;  // same shape; rows are contiguous in row-major order
  const std::size_t n = N ? y.shape()[N - 1] : 1;
  softmax_rows_inplace(y.data(), n ? y.size() / n : 0, n);
  return y;
}

}  // namespace attn

// The backward passes live in namespace attn::grad, beside their forward pass.
namespace attn::grad {

// In place over `rows` contiguous rows of length n: dx = y * (dy - sum(dy * y)).
template <class T>
void softmax_rows_backward(const T* y, const T* dy, T* dx, std::size_t rows, std::size_t n);

// y, dy (..., n) -> dx (..., n). Throws std::invalid_argument when the shapes differ.
template <class T, std::size_t N>
xt::xtensor<T, N> softmax_rows_backward(const xt::xtensor<T, N>& y, const xt::xtensor<T, N>& dy) {
  if (y.shape() != dy.shape())
    throw std::invalid_argument("softmax_rows_backward: y " + shape_of(y) + " and dy " + shape_of(dy) + " differ");
  xt::xtensor<T, N> dx = xt::empty<T>(y.shape());  // (..., n)
  const std::size_t n = N ? y.shape()[N - 1] : 1;
  softmax_rows_backward(y.data(), dy.data(), dx.data(), n ? y.size() / n : 0, n);
  return dx;
}

}  // namespace attn::grad
