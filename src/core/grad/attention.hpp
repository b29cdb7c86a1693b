// The backward pass of scaled dot-product attention (core/attention.hpp is the forward):
//   attn_scores  = Q @ K^T
//   scaled       = attn_scores / sqrt(d_k), -inf where the causal mask hides the future
//   attn_weights = softmax(scaled) by rows
//   context      = attn_weights @ V
// taken in reverse, one line per forward line:
//   d attn_weights = d context @ V^T                     (B, h, T, d_v) @ (B, h, d_v, S)
//   dV             = attn_weights^T @ d context          (B, h, S, T) @ (B, h, T, d_v)
//   d scaled       = softmax backward of attn_weights    (grad/softmax.hpp)
//   d attn_scores  = d scaled / sqrt(d_k)
//   dQ             = d attn_scores @ K                   (B, h, T, S) @ (B, h, S, d_k)
//   dK             = d attn_scores^T @ Q                 (B, h, S, T) @ (B, h, T, d_k)
// The mask needs no step of its own: a masked weight is exactly 0, so softmax's backward gives
// its score gradient 0, and nothing flows from a query to a future key.
//
// Legend: B batch, h heads, T query tokens, S key tokens (S = T here), d_k query/key width,
// d_v value width. T is float or double.
#pragma once

#include "core/tensor.hpp"

namespace attn::grad {

template <class T>
struct AttentionGrads {
  xt::xtensor<T, 4> attn_weights;  // (B, h, T, S)   dL/d attn_weights
  xt::xtensor<T, 4> scaled;        // (B, h, T, S)   dL/d scaled (after the softmax's backward)
  xt::xtensor<T, 4> attn_scores;   // (B, h, T, S)   dL/d attn_scores
  xt::xtensor<T, 4> queries;       // (B, h, T, d_k) dL/dQ
  xt::xtensor<T, 4> keys;          // (B, h, S, d_k) dL/dK
  xt::xtensor<T, 4> values;        // (B, h, S, d_v) dL/dV
};

// q (B, h, T, d_k), k (B, h, S, d_k), v (B, h, S, d_v), attn_weights (B, h, T, S) from the
// forward pass, d_context (B, h, T, d_v). Throws std::invalid_argument when they do not fit.
template <class T>
AttentionGrads<T> attention_backward(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k,
                                     const xt::xtensor<T, 4>& v, const xt::xtensor<T, 4>& attn_weights,
                                     const xt::xtensor<T, 4>& d_context);

}  // namespace attn::grad
