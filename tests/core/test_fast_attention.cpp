// The fast attention core (src/core/fast_attention.*) against the reference paths that keep
// every intermediate: scaled_dot_product_attention for h_kv = h, grouped_query_attention
// (key/value heads repeated) for grouped heads and for S != T. Causal and not, sizes that are
// and are not multiples of the query block, block 1 and blocks past T, one and several worker
// threads, the merged (B, T, h * d_k) layout, NaN rows, the work it skips and the memory it holds,
// and its refusals.
//
// Tolerance: |fast - reference| <= kRelative * max(1, max |reference|), kRelative = 4e-6. The
// context is a weighted mean of values, so its error is about the largest value times the
// weights' relative error: the scale applied as sgemm's alpha instead of a division (one rounding
// of each score, times the score's size, at most ~10 here), the polynomial exp (below 2e-7
// relative), and sums of up to S exps added in another order (a few float32 ulps).
//
// Legend: B batch, h query heads, h_kv key/value heads, T query tokens, S key tokens, d_k
// query/key width, d_v value width.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include "core/attention.hpp"
#include "core/fast_attention.hpp"
#include "core/generator.hpp"
#include "core/gqa.hpp"
#include "core/heads.hpp"
#include "core/matmul.hpp"
#include "core/softmax.hpp"
#include "support.hpp"

using attn::FastAttentionOptions;
using attn::FastAttentionStats;
using attn::Mat;
using attn::Ten3;
using attn::Ten4;
using attn::test::contains;
using attn::test::differences;
using attn::test::refusal;

namespace {

constexpr double kRelative = 4e-6;

double largest(const Ten4& t) {
  double m = 1.0;
  for (float x : t)
    if (std::isfinite(x)) m = std::fmax(m, std::fabs(x));
  return m;
}

// torch.randn(B, h, T, d) * scale, drawn row-major.
Ten4 randn4(attn::TorchGenerator& gen, std::size_t B, std::size_t h, std::size_t T, std::size_t d,
            float scale = 1.0f) {
  const Mat flat = gen.randn(B * h * T, d);  // (B*h*T, d)
  Ten4 t = xt::empty<float>({B, h, T, d});   // (B, h, T, d)
  for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = scale * flat.data()[i];
  return t;
}

FastAttentionOptions with(std::size_t threads, std::size_t block) {
  FastAttentionOptions o;
  o.threads = threads;
  o.block = block;
  return o;
}

// (B, h, T, d) -> (B, T, h * d): the merged layout the projections have.
Ten3 merged(const Ten4& heads) { return attn::merge_heads(attn::swap_token_head_axes(heads)); }

}  // namespace

TEST_CASE("attention_context equals scaled_dot_product_attention: causal and not, sizes, blocks, threads") {
  attn::TorchGenerator gen(0);
  for (std::size_t T : {1, 2, 5, 17, 63, 64, 65, 130}) {
    for (std::size_t d_k : {1, 3, 8, 64}) {
      const std::size_t B = 2, h = 3;
      const Ten4 q = randn4(gen, B, h, T, d_k, 2.0f);  // (B, h, T, d_k); x2 so that rows are peaked
      const Ten4 k = randn4(gen, B, h, T, d_k, 2.0f);  // (B, h, T, d_k)
      const Ten4 v = randn4(gen, B, h, T, d_k);        // (B, h, T, d_k)
      for (bool causal : {false, true}) {
        const Ten4 expected = attn::scaled_dot_product_attention(q, k, v, causal).context;  // (B, h, T, d_k)
        const double tol = kRelative * largest(expected);
        for (std::size_t threads : {1, 2, 3})
          for (std::size_t block : {std::size_t{1}, std::size_t{7}, std::size_t{0}, T, T + 5}) {
            INFO("T " << T << ", d_k " << d_k << ", causal " << causal << ", threads " << threads << ", block "
                      << block);
            CHECK(differences(attn::attention_context(q, k, v, causal, with(threads, block)), expected, tol) == "");
          }
      }
    }
  }
}

TEST_CASE("every compiled row softmax this CPU runs (AVX-512, AVX2, x86-64) gives the reference's context") {
  const std::vector<attn::FastAttentionIsa> isas = attn::fast_attention_isas();
  REQUIRE(!isas.empty());
  CHECK(isas.back() == attn::FastAttentionIsa::baseline);  // every x86-64 CPU runs the plain copy
  MESSAGE("this CPU runs " << isas.size() << " of the 3 copies; best: "
                           << std::string(attn::fast_attention_isa_name(attn::FastAttentionIsa::best)));
  attn::TorchGenerator gen(9);
  // Row lengths around the vector widths (4, 8, 16) and their remainders, and a long one.
  for (std::size_t T : {1, 3, 4, 5, 8, 15, 16, 17, 33, 300}) {
    const Ten4 q = randn4(gen, 1, 2, T, 16, 2.0f);  // (B, h, T, d_k)
    const Ten4 k = randn4(gen, 1, 2, T, 16, 2.0f);  // (B, h, T, d_k)
    const Ten4 v = randn4(gen, 1, 2, T, 16);        // (B, h, T, d_k)
    for (bool causal : {false, true}) {
      const Ten4 expected = attn::scaled_dot_product_attention(q, k, v, causal).context;  // (B, h, T, d_k)
      const double tol = kRelative * largest(expected);
      for (attn::FastAttentionIsa isa : isas) {
        INFO("T " << T << ", causal " << causal << ", " << std::string(attn::fast_attention_isa_name(isa)));
        FastAttentionOptions o = with(1, 0);
        o.isa = isa;
        CHECK(differences(attn::attention_context(q, k, v, causal, o), expected, tol) == "");
      }
    }
  }
  // An instruction set the CPU lacks is refused, not run (it would stop the process).
  for (attn::FastAttentionIsa isa : {attn::FastAttentionIsa::avx512, attn::FastAttentionIsa::avx2})
    if (std::find(isas.begin(), isas.end(), isa) == isas.end()) {
      FastAttentionOptions o;
      o.isa = isa;
      const Ten4 x = xt::ones<float>({std::size_t{1}, std::size_t{1}, std::size_t{2}, std::size_t{2}});  // (1, 1, 2, 2)
      CHECK_THROWS_AS(attn::attention_context(x, x, x, true, o), std::invalid_argument);
    }
}

TEST_CASE("attention_context at a real head size: T 1000 (not a multiple of the block), d_k 128") {
  attn::TorchGenerator gen(1);
  const Ten4 q = randn4(gen, 1, 2, 1000, 128);  // (B, h, T, d_k)
  const Ten4 k = randn4(gen, 1, 2, 1000, 128);  // (B, h, T, d_k)
  const Ten4 v = randn4(gen, 1, 2, 1000, 128);  // (B, h, T, d_k)
  for (bool causal : {false, true}) {
    INFO("causal " << causal);
    const Ten4 expected = attn::scaled_dot_product_attention(q, k, v, causal).context;  // (B, h, T, d_k)
    CHECK(differences(attn::attention_context(q, k, v, causal), expected, kRelative * largest(expected)) == "");
  }
}

TEST_CASE("grouped heads read in place equal attention on repeated key/value heads, S = T and S > T") {
  attn::TorchGenerator gen(2);
  const std::size_t B = 2, h = 6, d_k = 8, d_v = 8;
  for (std::size_t h_kv : {1, 2, 3, 6}) {
    for (std::size_t T : {1, 9, 70}) {
      for (std::size_t S : {T, T + 4}) {
        const Ten4 q = randn4(gen, B, h, T, d_k, 2.0f);     // (B, h, T, d_k)
        const Ten4 k = randn4(gen, B, h_kv, S, d_k, 2.0f);  // (B, h_kv, S, d_k)
        const Ten4 v = randn4(gen, B, h_kv, S, d_v);        // (B, h_kv, S, d_v)
        for (bool causal : {false, true}) {
          INFO("h_kv " << h_kv << ", T " << T << ", S " << S << ", causal " << causal);
          // The reference: keys and values repeated per query head, every intermediate kept; the
          // queries are the last T of S positions, as in the decoding prefix.
          const Ten4 expected = attn::grouped_query_attention(q, k, v, causal).context;  // (B, h, T, d_v)
          const double tol = kRelative * largest(expected);
          for (std::size_t threads : {1, 2}) {
            INFO("threads " << threads);
            CHECK(differences(attn::attention_context(q, k, v, causal, with(threads, 16)), expected, tol) == "");
          }
          // The same through the projections' layout.
          const Ten3 out = attn::attention_context_merged(merged(q), merged(k), merged(v), h, h_kv, causal);
          CHECK(differences(out, merged(expected), tol) == "");
        }
      }
    }
  }
}

TEST_CASE("d_v != d_k, and keys longer than queries without a mask (cross-attention)") {
  attn::TorchGenerator gen(3);
  const Ten4 q = randn4(gen, 1, 2, 6, 4);   // (B, h, T, d_k)
  const Ten4 k = randn4(gen, 1, 2, 11, 4);  // (B, h, S, d_k)
  const Ten4 v = randn4(gen, 1, 2, 11, 3);  // (B, h, S, d_v)
  Ten4 expected = xt::empty<float>({1, 2, 6, 3});  // (B, h, T, d_v)
  for (std::size_t head = 0; head < 2; ++head) {
    const Mat qh = xt::view(q, 0, head), kh = xt::view(k, 0, head), vh = xt::view(v, 0, head);
    const Mat w = attn::softmax_rows(attn::scale_scores(attn::matmul_bt(qh, kh), 4));  // (T, S)
    xt::view(expected, 0, head) = attn::matmul(w, vh);                                 // (T, d_v)
  }
  CHECK(differences(attn::attention_context(q, k, v, false, with(2, 4)), expected, kRelative * largest(expected)) ==
        "");
  const Ten3 out = attn::attention_context_merged(merged(q), merged(k), merged(v), 2, 2, false);  // (B, T, h * d_v)
  CHECK(out.shape()[2] == 6);
  CHECK(differences(out, merged(expected), kRelative * largest(expected)) == "");
}

TEST_CASE("softmax over long rows: far-apart and equal scores, against double precision") {
  // One query head, T = 1, S = 3000 keys: the context is one softmax-weighted mean. Scores range
  // over about +-60 (most weights underflow) in one case and are all equal in the other.
  for (float spread : {0.0f, 30.0f}) {
    attn::TorchGenerator gen(4);
    const std::size_t S = 3000, d = 4;
    Ten4 q = randn4(gen, 1, 1, 1, d, spread);  // (B, h, T, d_k)
    const Ten4 k = randn4(gen, 1, 1, S, d);    // (B, h, S, d_k)
    const Ten4 v = randn4(gen, 1, 1, S, d);    // (B, h, S, d_v)
    std::vector<double> s(S);
    double m = -INFINITY;
    for (std::size_t j = 0; j < S; ++j) {
      double dot = 0.0;
      for (std::size_t c = 0; c < d; ++c) dot += static_cast<double>(q(0, 0, 0, c)) * k(0, 0, j, c);
      s[j] = dot / 2.0;  // sqrt(d_k) = 2
      m = std::fmax(m, s[j]);
    }
    double sum = 0.0;
    std::vector<double> out(d, 0.0);
    for (std::size_t j = 0; j < S; ++j) {
      const double e = std::exp(s[j] - m);
      sum += e;
      for (std::size_t c = 0; c < d; ++c) out[c] += e * v(0, 0, j, c);
    }
    const Ten4 fast = attn::attention_context(q, k, v, false);  // (1, 1, 1, d)
    for (std::size_t c = 0; c < d; ++c) {
      INFO("spread " << spread << ", column " << c);
      CHECK(fast(0, 0, 0, c) == doctest::Approx(out[c] / sum).epsilon(1e-5).scale(1.0));
    }
  }
}

TEST_CASE("NaN in, NaN out where the reference has it, and a causal row never sees a later NaN key") {
  attn::TorchGenerator gen(5);
  Ten4 q = randn4(gen, 1, 1, 8, 4);  // (B, h, T, d_k)
  Ten4 k = randn4(gen, 1, 1, 8, 4);  // (B, h, T, d_k)
  const Ten4 v = randn4(gen, 1, 1, 8, 4);  // (B, h, T, d_k)
  k(0, 0, 5, 2) = std::numeric_limits<float>::quiet_NaN();  // key 5
  q(0, 0, 2, 0) = std::numeric_limits<float>::infinity();   // query 2: scores inf or NaN
  for (bool causal : {false, true}) {
    INFO("causal " << causal);
    const Ten4 expected = attn::scaled_dot_product_attention(q, k, v, causal).context;  // (B, h, T, d_k)
    const Ten4 fast = attn::attention_context(q, k, v, causal, with(2, 3));             // (B, h, T, d_k)
    CHECK(differences(fast, expected, kRelative * largest(expected)) == "");
    for (std::size_t i = 0; i < 8; ++i) {
      INFO("row " << i);
      // Row 2 is NaN either way; otherwise only rows that see key 5.
      CHECK(std::isnan(fast(0, 0, i, 0)) == (i == 2 || !causal || i >= 5));
    }
  }
}

TEST_CASE("causal work: about half the scores, and memory linear in S, never T x S") {
  attn::TorchGenerator gen(6);
  const std::size_t T = 256, d_k = 8, block = 64;
  const Ten4 q = randn4(gen, 1, 2, T, d_k);  // (B, h, T, d_k)
  FastAttentionStats st;
  attn::attention_context(q, q, q, true, with(2, block), &st);
  CHECK(st.threads == 2);
  CHECK(st.block == block);
  CHECK(st.units == 2 * 4);  // 2 heads x 4 blocks
  // Block b (rows 64b .. 64b + 63) scores its 64 rows against the 64 (b + 1) keys its last row sees.
  CHECK(st.scores_computed == 2 * 64 * (64 + 128 + 192 + 256));
  CHECK(st.scores_full == 2 * T * T);
  CHECK(static_cast<double>(st.scores_computed) / st.scores_full == doctest::Approx(0.5 + 0.5 * block / T));
  // One (block, S) score buffer and block row sums per thread.
  CHECK(st.scratch_bytes == 2 * (block * T + block) * sizeof(float));
  CHECK(st.output_bytes == 2 * T * d_k * sizeof(float));
  // Not causal: every score, the same buffers.
  attn::attention_context(q, q, q, false, with(2, block), &st);
  CHECK(st.scores_computed == st.scores_full);
  // Doubling T doubles the scratch, where the materialised path would quadruple.
  const Ten4 q2 = randn4(gen, 1, 2, 2 * T, d_k);  // (B, h, 2T, d_k)
  FastAttentionStats st2;
  attn::attention_context(q2, q2, q2, true, with(2, block), &st2);
  CHECK(st2.scratch_bytes == 2 * (block * 2 * T + block) * sizeof(float));
  // More threads than units: one thread per unit at most.
  const Ten4 tiny = randn4(gen, 1, 1, 3, d_k);  // (B, h, T, d_k): one unit
  attn::attention_context(tiny, tiny, tiny, true, with(4, block), &st);
  CHECK(st.threads == 1);
}

TEST_CASE("worker threads leave OpenBLAS's own thread count as they found it") {
  attn::TorchGenerator gen(7);
  const Ten4 q = randn4(gen, 1, 4, 200, 16);  // (B, h, T, d_k)
  const std::size_t before = attn::blas_threads();
  attn::attention_context(q, q, q, true, with(3, 32));
  CHECK(attn::blas_threads() == before);
  {
    const attn::BlasThreadsScope one(1);
    CHECK(attn::blas_threads() == 1);
  }
  CHECK(attn::blas_threads() == before);
  CHECK(contains(attn::blas_description(), "threads"));
}

TEST_CASE("refusals name the shapes") {
  const Ten4 q = xt::zeros<float>({1, 6, 5, 4});  // (B, h, T, d_k)
  const Ten4 k4 = xt::zeros<float>({1, 4, 5, 4});
  CHECK(contains(refusal([&] { attn::attention_context(q, k4, k4, true); }), "4 key/value heads do not divide 6"));
  const Ten4 few = xt::zeros<float>({1, 2, 3, 4});  // S 3 < T 5
  CHECK(contains(refusal([&] { attn::attention_context(q, few, few, true); }), "at least as many keys"));
  CHECK(refusal([&] { attn::attention_context(q, few, few, false); }) == "");  // cross-attention is fine
  const Ten4 none = xt::zeros<float>({1, 2, 0, 4});
  CHECK(contains(refusal([&] { attn::attention_context(q, none, none, false); }), "no keys"));
  const Ten4 wide = xt::zeros<float>({1, 2, 5, 3});  // d_k 3 vs 4
  const std::string why = refusal([&] { attn::attention_context(q, wide, wide, false); });
  CHECK(contains(why, "do not fit"));
  CHECK(contains(why, "(1, 2, 5, 3)"));
  const Ten3 x = xt::zeros<float>({1, 5, 24});  // (B, T, h * d_k)
  CHECK(contains(refusal([&] { attn::attention_context_merged(x, x, x, 5, 5, true); }), "do not divide"));
  const Ten3 k16 = xt::zeros<float>({1, 5, 16});  // 4 key/value heads of d_k 4
  CHECK(contains(refusal([&] { attn::attention_context_merged(x, k16, k16, 6, 4, true); }),
                 "4 key/value heads do not divide 6"));
  const Ten3 kv = xt::zeros<float>({1, 5, 12});  // h_kv 2 of width 6, not d_k 4
  CHECK(contains(refusal([&] { attn::attention_context_merged(x, kv, kv, 6, 2, true); }), "do not fit"));
}
