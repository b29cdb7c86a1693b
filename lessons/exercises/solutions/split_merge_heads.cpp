// Solution to split-merge-heads. The contract and a worked example are in
// ../split_merge_heads.cpp; try it there first (`attn hint split-merge-heads` helps).
//
// Shape legend: B batch, T tokens, h heads, d_k head width, d_out = h * d_k.
#include <stdexcept>
#include <string>

#include "core/tensor.hpp"

namespace exercise {

using attn::Ten3;
using attn::Ten4;

Ten4 split_heads(const Ten3& x, std::size_t h) {
  const std::size_t B = x.shape()[0], T = x.shape()[1], d_out = x.shape()[2];
  // Heads of unequal width cannot be stacked into one tensor.
  if (h == 0 || d_out % h != 0)
    throw std::invalid_argument("split_heads: " + std::to_string(h) + " heads do not divide d_out of " +
                                attn::shape_of(x));
  const std::size_t d_k = d_out / h;
  Ten4 heads = xt::empty<float>({B, h, T, d_k});  // (B, T, d_out) -> (B, h, T, d_k)
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < h; ++i)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t j = 0; j < d_k; ++j)
          heads(b, i, t, j) = x(b, t, i * d_k + j);  // head i owns columns i*d_k .. i*d_k + d_k - 1
  return heads;
}

Ten3 merge_heads(const Ten4& heads) {
  const std::size_t B = heads.shape()[0], h = heads.shape()[1], T = heads.shape()[2], d_k = heads.shape()[3];
  Ten3 x = xt::empty<float>({B, T, h * d_k});  // (B, h, T, d_k) -> (B, T, h * d_k)
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < h; ++i)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t j = 0; j < d_k; ++j) x(b, t, i * d_k + j) = heads(b, i, t, j);  // the same map, read back
  return x;
}

}  // namespace exercise
