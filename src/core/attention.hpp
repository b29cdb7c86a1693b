// Scaled dot-product attention, forward and backward, every intermediate kept so lessons and
// tests can show it. Forward:
//   attn_scores  = Q @ K^T
//   scaled       = attn_scores / sqrt(d_k), -inf where the causal mask hides the future
//   attn_weights = softmax(scaled) by rows
//   context      = attn_weights @ V
// Backward, one line per forward line, in reverse:
//   d attn_weights = d context @ V^T                     (B, h, T, d_v) @ (B, h, d_v, S)
//   dV             = attn_weights^T @ d context          (B, h, S, T) @ (B, h, T, d_v)
//   d scaled       = softmax backward of attn_weights    (core/softmax.hpp)
//   d attn_scores  = d scaled / sqrt(d_k)
//   dQ             = d attn_scores @ K                   (B, h, T, S) @ (B, h, S, d_k)
//   dK             = d attn_scores^T @ Q                 (B, h, S, T) @ (B, h, T, d_k)
// The mask needs no step of its own: a masked weight is exactly 0, so softmax's backward gives
// its score gradient 0, and nothing flows from a query to a future key.
//
// T is float or double (attention.cpp instantiates both). In float the products are core/matmul's
// sgemm calls, the ones the lessons have always made; in double, core/gemm's dgemm (training).
//
// Legend: B batch, h heads, T query tokens, S key tokens (S = T in self-attention), d_k
// query/key width, d_v value width (d_v = d_k in the forward pass).
#pragma once

#include <cmath>

#include "core/tensor.hpp"

namespace attn {

template <class T>
struct AttentionT {
  xt::xtensor<T, 4> attn_scores;   // (B, h, T, T)
  xt::xtensor<T, 4> scaled;        // (B, h, T, T)
  xt::xtensor<T, 4> attn_weights;  // (B, h, T, T)
  xt::xtensor<T, 4> context;       // (B, h, T, d_k)
};
using Attention = AttentionT<float>;

// q, k, v: (B, h, T, d_k), one shape. Throws std::invalid_argument otherwise.
template <class T>
AttentionT<T> scaled_dot_product_attention(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k,
                                           const xt::xtensor<T, 4>& v, bool causal);

// The same into four tensors the caller keeps, each resized only when its shape changes (a
// training step allocates nothing): the way llm.c's attention_forward writes preatt, att and out.
template <class T>
void scaled_dot_product_attention(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k, const xt::xtensor<T, 4>& v,
                                  bool causal, xt::xtensor<T, 4>& attn_scores, xt::xtensor<T, 4>& scaled,
                                  xt::xtensor<T, 4>& attn_weights, xt::xtensor<T, 4>& context);

// Divide every score by sqrt(d_k), in the scores' type (float as PyTorch does).
template <class T, std::size_t N>
xt::xtensor<T, N> scale_scores(const xt::xtensor<T, N>& scores, std::size_t d_k) {
  const T root = std::sqrt(static_cast<T>(d_k));
  xt::xtensor<T, N> out = scores;  // same shape
  for (T& v : out) v /= root;
  return out;
}

}  // namespace attn

// The backward pass lives in namespace attn::grad, beside its forward pass.
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

// The same into g, whose six tensors keep their memory when they already have their shapes (a
// training step allocates nothing).
template <class T>
void attention_backward(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k, const xt::xtensor<T, 4>& v,
                        const xt::xtensor<T, 4>& attn_weights, const xt::xtensor<T, 4>& d_context,
                        AttentionGrads<T>& g);

}  // namespace attn::grad
