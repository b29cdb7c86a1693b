// Solution to repeat-kv. The contract and a worked example are in ../repeat_kv.cpp; try it there
// first (`attn hint repeat-kv` helps).
//
// Shape legend: B batch, h_kv key/value heads, h query heads, groups = h / h_kv, T tokens,
// d_k head width.
#include <stdexcept>
#include <string>

#include "core/tensor.hpp"

namespace exercise {

using attn::Ten4;

Ten4 repeat_kv(const Ten4& kv, std::size_t h) {
  const std::size_t B = kv.shape()[0], h_kv = kv.shape()[1], T = kv.shape()[2], d_k = kv.shape()[3];
  if (h == 0 || h_kv == 0 || h % h_kv != 0)
    throw std::invalid_argument("repeat_kv: " + std::to_string(h_kv) + " kv heads do not divide " + std::to_string(h) +
                                " query heads");
  const std::size_t groups = h / h_kv;
  Ten4 out = xt::empty<float>({B, h, T, d_k});  // (B, h, T, d_k)
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < h; ++i)  // query head i reads kv head i / groups: neighbours share one
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t j = 0; j < d_k; ++j) out(b, i, t, j) = kv(b, i / groups, t, j);
  return out;
}

}  // namespace exercise
