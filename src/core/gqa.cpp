// Grouped-query attention without copying keys and values (see gqa.hpp for the why).
//
// Legend: B batch, T query tokens, S key tokens, h query heads, h_kv key/value heads,
// groups = h / h_kv, d_k head width, d_in input width, d_out output width.
#include "core/gqa.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/heads.hpp"
#include "core/matmul.hpp"
#include "core/softmax.hpp"

namespace attn {
namespace {

[[noreturn]] void refuse(const std::string& what) { throw std::invalid_argument(what); }

// c (m, n) = a (m, k) @ op(b), row-major with explicit leading dimensions (matmul.hpp's sgemm).
void gemm(const float* a, std::size_t lda, const float* b, std::size_t ldb, bool b_transposed, float* c,
          std::size_t ldc, std::size_t m, std::size_t n, std::size_t k) {
  sgemm(m, n, k, 1.0f, a, lda, b, ldb, b_transposed, 0.0f, c, ldc);
}

// (B, T, heads * d_k) -> (B, T, heads, d_k) -> (B, heads, T, d_k)
Ten4 to_heads(const Ten3& t, std::size_t heads) { return swap_token_head_axes(split_heads(t, heads)); }

}  // namespace

std::size_t kv_head_of(std::size_t head, std::size_t h, std::size_t h_kv) {
  if (h_kv == 0 || h % h_kv != 0)
    refuse("gqa: " + std::to_string(h_kv) + " key/value heads do not divide " + std::to_string(h) + " query heads");
  if (head >= h) refuse("gqa: query head " + std::to_string(head) + " of " + std::to_string(h));
  return head / (h / h_kv);
}

Attention grouped_query_attention_prefix(const Ten4& q, const Ten4& k_store, const Ten4& v_store, std::size_t S,
                                         bool causal) {
  const std::size_t B = q.shape()[0], h = q.shape()[1], T = q.shape()[2], d_k = q.shape()[3];
  const std::size_t h_kv = k_store.shape()[1], capacity = k_store.shape()[2];
  const std::string shapes = "q " + shape_of(q) + ", k " + shape_of(k_store) + ", v " + shape_of(v_store);
  if (k_store.shape() != v_store.shape()) refuse("grouped_query_attention: k and v differ: " + shapes);
  if (k_store.shape()[0] != B || k_store.shape()[3] != d_k)
    refuse("grouped_query_attention: q and k need the same batch and head width: " + shapes);
  if (h_kv == 0 || h % h_kv != 0)
    refuse("grouped_query_attention: " + std::to_string(h_kv) + " key/value heads do not divide " +
           std::to_string(h) + " query heads: " + shapes);
  if (d_k == 0) refuse("grouped_query_attention: head width 0: " + shapes);
  if (S == 0 || S > capacity)
    refuse("grouped_query_attention: " + std::to_string(S) + " keys to read from " + std::to_string(capacity) +
           " stored positions: " + shapes);
  if (causal && S < T)
    refuse("grouped_query_attention: causal needs at least as many keys as queries (the queries are the last T "
           "positions), got T " + std::to_string(T) + ", S " + std::to_string(S) + ": " + shapes);
  const std::size_t groups = h / h_kv;

  Attention a;
  a.attn_scores = xt::empty<float>({B, h, T, S});  // (B, h, T, S)
  a.context = xt::empty<float>({B, h, T, d_k});    // (B, h, T, d_k)
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t g = 0; g < h_kv; ++g) {
      // Query heads g * groups .. (g + 1) * groups - 1: one (groups * T, d_k) block of q.
      const float* q_block = q.data() + (b * h + g * groups) * T * d_k;
      const float* k_block = k_store.data() + (b * h_kv + g) * capacity * d_k;  // (S, d_k) rows of kv head g
      float* scores = a.attn_scores.data() + (b * h + g * groups) * T * S;        // (groups * T, S)
      gemm(q_block, d_k, k_block, d_k, true, scores, S, groups * T, S, d_k);     // Q_g @ K_g^T
    }

  a.scaled = scale_scores(a.attn_scores, d_k);  // (B, h, T, S)
  if (causal) {
    // Row i is position i + (S - T); it may see keys 0 .. i + (S - T), never later ones.
    const float minus_inf = -std::numeric_limits<float>::infinity();
    for (std::size_t m = 0; m < B * h; ++m)
      for (std::size_t i = 0; i < T; ++i)
        for (std::size_t j = i + (S - T) + 1; j < S; ++j) a.scaled.data()[(m * T + i) * S + j] = minus_inf;
  }
  a.attn_weights = softmax_rows(a.scaled);  // (B, h, T, S)

  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t g = 0; g < h_kv; ++g) {
      const float* weights = a.attn_weights.data() + (b * h + g * groups) * T * S;  // (groups * T, S)
      const float* v_block = v_store.data() + (b * h_kv + g) * capacity * d_k;      // (S, d_k)
      float* context = a.context.data() + (b * h + g * groups) * T * d_k;           // (groups * T, d_k)
      gemm(weights, S, v_block, d_k, false, context, d_k, groups * T, d_k, S);      // A_g @ V_g
    }
  return a;
}

Attention grouped_query_attention(const Ten4& q, const Ten4& k, const Ten4& v, bool causal) {
  return grouped_query_attention_prefix(q, k, v, k.shape()[2], causal);
}

std::size_t gqa_head_width(const GqaModel& m) {
  const std::size_t h = m.heads, h_kv = m.kv_heads;
  if (h == 0 || h_kv == 0 || h % h_kv != 0)
    refuse("gqa: " + std::to_string(h_kv) + " key/value heads do not divide " + std::to_string(h) + " query heads");
  const std::size_t q_out = m.W_query.weight.shape()[0], d_in = m.W_query.weight.shape()[1];
  if (q_out % h != 0)
    refuse("gqa: W_query " + shape_of(m.W_query.weight) + " does not split into " + std::to_string(h) + " heads");
  const std::size_t d_k = q_out / h;
  const auto kv_shape = Shape{h_kv * d_k, d_in};
  if (to_shape(m.W_key.weight.shape()) != kv_shape || to_shape(m.W_value.weight.shape()) != kv_shape)
    refuse("gqa: W_key " + shape_of(m.W_key.weight) + " and W_value " + shape_of(m.W_value.weight) + " must be " +
           shape_str(kv_shape) + " (h_kv * d_k, d_in) beside W_query " + shape_of(m.W_query.weight));
  if (m.out_proj.weight.shape()[1] != q_out)
    refuse("gqa: out_proj " + shape_of(m.out_proj.weight) + " must take h * d_k = " + std::to_string(q_out) +
           " inputs");
  if (m.rope) rope_pairs(d_k);  // refuses an odd head width
  return d_k;
}

GqaForward gqa_forward(const GqaModel& m, const Ten3& x, bool causal) {
  const std::size_t d_k = gqa_head_width(m);
  if (x.shape()[2] != m.W_query.weight.shape()[1])
    refuse("gqa_forward: x " + shape_of(x) + " does not fit W_query " + shape_of(m.W_query.weight) +
           " (out, d_in)");
  const std::size_t T = x.shape()[1];
  GqaForward f;
  f.queries = linear(m.W_query, x);             // (B, T, d_in) -> (B, T, h * d_k)
  f.keys = linear(m.W_key, x);                  // (B, T, d_in) -> (B, T, h_kv * d_k): fewer columns
  f.values = linear(m.W_value, x);              // (B, T, h_kv * d_k)
  f.q_heads = to_heads(f.queries, m.heads);     // (B, T, h * d_k) -> (B, h, T, d_k)
  f.k_heads = to_heads(f.keys, m.kv_heads);     // (B, T, h_kv * d_k) -> (B, h_kv, T, d_k)
  f.v_heads = to_heads(f.values, m.kv_heads);   // (B, h_kv, T, d_k)
  const Ten4* q = &f.q_heads;
  const Ten4* k = &f.k_heads;
  if (m.rope) {
    // Positions 0 .. T - 1; values are not rotated, position only enters through q . k.
    const RopeTables tables = rope_tables(T, d_k, m.rope_theta, 0);
    f.q_rope = apply_rope(f.q_heads, tables, m.rope_style);  // (B, h, T, d_k)
    f.k_rope = apply_rope(f.k_heads, tables, m.rope_style);  // (B, h_kv, T, d_k)
    q = &f.q_rope;
    k = &f.k_rope;
  }
  f.attn = grouped_query_attention(*q, *k, f.v_heads, causal);  // (B, h, T, T), context (B, h, T, d_k)
  f.context = merge_heads(swap_token_head_axes(f.attn.context));  // (B, h, T, d_k) -> (B, T, h * d_k)
  f.output = linear(m.out_proj, f.context);                       // (B, T, h * d_k) -> (B, T, d_out)
  return f;
}

}  // namespace attn
