// KV cache storage, the decoding step, and the counts a lesson prints (see kv_cache.hpp).
//
// Legend: B batch, t cached positions, n new positions, h query heads, h_kv key/value heads,
// d_k head width, d_in input width, d_out output width.
#include "core/kv_cache.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/heads.hpp"
#include "core/rope.hpp"

namespace attn {
namespace {

[[noreturn]] void refuse(const std::string& what) { throw std::invalid_argument(what); }

std::uint64_t mul(std::uint64_t a, std::uint64_t b, const char* op) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) refuse(std::string(op) + ": the count overflows 64 bits");
  return r;
}

// The first `length` positions of a (B, h_kv, capacity, d_k) store: (B, h_kv, length, d_k).
Ten4 filled(const Ten4& store, std::size_t length) {
  const std::size_t B = store.shape()[0], kv = store.shape()[1], cap = store.shape()[2], d_k = store.shape()[3];
  Ten4 out = xt::empty<float>({B, kv, length, d_k});  // (B, h_kv, t, d_k)
  for (std::size_t m = 0; m < B * kv; ++m)
    std::copy_n(store.data() + m * cap * d_k, length * d_k, out.data() + m * length * d_k);
  return out;
}

// Moves the filled positions into a store of `capacity` positions: (B, h_kv, capacity, d_k).
Ten4 regrow(const Ten4& store, std::size_t length, std::size_t capacity) {
  const std::size_t B = store.shape()[0], kv = store.shape()[1], cap = store.shape()[2], d_k = store.shape()[3];
  Ten4 out = xt::zeros<float>({B, kv, capacity, d_k});  // (B, h_kv, capacity, d_k)
  for (std::size_t m = 0; m < B * kv; ++m)
    std::copy_n(store.data() + m * cap * d_k, length * d_k, out.data() + m * capacity * d_k);
  return out;
}

// (B, 1, heads * d_k) -> (B, heads, 1, d_k): with one token the transpose moves nothing.
Ten4 to_heads(const Ten3& t, std::size_t heads) { return swap_token_head_axes(split_heads(t, heads)); }

}  // namespace

Shape KvCache::shape() const {
  return {k_store.shape()[0], k_store.shape()[1], length, k_store.shape()[3]};
}
Ten4 KvCache::keys() const { return filled(k_store, length); }
Ten4 KvCache::values() const { return filled(v_store, length); }

KvCache make_kv_cache(std::size_t B, std::size_t kv_heads, std::size_t d_k, std::size_t capacity) {
  if (B == 0 || kv_heads == 0 || d_k == 0 || capacity == 0)
    refuse("make_kv_cache: every size must be positive, got (B, h_kv, capacity, d_k) = (" + std::to_string(B) +
           ", " + std::to_string(kv_heads) + ", " + std::to_string(capacity) + ", " + std::to_string(d_k) + ")");
  KvCache c;
  c.k_store = xt::zeros<float>({B, kv_heads, capacity, d_k});  // (B, h_kv, capacity, d_k)
  c.v_store = xt::zeros<float>({B, kv_heads, capacity, d_k});  // (B, h_kv, capacity, d_k)
  return c;
}

void kv_cache_append(KvCache& cache, const Ten4& k_new, const Ten4& v_new) {
  const std::size_t B = cache.k_store.shape()[0], kv = cache.k_store.shape()[1], d_k = cache.k_store.shape()[3];
  const std::size_t n = k_new.shape()[2];
  if (k_new.shape() != v_new.shape() || k_new.shape()[0] != B || k_new.shape()[1] != kv || k_new.shape()[3] != d_k)
    refuse("kv_cache_append: k_new " + shape_of(k_new) + " and v_new " + shape_of(v_new) +
           " must both be (B, h_kv, n, d_k) for a cache " + shape_str(cache.shape()));
  if (cache.length + n > cache.capacity()) {
    // Doubling: each position is copied O(1) times on average, however long the sequence.
    std::size_t capacity = cache.capacity();
    while (capacity < cache.length + n) capacity *= 2;
    cache.k_store = regrow(cache.k_store, cache.length, capacity);  // (B, h_kv, capacity, d_k)
    cache.v_store = regrow(cache.v_store, cache.length, capacity);  // (B, h_kv, capacity, d_k)
    ++cache.growths;
  }
  const std::size_t cap = cache.capacity();
  for (std::size_t m = 0; m < B * kv; ++m) {
    std::copy_n(k_new.data() + m * n * d_k, n * d_k, cache.k_store.data() + (m * cap + cache.length) * d_k);
    std::copy_n(v_new.data() + m * n * d_k, n * d_k, cache.v_store.data() + (m * cap + cache.length) * d_k);
  }
  cache.length += n;
}

DecodeStep decode_step(const GqaModel& m, KvCache& cache, const Ten3& x_t) {
  const std::size_t d_k = gqa_head_width(m);
  if (x_t.shape()[1] != 1 || x_t.shape()[2] != m.W_query.weight.shape()[1])
    refuse("decode_step: x_t " + shape_of(x_t) + " must be one token (B, 1, d_in) for W_query " +
           shape_of(m.W_query.weight));
  if (cache.k_store.shape()[0] != x_t.shape()[0] || cache.k_store.shape()[1] != m.kv_heads ||
      cache.k_store.shape()[3] != d_k)
    refuse("decode_step: the cache " + shape_str(cache.shape()) + " does not hold (B, h_kv, t, d_k) for x_t " +
           shape_of(x_t) + ", " + std::to_string(m.kv_heads) + " kv heads of width " + std::to_string(d_k));
  DecodeStep s;
  s.position = cache.length;
  s.query = linear(m.W_query, x_t);          // (B, 1, d_in) -> (B, 1, h * d_k)
  s.key = linear(m.W_key, x_t);              // (B, 1, d_in) -> (B, 1, h_kv * d_k)
  s.value = linear(m.W_value, x_t);          // (B, 1, h_kv * d_k)
  s.q_heads = to_heads(s.query, m.heads);    // (B, 1, h * d_k) -> (B, h, 1, d_k)
  s.k_new = to_heads(s.key, m.kv_heads);     // (B, 1, h_kv * d_k) -> (B, h_kv, 1, d_k)
  s.v_new = to_heads(s.value, m.kv_heads);   // (B, h_kv, 1, d_k)
  if (m.rope) {
    // The token's real position is t, not 0: the offset is what makes cached RoPE correct.
    const RopeTables tables = rope_tables(1, d_k, m.rope_theta, s.position);
    s.q_heads = apply_rope(s.q_heads, tables, m.rope_style);  // (B, h, 1, d_k)
    s.k_new = apply_rope(s.k_new, tables, m.rope_style);      // (B, h_kv, 1, d_k)
  }
  kv_cache_append(cache, s.k_new, s.v_new);  // cache (B, h_kv, t, d_k) -> (B, h_kv, t + 1, d_k)
  // One query, the last of t + 1 positions: the causal mask hides nothing (no future is cached).
  s.attn = grouped_query_attention_prefix(s.q_heads, cache.k_store, cache.v_store, cache.length, true);
  s.context = merge_heads(swap_token_head_axes(s.attn.context));  // (B, h, 1, d_k) -> (B, 1, h * d_k)
  s.output = linear(m.out_proj, s.context);                        // (B, 1, h * d_k) -> (B, 1, d_out)
  s.cache_shape = cache.shape();
  s.capacity = cache.capacity();
  return s;
}

Ten3 decode_sequence(const GqaModel& m, const Ten3& x, KvCache& cache) {
  const std::size_t B = x.shape()[0], T = x.shape()[1], d_in = x.shape()[2];
  const std::size_t d_out = m.out_proj.weight.shape()[0];
  Ten3 out = xt::empty<float>({B, T, d_out});  // (B, T, d_out)
  Ten3 x_t = xt::empty<float>({B, std::size_t{1}, d_in});  // (B, 1, d_in)
  for (std::size_t t = 0; t < T; ++t) {
    for (std::size_t b = 0; b < B; ++b) std::copy_n(x.data() + (b * T + t) * d_in, d_in, x_t.data() + b * d_in);
    const DecodeStep s = decode_step(m, cache, x_t);
    for (std::size_t b = 0; b < B; ++b)
      std::copy_n(s.output.data() + b * d_out, d_out, out.data() + (b * T + t) * d_out);
  }
  return out;
}

StepCost decode_step_cost(const AttentionDims& d, std::size_t t, bool cached) {
  if (d.d_in == 0 || d.heads == 0 || d.kv_heads == 0 || d.d_k == 0 || d.d_out == 0 || d.heads % d.kv_heads != 0)
    refuse("decode_step_cost: sizes must be positive and h_kv must divide h, got d_in " + std::to_string(d.d_in) +
           ", h " + std::to_string(d.heads) + ", h_kv " + std::to_string(d.kv_heads) + ", d_k " +
           std::to_string(d.d_k) + ", d_out " + std::to_string(d.d_out));
  const char* op = "decode_step_cost";
  const std::uint64_t keys = static_cast<std::uint64_t>(t) + 1;  // positions 0 .. t
  const std::uint64_t rows = cached ? 1 : keys;                  // query rows computed this step
  // Per row: q (d_in * h * d_k), k and v (2 * d_in * h_kv * d_k), out_proj (h * d_k * d_out).
  const std::uint64_t per_row = mul(d.d_in, mul(d.heads, d.d_k, op), op) +
                                mul(2 * d.d_in, mul(d.kv_heads, d.d_k, op), op) +
                                mul(mul(d.heads, d.d_k, op), d.d_out, op);
  StepCost c;
  c.projections = mul(rows, per_row, op);
  c.scores = mul(mul(d.heads, rows, op), mul(keys, d.d_k, op), op);   // h * rows * (t + 1) * d_k
  c.context = mul(mul(d.heads, rows, op), mul(keys, d.d_k, op), op);  // h * rows * (t + 1) * d_k
  return c;
}

StepCost generation_cost(const AttentionDims& d, std::size_t T, bool cached) {
  StepCost sum;
  for (std::size_t t = 0; t < T; ++t) {
    const StepCost c = decode_step_cost(d, t, cached);
    sum.projections += c.projections;
    sum.scores += c.scores;
    sum.context += c.context;
  }
  return sum;
}

std::uint64_t kv_cache_bytes_per_token(std::uint64_t layers, std::uint64_t kv_heads, std::uint64_t d_k,
                                       std::uint64_t dtype_bytes) {
  if (layers == 0 || kv_heads == 0 || d_k == 0 || dtype_bytes == 0)
    refuse("kv_cache_bytes_per_token: every size must be positive, got layers " + std::to_string(layers) +
           ", kv_heads " + std::to_string(kv_heads) + ", d_k " + std::to_string(d_k) + ", dtype_bytes " +
           std::to_string(dtype_bytes));
  const char* op = "kv_cache_bytes_per_token";
  return mul(2, mul(mul(layers, kv_heads, op), mul(d_k, dtype_bytes, op), op), op);  // K and V
}

std::uint64_t kv_cache_bytes(std::uint64_t bytes_per_token, std::uint64_t tokens, std::uint64_t batch) {
  return mul(mul(bytes_per_token, tokens, "kv_cache_bytes"), batch, "kv_cache_bytes");
}

}  // namespace attn
