#include "core/attention.hpp"

#include <limits>
#include <stdexcept>

#include "core/mask.hpp"
#include "core/matmul.hpp"
#include "core/softmax.hpp"

namespace attn {

Attention scaled_dot_product_attention(const Ten4& q, const Ten4& k, const Ten4& v, bool causal) {
  if (q.shape() != k.shape() || k.shape() != v.shape())
    throw std::invalid_argument("scaled_dot_product_attention: q " + shape_of(q) + ", k " +
                                shape_of(k) + ", v " + shape_of(v) + " must share one shape");
  const std::size_t T = q.shape()[2], d_k = q.shape()[3];
  Attention a;
  a.attn_scores = matmul_bt(q, k);                // (B, h, T, d_k) @ (B, h, d_k, T) -> (B, h, T, T)
  a.scaled = scale_scores(a.attn_scores, d_k);    // (B, h, T, T)
  if (causal)  // in place: at large T each (B, h, T, T) copy costs as much as a GEMM
    masked_fill_inplace(a.scaled.data(), a.scaled.size() / (T * T), causal_mask(T),
                        -std::numeric_limits<float>::infinity());
  a.attn_weights = softmax_rows(a.scaled);        // (B, h, T, T)
  a.context = matmul(a.attn_weights, v);          // (B, h, T, T) @ (B, h, T, d_k) -> (B, h, T, d_k)
  return a;
}

}  // namespace attn
