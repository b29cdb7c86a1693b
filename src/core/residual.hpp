// A residual connection, y = x + f(x), and its backward pass: one operation serves both.
//
// Forward, the stream leaving a block is the stream entering it plus what the block computed:
// copy x, then accumulate f(x) into it. Backward, a sum passes its gradient unchanged to each of
// its inputs: dL/dx gets dL/dy directly (the skip path) plus whatever flows back through f.
// Gradients that reach one tensor by two paths add up, which is all this does.
//
// Legend: any shape. T is float or double.
#pragma once

#include <stdexcept>

#include "core/tensor.hpp"

namespace attn {

// into += d, elementwise: f(x) added to the stream, or the gradient of one more path into the
// same tensor. (Not named accumulate: on xtensor arguments argument-dependent lookup would
// prefer xt::accumulate.)
template <class T, std::size_t N>
void add_into(xt::xtensor<T, N>& into, const xt::xtensor<T, N>& d) {
  if (into.shape() != d.shape())
    throw std::invalid_argument("add_into: " + shape_of(d) + " does not fit " + shape_of(into));
  T* dst = into.data();
  const T* src = d.data();
  for (std::size_t i = 0; i < into.size(); ++i) dst[i] += src[i];
}

}  // namespace attn
