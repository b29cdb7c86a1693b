// The backward pass of nn.Linear, y = x @ W^T + b (core/linear.hpp is the forward).
//
// Given dL/dy for every row, the chain rule through one row y_n = W x_n + b gives
//   dL/dx_n = W^T dL/dy_n             ->  dx = dy @ W          (B, T, out) @ (out, in)
//   dL/dW   = sum_n dL/dy_n x_n^T     ->  dW = dy^T @ x        (out, B*T) @ (B*T, in)
//   dL/db   = sum_n dL/dy_n           ->  db = dy summed over every row
// The weight and bias gradients sum over every (batch, token) row: the same W served them all.
//
// Legend: B batch, T tokens, in/out the layer's widths. T is float (training) or double (the
// finite-difference tests); both are compiled in linear.cpp.
#pragma once

#include "core/tensor.hpp"

namespace attn::grad {

template <class T>
struct LinearGrads {
  xt::xtensor<T, 3> x;       // (B, T, in)   dL/dx
  xt::xtensor<T, 2> weight;  // (out, in)    dL/dW, as nn.Linear stores W
  xt::xtensor<T, 1> bias;    // (out,)       dL/db; empty when the layer has no bias
};

// x (B, T, in), weight (out, in), dy (B, T, out). Throws std::invalid_argument when they do not fit.
template <class T>
LinearGrads<T> linear_backward(const xt::xtensor<T, 3>& x, const xt::xtensor<T, 2>& weight,
                               const xt::xtensor<T, 3>& dy, bool has_bias);

}  // namespace attn::grad
