// nn.Linear's backward pass as three products (see linear.hpp).
//
// Legend: B batch, T tokens, in/out the layer's widths, n = B * T rows.
#include "core/grad/linear.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/grad/gemm.hpp"

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
