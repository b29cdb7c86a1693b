// The KV cache: decoding one token at a time without recomputing the past.
//
// A causal model's keys and values for tokens 0 .. t - 1 never change when token t arrives
// (the mask keeps them from seeing it), so they are computed once, stored, and each step only
// projects the new token, appends its key and value, and lets its one query attend to all
// t + 1 stored positions. The step's output equals row t of the full causal computation.
// The price is memory: 2 (K and V) * layers * h_kv * d_k numbers per token, which is why GQA
// shares key/value heads.
//
// Legend: B batch, t tokens already cached (the new token's position), d_in input width,
// h query heads, h_kv key/value heads, d_k head width, d_out output width.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/gqa.hpp"
#include "core/tensor.hpp"

namespace attn {

// Storage for keys and values, (B, h_kv, capacity, d_k), of which positions 0 .. length - 1 are
// filled. When it is full the capacity doubles (one reallocation and copy, counted in
// `growths`), so appending T tokens one at a time reallocates about log2(T) times, not T.
struct KvCache {
  Ten4 k_store;             // (B, h_kv, capacity, d_k)
  Ten4 v_store;             // (B, h_kv, capacity, d_k)
  std::size_t length = 0;   // t: positions filled
  std::size_t growths = 0;  // reallocations so far

  std::size_t capacity() const { return k_store.shape()[2]; }
  // (B, h_kv, t, d_k): the cache as a lesson prints it (PyTorch's past_key_value shape).
  Shape shape() const;
  Ten4 keys() const;    // (B, h_kv, t, d_k), a copy of the filled positions
  Ten4 values() const;  // (B, h_kv, t, d_k)
};

// An empty cache with room for `capacity` positions (at least 1). Throws on a zero size.
KvCache make_kv_cache(std::size_t B, std::size_t kv_heads, std::size_t d_k, std::size_t capacity = 16);

// Appends n positions: k_new and v_new (B, h_kv, n, d_k). Grows (doubling) when full.
void kv_cache_append(KvCache& cache, const Ten4& k_new, const Ten4& v_new);

// One decoding step, every stage kept.
struct DecodeStep {
  std::size_t position = 0;   // t: where the new token sits (the cache's length before the step)
  Ten3 query;                 // (B, 1, h * d_k)
  Ten3 key;                   // (B, 1, h_kv * d_k)
  Ten3 value;                 // (B, 1, h_kv * d_k)
  Ten4 q_heads;               // (B, h, 1, d_k), rotated to position t when the model has RoPE
  Ten4 k_new;                 // (B, h_kv, 1, d_k), rotated likewise: the cache stores rotated keys
  Ten4 v_new;                 // (B, h_kv, 1, d_k)
  Attention attn;             // scores, scaled, attn_weights (B, h, 1, t + 1); context (B, h, 1, d_k)
  Ten3 context;               // (B, 1, h * d_k)
  Ten3 output;                // (B, 1, d_out): row t of the full computation
  Shape cache_shape;          // (B, h_kv, t + 1, d_k) after the step
  std::size_t capacity = 0;   // the cache's capacity after the step
};

// x_t (B, 1, d_in): the new token. Appends its key and value to `cache` (whose h_kv and d_k
// must be the model's) and returns its output row.
DecodeStep decode_step(const GqaModel& model, KvCache& cache, const Ten3& x_t);

// Decodes x (B, T, d_in) token by token from an empty cache: (B, T, d_out), equal to
// gqa_forward(model, x, true).output up to float rounding. The cache is left holding all T.
Ten3 decode_sequence(const GqaModel& model, const Ten3& x, KvCache& cache);

// ---- Cost, counted not timed ----

struct AttentionDims {
  std::size_t d_in = 0, heads = 0, kv_heads = 0, d_k = 0, d_out = 0;
};

// Multiply-adds for the step that produces token t's output (0-based: it attends t + 1 keys).
//   cached:   project the new token only (q, k, v and out_proj: one row each), then one query
//             row of scores (h * (t + 1) * d_k) and of context (h * (t + 1) * d_k).
//   uncached: run the whole causal forward again on t + 1 tokens: every projection for every
//             row, and the full (t + 1) x (t + 1) score and context products per head (a dense
//             GEMM multiplies the masked half too).
struct StepCost {
  std::uint64_t projections = 0;
  std::uint64_t scores = 0;
  std::uint64_t context = 0;
  std::uint64_t total() const { return projections + scores + context; }
};
StepCost decode_step_cost(const AttentionDims& dims, std::size_t t, bool cached);

// Sum of decode_step_cost over steps 0 .. T - 1.
StepCost generation_cost(const AttentionDims& dims, std::size_t T, bool cached);

// Bytes the cache adds per token: 2 (K and V) * layers * kv_heads * d_k * dtype_bytes.
// Llama-3.2-3B: 2 * 28 * 8 * 128 * 2 (bf16) = 114,688. Throws on a zero argument or overflow.
std::uint64_t kv_cache_bytes_per_token(std::uint64_t layers, std::uint64_t kv_heads, std::uint64_t d_k,
                                       std::uint64_t dtype_bytes);

// The whole cache: bytes_per_token * tokens * batch. Throws on overflow.
std::uint64_t kv_cache_bytes(std::uint64_t bytes_per_token, std::uint64_t tokens, std::uint64_t batch = 1);

}  // namespace attn
