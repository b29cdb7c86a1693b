// nn.Linear's backward pass as three products (see linear.hpp).
//
// Legend: B batch, T tokens, in/out the layer's widths, n = B * T rows.
#include "core/grad/linear.hpp"

#include <stdexcept>

#include "core/grad/gemm.hpp"

namespace attn::grad {

template <class T>
LinearGrads<T> linear_backward(const xt::xtensor<T, 3>& x, const xt::xtensor<T, 2>& weight,
                               const xt::xtensor<T, 3>& dy, bool has_bias) {
  const std::size_t B = x.shape()[0], Tn = x.shape()[1], in = x.shape()[2];
  const std::size_t out = weight.shape()[0];
  if (weight.shape()[1] != in || dy.shape()[0] != B || dy.shape()[1] != Tn || dy.shape()[2] != out)
    throw std::invalid_argument("linear_backward: shapes do not fit: x " + shape_of(x) + ", weight " +
                                shape_of(weight) + ", dy " + shape_of(dy));
  const std::size_t n = B * Tn;
  LinearGrads<T> g;
  g.x = xt::zeros<T>({B, Tn, in});      // (B, T, in)
  g.weight = xt::zeros<T>({out, in});   // (out, in)
  gemm<T>(false, false, n, in, out, dy.data(), weight.data(), T(0), g.x.data());  // dy @ W
  gemm<T>(true, false, out, in, n, dy.data(), x.data(), T(0), g.weight.data());   // dy^T @ x
  if (has_bias) {
    g.bias = xt::zeros<T>({out});  // (out,)
    for (std::size_t r = 0; r < n; ++r)
      for (std::size_t o = 0; o < out; ++o) g.bias(o) += dy.data()[r * out + o];
  }
  return g;
}

template LinearGrads<float> linear_backward(const xt::xtensor<float, 3>&, const xt::xtensor<float, 2>&,
                                            const xt::xtensor<float, 3>&, bool);
template LinearGrads<double> linear_backward(const xt::xtensor<double, 3>&, const xt::xtensor<double, 2>&,
                                             const xt::xtensor<double, 3>&, bool);

}  // namespace attn::grad
