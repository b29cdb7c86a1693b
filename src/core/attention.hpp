// Scaled dot-product attention, every intermediate kept so lessons and tests can show it:
//   attn_scores  = Q @ K^T
//   scaled       = attn_scores / sqrt(d_k), -inf where the causal mask hides the future
//   attn_weights = softmax(scaled) by rows
//   context      = attn_weights @ V
//
// Legend: B batch, h heads, T tokens, d_k head width.
#pragma once

#include <cmath>

#include "core/tensor.hpp"

namespace attn {

struct Attention {
  Ten4 attn_scores;   // (B, h, T, T)
  Ten4 scaled;        // (B, h, T, T)
  Ten4 attn_weights;  // (B, h, T, T)
  Ten4 context;       // (B, h, T, d_k)
};

// q, k, v: (B, h, T, d_k)
Attention scaled_dot_product_attention(const Ten4& q, const Ten4& k, const Ten4& v, bool causal);

// Divide every score by sqrt(d_k), in float as PyTorch does.
template <std::size_t N>
xt::xtensor<float, N> scale_scores(const xt::xtensor<float, N>& scores, std::size_t d_k) {
  const float root = std::sqrt(static_cast<float>(d_k));
  xt::xtensor<float, N> out = scores;  // same shape
  for (float& v : out) v /= root;
  return out;
}

}  // namespace attn
