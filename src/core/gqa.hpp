// Grouped-query attention (GQA, Ainslie et al. 2023): h query heads share h_kv key/value heads,
// `groups = h / h_kv` query heads to each. Query head i reads key/value head i / groups.
//   h_kv = h  ordinary multi-head attention (every query head has its own keys and values)
//   h_kv = 1  multi-query attention (MQA): one key/value head for all
// Why: at decoding time the KV cache, not the weights, fills memory; it shrinks by h / h_kv.
//
// PyTorch code usually copies keys and values per query head first (repeat_interleave,
// repeat_kv_heads in core/heads.hpp, kept so a lesson can show it). Here they are read in
// place instead: the `groups` query heads that share kv head g are adjacent in (B, h, T, d_k),
// so their rows form one contiguous (groups * T, d_k) block, and one GEMM against kv head g
// computes all their scores at once. No key or value is ever copied.
//
// Legend: B batch, T query tokens, S key tokens (S = T in self-attention, S = t + 1 while
// decoding), d_in input width, h query heads, h_kv key/value heads, d_k head width,
// d_out the output width.
#pragma once

#include <cstddef>

#include "core/attention.hpp"
#include "core/linear.hpp"
#include "core/rope.hpp"
#include "core/tensor.hpp"

namespace attn {

// Which key/value head query head `head` reads: head / (h / h_kv). Throws unless h_kv divides h.
std::size_t kv_head_of(std::size_t head, std::size_t h, std::size_t h_kv);

// Grouped attention on split heads, every intermediate kept (the Attention struct of
// attention.hpp, with scores (B, h, T, S) and context (B, h, T, d_k)):
//   q (B, h, T, d_k), k and v (B, h_kv, S, d_k).
// Causal masks key j for query row i when j > i + (S - T): the queries are the last T of the S
// positions, so with S = T it is the usual triangle and a single decoding query sees every key.
Attention grouped_query_attention(const Ten4& q, const Ten4& k, const Ten4& v, bool causal);

// The same over storage laid out (B, h_kv, capacity, d_k) of which only the first S positions
// are filled (a KV cache, see kv_cache.hpp): read in place, nothing is copied.
Attention grouped_query_attention_prefix(const Ten4& q, const Ten4& k_store, const Ten4& v_store, std::size_t S,
                                         bool causal);

// A GQA layer as PyTorch modules would hold it: nn.Linear weights stored (out, in).
struct GqaModel {
  Linear W_query;            // (h * d_k, d_in)
  Linear W_key;              // (h_kv * d_k, d_in)
  Linear W_value;            // (h_kv * d_k, d_in)
  Linear out_proj;           // (d_out, h * d_k)
  std::size_t heads = 1;     // h
  std::size_t kv_heads = 1;  // h_kv, divides h
  bool rope = false;         // rotate q and k heads by their positions (Llama applies it here)
  RopeStyle rope_style = RopeStyle::half;
  float rope_theta = 10000.0f;
};

// Checks that the four layers fit together and that h_kv divides h; returns d_k.
std::size_t gqa_head_width(const GqaModel& model);

// One forward pass over a whole sequence, every stage kept.
struct GqaForward {
  Ten3 queries;    // (B, T, h * d_k)
  Ten3 keys;       // (B, T, h_kv * d_k)
  Ten3 values;     // (B, T, h_kv * d_k)
  Ten4 q_heads;    // (B, h, T, d_k)
  Ten4 k_heads;    // (B, h_kv, T, d_k)
  Ten4 v_heads;    // (B, h_kv, T, d_k)
  Ten4 q_rope;     // (B, h, T, d_k) q_heads rotated; empty when the model has no RoPE
  Ten4 k_rope;     // (B, h_kv, T, d_k) k_heads rotated; empty when the model has no RoPE
  Attention attn;  // attn_scores, scaled, attn_weights (B, h, T, T); context (B, h, T, d_k)
  Ten3 context;    // (B, T, h * d_k) heads merged back
  Ten3 output;     // (B, T, d_out)
};

// x (B, T, d_in) -> every stage up to output (B, T, d_out).
GqaForward gqa_forward(const GqaModel& model, const Ten3& x, bool causal = true);

}  // namespace attn
