// The backward passes of the head split and merge (core/heads.hpp is the forward).
//
// Both are pure rearrangements: every number moves, none changes. The gradient of a
// rearrangement is the reverse rearrangement of the gradient, so
//   split:  (B, T, d_out) --view--> (B, T, h, d_k) --transpose(1, 2)--> (B, h, T, d_k)
//           backward: (B, h, T, d_k) --transpose--> (B, T, h, d_k) --view--> (B, T, d_out)
//   merge:  (B, h, T, d_k) --transpose--> (B, T, h, d_k) --view--> (B, T, d_out)
//           backward: (B, T, d_out) --view--> (B, T, h, d_k) --transpose--> (B, h, T, d_k)
// which is why split's backward is merge's forward and the other way round.
//
// Legend: B batch, T tokens, h heads, d_k = d_out / h. T is float or double.
#pragma once

#include <algorithm>
#include <stdexcept>

#include "core/tensor.hpp"

namespace attn::grad {

// dL/d(heads) (B, h, T, d_k) -> dL/d(projection) (B, T, h * d_k): the backward pass of
// split_heads followed by swap_token_head_axes.
template <class T>
xt::xtensor<T, 3> split_heads_backward(const xt::xtensor<T, 4>& d_heads) {
  const std::size_t B = d_heads.shape()[0], h = d_heads.shape()[1], Tn = d_heads.shape()[2],
                    d_k = d_heads.shape()[3];
  xt::xtensor<T, 3> d = xt::empty<T>({B, Tn, h * d_k});  // (B, T, d_out)
  // Whole d_k-wide rows move at once (element-wise indexing costs more than the products here).
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < h; ++i)
      for (std::size_t t = 0; t < Tn; ++t)
        std::copy_n(d_heads.data() + ((b * h + i) * Tn + t) * d_k, d_k, d.data() + (b * Tn + t) * h * d_k + i * d_k);
  return d;
}

// dL/d(merged) (B, T, d_out) -> dL/d(heads) (B, h, T, d_k): the backward pass of
// swap_token_head_axes followed by merge_heads. Throws unless h divides d_out.
template <class T>
xt::xtensor<T, 4> merge_heads_backward(const xt::xtensor<T, 3>& d_merged, std::size_t h) {
  const std::size_t B = d_merged.shape()[0], Tn = d_merged.shape()[1], d_out = d_merged.shape()[2];
  if (h == 0 || d_out % h != 0)
    throw std::invalid_argument("merge_heads_backward: " + std::to_string(h) + " heads do not divide d_out " +
                                std::to_string(d_out));
  const std::size_t d_k = d_out / h;
  xt::xtensor<T, 4> d = xt::empty<T>({B, h, Tn, d_k});  // (B, h, T, d_k)
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < h; ++i)
      for (std::size_t t = 0; t < Tn; ++t)
        std::copy_n(d_merged.data() + (b * Tn + t) * d_out + i * d_k, d_k, d.data() + ((b * h + i) * Tn + t) * d_k);
  return d;
}

}  // namespace attn::grad
