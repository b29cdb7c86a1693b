// The tensor types every layer shares, and how a shape is written.
//
// Shape legend used across the project:
//   B batch, T tokens (queries), S source tokens / keys, d_in input width,
//   d_out projection width, h heads, d_k = d_out / h head width.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <xtensor/xtensor.hpp>

namespace attn {

// float32 like PyTorch's default dtype; fixed rank so every stage's shape is in its type.
using Vec = xt::xtensor<float, 1>;
using Mat = xt::xtensor<float, 2>;
using Ten3 = xt::xtensor<float, 3>;
using Ten4 = xt::xtensor<float, 4>;

using Shape = std::vector<std::size_t>;

// "(2, 6, 3)" as Python writes the tuple tensor.shape holds: "(6,)" for one axis, "()" for none.
std::string shape_str(const Shape& shape);

template <class S>
Shape to_shape(const S& s) {
  return Shape(s.begin(), s.end());
}

template <class E>
std::string shape_of(const E& t) {
  return shape_str(to_shape(t.shape()));
}

}  // namespace attn
