// The backward pass of a residual connection, y = x + f(x).
//
// A sum passes its gradient unchanged to each of its inputs: dL/dx gets dL/dy directly (the
// skip path) plus whatever flows back through f. Gradients that reach one tensor by two paths
// add up, which is all this does.
//
// Legend: any shape. T is float or double.
#pragma once

#include <stdexcept>

#include "core/tensor.hpp"

namespace attn::grad {

// into += d, elementwise: the gradient of one more path into the same tensor.
template <class T, std::size_t N>
void accumulate(xt::xtensor<T, N>& into, const xt::xtensor<T, N>& d) {
  if (into.shape() != d.shape())
    throw std::invalid_argument("accumulate: gradient " + shape_of(d) + " does not fit " + shape_of(into));
  T* dst = into.data();
  const T* src = d.data();
  for (std::size_t i = 0; i < into.size(); ++i) dst[i] += src[i];
}

}  // namespace attn::grad
