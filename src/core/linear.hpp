// nn.Linear, forward and backward: y = x @ weight^T + bias, with weight stored (out, in) as
// PyTorch stores it.
//
// Backward: given dL/dy for every row, the chain rule through one row y_n = W x_n + b gives
//   dL/dx_n = W^T dL/dy_n             ->  dx = dy @ W          (B, T, out) @ (out, in)
//   dL/dW   = sum_n dL/dy_n x_n^T     ->  dW = dy^T @ x        (out, B*T) @ (B*T, in)
//   dL/db   = sum_n dL/dy_n           ->  db = dy summed over every row
// The weight and bias gradients sum over every (batch, token) row: the same W served them all.
//
// T is float or double (linear.cpp instantiates both). The forward pass in float is core/matmul's
// matmul_bt (the lessons' digits); in double, and every backward product, core/gemm's.
//
// Legend: B batch, T tokens, in/out the layer's widths.
#pragma once

#include "core/generator.hpp"
#include "core/tensor.hpp"

namespace attn {

template <class T>
struct LinearT {
  xt::xtensor<T, 2> weight;  // (out, in)
  xt::xtensor<T, 1> bias;    // (out,), empty when the layer has no bias
  bool has_bias() const { return bias.size() != 0; }
};
using Linear = LinearT<float>;

// nn.Linear(in, out, bias): weight then bias drawn U(-1/sqrt(in), 1/sqrt(in)) from `gen`.
Linear make_linear(TorchGenerator& gen, std::size_t in, std::size_t out, bool bias);

// The same numbers in float64 (layer.double()).
LinearT<double> to_double(const Linear& layer);

// The same shapes filled with zeros: a container for gradients.
template <class T>
LinearT<T> zeros_like(const LinearT<T>& layer);

// (B, T, in) -> (B, T, out). Throws std::invalid_argument when x's width is not the layer's in.
template <class T>
xt::xtensor<T, 3> linear(const LinearT<T>& layer, const xt::xtensor<T, 3>& x);

// The same into y, which keeps its buffer when it already has the shape (B, T, out): a training
// step allocates nothing. y must not be x.
template <class T>
void linear(const LinearT<T>& layer, const xt::xtensor<T, 3>& x, xt::xtensor<T, 3>& y);

}  // namespace attn

// The backward pass lives in namespace attn::grad, beside its forward pass.
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

// The same into buffers the caller keeps: dx (B, T, in), dweight (out, in) and, for a layer with
// a bias, *dbias (out,) (nullptr without one). Each keeps its memory when it already has its
// shape, so a training step allocates nothing. dx must not be dy.
template <class T>
void linear_backward(const xt::xtensor<T, 3>& x, const xt::xtensor<T, 2>& weight, const xt::xtensor<T, 3>& dy,
                     xt::xtensor<T, 3>& dx, xt::xtensor<T, 2>& dweight, xt::xtensor<T, 1>* dbias);

}  // namespace attn::grad
