// nn.Linear's forward pass, and its backward pass as three products (see linear.hpp).
//
// Legend: B batch, T tokens, in/out the layer's widths, n = B * T rows.
#include "core/linear.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/gemm.hpp"
#include "core/matmul.hpp"

namespace attn {

namespace {

// y (n, out) = x (n, in) @ w (out, in)^T. Float: matmul_bt's own product (sgemm, or the small-m
// kernel for a few rows against a large weight), so the lessons' digits stay. Double: core/gemm.
void project(std::size_t n, std::size_t out, std::size_t in, const float* x, const float* w, float* y) {
  matmul_bt_rows(n, out, in, x, w, y);
}
void project(std::size_t n, std::size_t out, std::size_t in, const double* x, const double* w, double* y) {
  gemm(false, true, n, out, in, x, w, 0.0, y);
}

}  // namespace

Linear make_linear(TorchGenerator& gen, std::size_t in, std::size_t out, bool bias) {
  if (in == 0 || out == 0)
    throw std::invalid_argument("make_linear: widths must be positive, got in " +
                                std::to_string(in) + ", out " + std::to_string(out));
  // kaiming_uniform_(a=sqrt(5)) reduces to U(-1/sqrt(in), 1/sqrt(in)); the bias uses the same bound.
  const float bound = static_cast<float>(1.0 / std::sqrt(static_cast<double>(in)));
  Linear layer;
  layer.weight = xt::empty<float>({out, in});  // (out, in)
  gen.uniform_(layer.weight.data(), layer.weight.size(), -bound, bound);
  if (bias) {
    layer.bias = xt::empty<float>({out});  // (out,)
    gen.uniform_(layer.bias.data(), layer.bias.size(), -bound, bound);
  }
  return layer;
}

LinearT<double> to_double(const Linear& layer) {
  return {xt::cast<double>(layer.weight), xt::cast<double>(layer.bias)};  // (out, in), (out,) or empty
}

template <class T>
LinearT<T> zeros_like(const LinearT<T>& layer) {
  LinearT<T> z;
  z.weight = xt::zeros<T>(layer.weight.shape());                     // (out, in)
  if (layer.has_bias()) z.bias = xt::zeros<T>(layer.bias.shape());  // (out,)
  return z;
}

template <class T>
void linear(const LinearT<T>& layer, const xt::xtensor<T, 3>& x, xt::xtensor<T, 3>& y) {
  const std::size_t B = x.shape()[0], Tn = x.shape()[1], in = x.shape()[2];
  if (layer.weight.shape()[1] != in)
    throw std::invalid_argument("linear: shapes do not fit: " + shape_of(x) + " and " + shape_of(layer.weight));
  if (&x == &y) throw std::invalid_argument("linear: x and y must be different tensors");
  const std::size_t out = layer.weight.shape()[0];
  y.resize({B, Tn, out});  // (B, T, out), written whole by the product
  project(B * Tn, out, in, x.data(), layer.weight.data(), y.data());  // (B, T, in) @ (out, in)^T
  if (layer.has_bias())
    for (std::size_t r = 0; r < B * Tn; ++r)
      for (std::size_t j = 0; j < out; ++j) y.data()[r * out + j] += layer.bias(j);
}

template <class T>
xt::xtensor<T, 3> linear(const LinearT<T>& layer, const xt::xtensor<T, 3>& x) {
  xt::xtensor<T, 3> y;  // (B, T, out)
  linear(layer, x, y);
  return y;
}

template LinearT<float> zeros_like(const LinearT<float>&);
template LinearT<double> zeros_like(const LinearT<double>&);
template Ten3 linear(const Linear&, const Ten3&);
template xt::xtensor<double, 3> linear(const LinearT<double>&, const xt::xtensor<double, 3>&);
template void linear(const Linear&, const Ten3&, Ten3&);
template void linear(const LinearT<double>&, const xt::xtensor<double, 3>&, xt::xtensor<double, 3>&);

}  // namespace attn

namespace attn::grad {

template <class T>
void linear_backward(const xt::xtensor<T, 3>& x, const xt::xtensor<T, 2>& weight, const xt::xtensor<T, 3>& dy,
                     xt::xtensor<T, 3>& dx, xt::xtensor<T, 2>& dweight, xt::xtensor<T, 1>* dbias) {
  const std::size_t B = x.shape()[0], Tn = x.shape()[1], in = x.shape()[2];
  const std::size_t out = weight.shape()[0];
  if (weight.shape()[1] != in || dy.shape()[0] != B || dy.shape()[1] != Tn || dy.shape()[2] != out)
    throw std::invalid_argument("linear_backward: shapes do not fit: x " + shape_of(x) + ", weight " +
                                shape_of(weight) + ", dy " + shape_of(dy));
  if (&dx == &dy) throw std::invalid_argument("linear_backward: dx and dy must be different tensors");
  const std::size_t n = B * Tn;
  dx.resize({B, Tn, in});   // (B, T, in)  every entry written by the product (beta 0)
  dweight.resize({out, in});  // (out, in)
  gemm<T>(false, false, n, in, out, dy.data(), weight.data(), T(0), dx.data());     // dy @ W
  gemm<T>(true, false, out, in, n, dy.data(), x.data(), T(0), dweight.data());      // dy^T @ x
  if (dbias) {
    dbias->resize({out});  // (out,)
    std::fill(dbias->begin(), dbias->end(), T(0));
    for (std::size_t r = 0; r < n; ++r)
      for (std::size_t o = 0; o < out; ++o) (*dbias)(o) += dy.data()[r * out + o];
  }
}

template <class T>
LinearGrads<T> linear_backward(const xt::xtensor<T, 3>& x, const xt::xtensor<T, 2>& weight,
                               const xt::xtensor<T, 3>& dy, bool has_bias) {
  LinearGrads<T> g;
  linear_backward(x, weight, dy, g.x, g.weight, has_bias ? &g.bias : nullptr);
  return g;
}

template LinearGrads<float> linear_backward(const xt::xtensor<float, 3>&, const xt::xtensor<float, 2>&,
                                            const xt::xtensor<float, 3>&, bool);
template LinearGrads<double> linear_backward(const xt::xtensor<double, 3>&, const xt::xtensor<double, 2>&,
                                             const xt::xtensor<double, 3>&, bool);
template void linear_backward(const xt::xtensor<float, 3>&, const xt::xtensor<float, 2>&, const xt::xtensor<float, 3>&,
                              xt::xtensor<float, 3>&, xt::xtensor<float, 2>&, xt::xtensor<float, 1>*);
template void linear_backward(const xt::xtensor<double, 3>&, const xt::xtensor<double, 2>&,
                              const xt::xtensor<double, 3>&, xt::xtensor<double, 3>&, xt::xtensor<double, 2>&,
                              xt::xtensor<double, 1>*);

}  // namespace attn::grad
