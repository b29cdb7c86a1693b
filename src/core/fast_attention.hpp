// The fast path of the attention core, for real sizes: the context
//   context = softmax(Q @ K^T / sqrt(d_k), causal mask applied) @ V
// and nothing else. scaled_dot_product_attention (attention.hpp) keeps every T x S intermediate
// so that lessons can print them; at T = 4096 with 24 heads those are 1.6 GB each. This path
// keeps none of them, and skips the work a causal mask makes pointless:
//
//  - The work is cut into units of one (batch, query head, block of query rows). A unit computes
//    the scores of its rows against only the keys its last row may see (causal: keys 0 .. i_last,
//    about half of all scores over the whole triangle), in one sgemm with 1/sqrt(d_k) as its
//    alpha.
//  - Each row's softmax runs over its own visible keys only; masked scores are never
//    exponentiated, just set to 0. The exps stay unnormalised: the row's 1/sum multiplies its
//    d_v outputs afterwards instead of its n weights.
//  - A second sgemm multiplies those weights by the visible values, writing the unit's rows of
//    the context in place.
//  - Units go to worker threads, the most expensive (the last query blocks) first; each sgemm
//    then runs on one thread (OpenBLAS's own threads are set to 1 for the call and restored).
//  - Grouped-query attention: query head i reads key/value head i / (h / h_kv) where it lies.
//    Nothing is copied per query head, and q, k, v and the context are read and written through
//    strides, so the projections' (B, T, h * d_k) layout needs no transpose either
//    (attention_context_merged).
//
// Memory: per worker thread one (block, S) score buffer and block row sums, besides the output:
// O(threads * block * S), linear in S, against B * h * T * S floats per materialised tensor.
//
// Numbers: equal to scaled_dot_product_attention to float32 rounding, not bit for bit: the
// scale is applied as sgemm's alpha (one rounding) instead of a division, exp is a polynomial
// (relative error below 2e-7 on the range softmax uses) evaluated several rows' worth at a time,
// and the sums add in another order. tests/core/test_fast_attention.cpp states the tolerance. A row
// that holds NaN, or whose largest score is infinite, gives NaN, as softmax_rows does.
//
// Legend: B batch, h query heads, h_kv key/value heads (dividing h; h_kv = h is ordinary
// multi-head attention), T query tokens, S key tokens, d_k query/key width, d_v value width,
// rq <= block rows of one unit.
#pragma once

#include <cstddef>
#include <vector>

#include "core/tensor.hpp"

namespace attn {

// Which compiled copy of the row softmax runs (the only code here compiled per instruction set).
enum class FastAttentionIsa {
  best,      // the widest this CPU has: the first of fast_attention_isas()
  avx512,    // 16 floats at a time (AVX-512F)
  avx2,      // 8 (AVX2 with FMA)
  baseline,  // 4 (SSE2, every x86-64 CPU)
};

// The instruction sets this CPU runs, widest first; baseline is always last.
std::vector<FastAttentionIsa> fast_attention_isas();
// "AVX-512", "AVX2", "x86-64 (SSE2)"; for best, the name of the one it picks.
const char* fast_attention_isa_name(FastAttentionIsa isa);

struct FastAttentionOptions {
  std::size_t threads = 0;  // worker threads; 0: as many as OpenBLAS uses (blas_threads()).
                            // 1 runs on the caller's thread and leaves OpenBLAS's threads alone.
  std::size_t block = 0;    // query rows per unit; 0: kDefaultBlock
  FastAttentionIsa isa = FastAttentionIsa::best;  // one this CPU lacks is refused (std::invalid_argument)
};

constexpr std::size_t kDefaultBlock = 64;

// What a call did and what it held.
struct FastAttentionStats {
  std::size_t threads = 0;          // worker threads used
  std::size_t block = 0;            // query rows per unit
  std::size_t units = 0;            // (batch, query head, query block) units
  std::size_t scores_computed = 0;  // scores computed: every unit's rq x (keys its last row sees)
  std::size_t scores_full = 0;      // B * h * T * S: what the materialised path computes
  std::size_t scratch_bytes = 0;    // working memory besides the output
  std::size_t output_bytes = 0;     // the returned context
};

// Causal: query row i is position i + (S - T) of the S keys (the last T positions, as in
// gqa.hpp), so it sees keys 0 .. i + (S - T); causal needs S >= T. Throws std::invalid_argument
// naming the shapes when they do not fit, when h_kv does not divide h, or when there are no keys.

// q (B, h, T, d_k), k (B, h_kv, S, d_k), v (B, h_kv, S, d_v) -> context (B, h, T, d_v)
Ten4 attention_context(const Ten4& q, const Ten4& k, const Ten4& v, bool causal,
                       const FastAttentionOptions& options = {}, FastAttentionStats* stats = nullptr);

// Straight from the projections, no transposes: queries (B, T, h * d_k), keys (B, S, h_kv * d_k),
// values (B, S, h_kv * d_v) -> the merged context (B, T, h * d_v), ready for out_proj. Head i of
// token t is columns [i * d_k, (i + 1) * d_k) of row t, as .view(B, T, h, d_k) reads it.
Ten3 attention_context_merged(const Ten3& queries, const Ten3& keys, const Ten3& values, std::size_t h,
                              std::size_t h_kv, bool causal, const FastAttentionOptions& options = {},
                              FastAttentionStats* stats = nullptr);

}  // namespace attn
