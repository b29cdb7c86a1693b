// Grouped-query attention and the KV cache against PyTorch 1.13 (the `gqa` case of
// tests/data/modern_cases.json: 4 query heads sharing 2 key/value heads, causal, no biases),
// and the claims the lessons make: GQA with h_kv = h is multi-head attention, with h_kv = 1 it is
// multi-query attention, decoding with a cache gives the full computation's rows, the cost and
// memory counts.
//
// Legend: B batch, T tokens, d_in input width, h query heads, h_kv key/value heads, d_k head
// width, d_out output width.
#include <doctest/doctest.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/attention.hpp"
#include "core/generator.hpp"
#include "core/gqa.hpp"
#include "core/heads.hpp"
#include "core/kv_cache.hpp"
#include "core/linear.hpp"
#include "support.hpp"

using attn::GqaModel;
using attn::Linear;
using attn::Mat;
using attn::Shape;
using attn::Ten3;
using attn::Ten4;
using attn::test::differences;
using attn::test::contains;
using attn::test::load_fixture;
using attn::test::random_heads;
using attn::test::refusal;

namespace {

template <std::size_t N>
xt::xtensor<float, N> gqa_fixture(const std::string& tensor) {
  return load_fixture<N>("gqa__" + tensor + ".npy");
}

Linear no_bias(const Mat& weight) {
  Linear l;
  l.weight = weight;  // (out, in)
  return l;
}

// The fixture's model: d_in 8, h 4, h_kv 2, d_k 2, out_proj (8, 8), no biases.
GqaModel fixture_model() {
  GqaModel m;
  m.W_query = no_bias(gqa_fixture<2>("W_query_weight"));    // (8, 8)
  m.W_key = no_bias(gqa_fixture<2>("W_key_weight"));        // (4, 8)
  m.W_value = no_bias(gqa_fixture<2>("W_value_weight"));    // (4, 8)
  m.out_proj = no_bias(gqa_fixture<2>("out_proj_weight"));  // (8, 8)
  m.heads = 4;
  m.kv_heads = 2;
  return m;
}

// nn.Linear-initialised layers from a seed, in the order W_query, W_key, W_value, out_proj.
GqaModel seeded_model(std::uint64_t seed, std::size_t d_in, std::size_t h, std::size_t h_kv, std::size_t d_k,
                      bool bias) {
  attn::TorchGenerator g(seed);
  GqaModel m;
  m.W_query = attn::make_linear(g, d_in, h * d_k, bias);
  m.W_key = attn::make_linear(g, d_in, h_kv * d_k, bias);
  m.W_value = attn::make_linear(g, d_in, h_kv * d_k, bias);
  m.out_proj = attn::make_linear(g, h * d_k, d_in, true);
  m.heads = h;
  m.kv_heads = h_kv;
  return m;
}


// Row t of (B, T, d): (B, 1, d).
Ten3 position_row(const Ten3& x, std::size_t t) {
  const std::size_t B = x.shape()[0], T = x.shape()[1], d = x.shape()[2];
  Ten3 r = xt::empty<float>({B, std::size_t{1}, d});  // (B, 1, d)
  for (std::size_t b = 0; b < B; ++b) std::copy_n(x.data() + (b * T + t) * d, d, r.data() + b * d);
  return r;
}

}  // namespace

TEST_CASE("gqa_forward gives every one of PyTorch's intermediates") {
  const GqaModel m = fixture_model();
  CHECK(attn::gqa_head_width(m) == 2);
  const attn::GqaForward f = attn::gqa_forward(m, gqa_fixture<3>("x"), true);
  CHECK(differences(f.q_heads, gqa_fixture<4>("q_heads")) == "");  // (1, 4, 5, 2)
  CHECK(differences(f.k_heads, gqa_fixture<4>("k_heads")) == "");  // (1, 2, 5, 2)
  CHECK(differences(f.v_heads, gqa_fixture<4>("v_heads")) == "");  // (1, 2, 5, 2)
  CHECK(differences(f.attn.attn_weights, gqa_fixture<4>("attn_weights")) == "");  // (1, 4, 5, 5)
  CHECK(differences(f.context, gqa_fixture<3>("context")) == "");  // (1, 5, 8)
  CHECK(differences(f.output, gqa_fixture<3>("output")) == "");    // (1, 5, 8)
  CHECK(f.q_rope.size() == 0);  // no RoPE in this model
  // The copy PyTorch makes, for the lesson to show: repeat_interleave over the head axis. Copying
  // PyTorch's own k_heads moves numbers only, so it is exact; ours differ by BLAS rounding.
  CHECK(differences(attn::repeat_kv_heads(gqa_fixture<4>("k_heads"), 2), gqa_fixture<4>("k_repeated"), 0.0) == "");
  CHECK(differences(attn::repeat_kv_heads(f.k_heads, 2), gqa_fixture<4>("k_repeated")) == "");
}

TEST_CASE("seeds alone rebuild the gqa case") {
  // modern_cases.json: torch.manual_seed(8); x = rand(1, 5, 8); torch.manual_seed(9); then
  // nn.Linear(bias=False) W_query (8 -> 8), W_key (8 -> 4), W_value (8 -> 4), out_proj (8 -> 8).
  const Ten3 x = attn::TorchGenerator(8).rand(1, 5, 8);  // (B, T, d_in)
  attn::TorchGenerator g(9);
  GqaModel m;
  m.W_query = attn::make_linear(g, 8, 8, false);
  m.W_key = attn::make_linear(g, 8, 4, false);
  m.W_value = attn::make_linear(g, 8, 4, false);
  m.out_proj = attn::make_linear(g, 8, 8, false);
  m.heads = 4;
  m.kv_heads = 2;
  CHECK(differences(x, gqa_fixture<3>("x")) == "");
  CHECK(differences(m.W_value.weight, gqa_fixture<2>("W_value_weight")) == "");
  CHECK(differences(m.out_proj.weight, gqa_fixture<2>("out_proj_weight")) == "");
  CHECK(differences(attn::gqa_forward(m, x).output, gqa_fixture<3>("output")) == "");
}

TEST_CASE("grouped attention reading shared heads in place equals attention on repeated copies") {
  const std::size_t B = 2, T = 6, d_k = 4;
  for (const std::size_t h_kv : {1u, 2u, 3u, 6u})
    for (const bool causal : {true, false}) {
      INFO("h_kv ", h_kv, " causal ", causal);
      const Ten4 q = random_heads(1, B, 6, T, d_k);      // (B, h, T, d_k)
      const Ten4 k = random_heads(2, B, h_kv, T, d_k);   // (B, h_kv, T, d_k)
      const Ten4 v = random_heads(3, B, h_kv, T, d_k);   // (B, h_kv, T, d_k)
      const attn::Attention g = attn::grouped_query_attention(q, k, v, causal);
      const attn::Attention r = attn::scaled_dot_product_attention(q, attn::repeat_kv_heads(k, 6 / h_kv),
                                                                   attn::repeat_kv_heads(v, 6 / h_kv), causal);
      CHECK(differences(g.attn_scores, r.attn_scores) == "");   // (B, h, T, T)
      CHECK(differences(g.scaled, r.scaled) == "");             // -inf in the same places
      CHECK(differences(g.attn_weights, r.attn_weights) == "");
      CHECK(differences(g.context, r.context) == "");           // (B, h, T, d_k)
    }
}

TEST_CASE("h_kv = h is multi-head attention: the existing scaled_dot_product_attention path") {
  const std::size_t B = 2, h = 3, T = 5, d_k = 4;
  const Ten4 q = random_heads(4, B, h, T, d_k), k = random_heads(5, B, h, T, d_k), v = random_heads(6, B, h, T, d_k);
  for (const bool causal : {true, false}) {
    const attn::Attention g = attn::grouped_query_attention(q, k, v, causal);
    const attn::Attention a = attn::scaled_dot_product_attention(q, k, v, causal);
    CHECK(differences(g.attn_scores, a.attn_scores) == "");
    CHECK(differences(g.attn_weights, a.attn_weights) == "");
    CHECK(differences(g.context, a.context) == "");
  }
  // The same through whole models: a GqaModel with h_kv = h is the fused multi-head flow.
  const GqaModel m = seeded_model(13, 6, 3, 3, 2, true);
  const Ten3 x = attn::TorchGenerator(14).rand(2, 5, 6);  // (B, T, d_in)
  const attn::GqaForward f = attn::gqa_forward(m, x);
  const auto heads = [](const Ten3& t) { return attn::swap_token_head_axes(attn::split_heads(t, 3)); };
  const attn::Attention a = attn::scaled_dot_product_attention(heads(attn::linear(m.W_query, x)),
                                                               heads(attn::linear(m.W_key, x)),
                                                               heads(attn::linear(m.W_value, x)), true);
  const Ten3 out = attn::linear(m.out_proj, attn::merge_heads(attn::swap_token_head_axes(a.context)));
  CHECK(differences(f.output, out) == "");
}

TEST_CASE("h_kv = 1 is multi-query attention: every query head reads the one kv head") {
  const std::size_t B = 1, h = 4, T = 5, d_k = 3;
  const Ten4 q = random_heads(7, B, h, T, d_k), k = random_heads(8, B, 1, T, d_k), v = random_heads(9, B, 1, T, d_k);
  const attn::Attention g = attn::grouped_query_attention(q, k, v, true);
  for (std::size_t i = 0; i < h; ++i) {
    CHECK(attn::kv_head_of(i, h, 1) == 0);
    // Head i alone, with the shared head: (1, 1, T, d_k) each.
    Ten4 qi = xt::empty<float>({B, std::size_t{1}, T, d_k});
    std::copy_n(q.data() + i * T * d_k, T * d_k, qi.data());
    const attn::Attention one = attn::scaled_dot_product_attention(qi, k, v, true);
    Ten4 gi = xt::empty<float>({B, std::size_t{1}, T, d_k});
    std::copy_n(g.context.data() + i * T * d_k, T * d_k, gi.data());
    CHECK(differences(gi, one.context) == "");
  }
  CHECK(attn::kv_head_of(3, 4, 2) == 1);
  CHECK(attn::kv_head_of(1, 4, 2) == 0);
  CHECK(attn::kv_head_of(5, 8, 8) == 5);
}

TEST_CASE("refusals: h_kv not dividing h, mismatched shapes, layers that do not fit") {
  const Ten4 q = xt::zeros<float>({1, 4, 5, 2}), k = xt::zeros<float>({1, 3, 5, 2});
  std::string why = refusal([&] { attn::grouped_query_attention(q, k, k, true); });
  CHECK(contains(why, "3 key/value heads do not divide 4 query heads"));
  CHECK(contains(why, "(1, 4, 5, 2)"));
  CHECK(contains(why, "(1, 3, 5, 2)"));
  CHECK(contains(refusal([] { attn::kv_head_of(0, 6, 4); }), "do not divide"));
  CHECK(contains(refusal([] { attn::kv_head_of(0, 6, 0); }), "do not divide"));
  const Ten4 k2 = xt::zeros<float>({1, 2, 5, 2}), v3 = xt::zeros<float>({1, 2, 5, 3});
  CHECK(contains(refusal([&] { attn::grouped_query_attention(q, k2, v3, true); }), "(1, 2, 5, 3)"));
  const Ten4 wide = xt::zeros<float>({1, 2, 5, 3});
  CHECK(contains(refusal([&] { attn::grouped_query_attention(q, wide, wide, false); }), "head width"));
  const Ten4 other_batch = xt::zeros<float>({2, 2, 5, 2});
  CHECK(contains(refusal([&] { attn::grouped_query_attention(q, other_batch, other_batch, false); }), "batch"));
  const Ten4 few = xt::zeros<float>({1, 2, 3, 2});  // 3 keys for 5 causal queries
  CHECK(contains(refusal([&] { attn::grouped_query_attention(q, few, few, true); }), "at least as many keys"));
  CHECK(refusal([&] { attn::grouped_query_attention(q, few, few, false); }) == "");  // cross-attention is fine

  GqaModel m = fixture_model();
  m.kv_heads = 3;
  CHECK(contains(refusal([&] { attn::gqa_head_width(m); }), "3 key/value heads do not divide 4"));
  m = fixture_model();
  m.W_key.weight = xt::zeros<float>({6, 8});
  why = refusal([&] { attn::gqa_head_width(m); });
  CHECK(contains(why, "W_key (6, 8)"));
  CHECK(contains(why, "(4, 8)"));
  m = fixture_model();
  CHECK(contains(refusal([&] { attn::gqa_forward(m, Ten3(xt::zeros<float>({1, 5, 7}))); }), "(1, 5, 7)"));
  m.rope = true;  // d_k 2 is even: fine
  CHECK(refusal([&] { attn::gqa_forward(m, gqa_fixture<3>("x")); }) == "");
  GqaModel odd = seeded_model(1, 6, 2, 1, 3, false);
  odd.rope = true;
  CHECK(contains(refusal([&] { attn::gqa_head_width(odd); }), "d_k 3"));
}

TEST_CASE("decoding with a KV cache gives PyTorch's output_incremental and its cache") {
  const GqaModel m = fixture_model();
  const Ten3 x = gqa_fixture<3>("x");  // (1, 5, 8)
  attn::KvCache cache = attn::make_kv_cache(1, 2, 2, 2);  // room for 2: it must grow twice
  CHECK(cache.shape() == Shape{1, 2, 0, 2});
  const attn::GqaForward full = attn::gqa_forward(m, x, true);
  const Ten3 expected = gqa_fixture<3>("output_incremental");
  for (std::size_t t = 0; t < 5; ++t) {
    INFO("step ", t);
    const attn::DecodeStep s = attn::decode_step(m, cache, position_row(x, t));
    CHECK(s.position == t);
    CHECK(s.attn.attn_weights.shape()[3] == t + 1);  // (B, h, 1, t + 1): one query, every key so far
    CHECK(s.cache_shape == Shape{1, 2, t + 1, 2});
    CHECK(differences(s.output, position_row(expected, t)) == "");
    CHECK(differences(s.output, position_row(full.output, t)) == "");
    // Its weights are row t of the full causal weights, whose future columns are 0.
    for (std::size_t i = 0; i < 4; ++i)
      for (std::size_t j = 0; j <= t; ++j)
        CHECK(s.attn.attn_weights(0, i, 0, j) == doctest::Approx(full.attn.attn_weights(0, i, t, j)).epsilon(1e-5));
  }
  CHECK(differences(expected, gqa_fixture<3>("output")) == "");
  CHECK(differences(cache.keys(), gqa_fixture<4>("cache_k")) == "");    // (1, 2, 5, 2)
  CHECK(differences(cache.values(), gqa_fixture<4>("cache_v")) == "");  // (1, 2, 5, 2)
  CHECK(cache.capacity() == 8);  // 2 -> 4 -> 8
  CHECK(cache.growths == 2);
}

TEST_CASE("the cache grows by doubling: log2(T) reallocations for T steps, storage untouched between") {
  attn::KvCache c = attn::make_kv_cache(2, 3, 4);
  CHECK(c.capacity() == 16);
  const Ten4 one = xt::ones<float>({2, 3, 1, 4});  // (B, h_kv, 1, d_k)
  std::size_t reallocations_seen = 0;
  const float* storage = c.k_store.data();
  for (std::size_t t = 0; t < 1000; ++t) {
    attn::kv_cache_append(c, one * static_cast<float>(t), one * -static_cast<float>(t));
    if (c.k_store.data() != storage) {
      ++reallocations_seen;
      storage = c.k_store.data();
    }
  }
  CHECK(c.shape() == Shape{2, 3, 1000, 4});
  CHECK(c.capacity() == 1024);
  CHECK(c.growths == 6);  // 16 -> 32 -> 64 -> 128 -> 256 -> 512 -> 1024
  CHECK(reallocations_seen == 6);
  const Ten4 keys = c.keys(), values = c.values();  // (B, h_kv, t, d_k)
  CHECK(keys(1, 2, 999, 3) == 999.0f);
  CHECK(keys(0, 1, 17, 0) == 17.0f);
  CHECK(values(1, 0, 500, 2) == -500.0f);
  // A block of several positions at once (a prompt) is appended the same way.
  attn::KvCache p = attn::make_kv_cache(1, 2, 2, 1);
  const Ten4 k_prompt = random_heads(3, 1, 2, 5, 2);
  attn::kv_cache_append(p, k_prompt, k_prompt);
  CHECK(p.capacity() == 8);
  CHECK(p.growths == 1);
  CHECK(differences(p.keys(), k_prompt, 0.0) == "");
  // Refusals: a wrong block, a zero size, a token that does not fit the model.
  CHECK(contains(refusal([&] { attn::kv_cache_append(p, k_prompt, random_heads(3, 1, 2, 4, 2)); }), "(1, 2, 4, 2)"));
  CHECK(contains(refusal([] { attn::make_kv_cache(1, 0, 2); }), "positive"));
  const GqaModel m = fixture_model();
  attn::KvCache wrong = attn::make_kv_cache(1, 4, 2);
  CHECK(contains(refusal([&] { attn::decode_step(m, wrong, position_row(gqa_fixture<3>("x"), 0)); }), "(1, 4, 0, 2)"));
  attn::KvCache right = attn::make_kv_cache(1, 2, 2);
  CHECK(contains(refusal([&] { attn::decode_step(m, right, gqa_fixture<3>("x")); }), "(1, 5, 8)"));
  CHECK(right.length == 0);  // nothing appended by a refused step
}

TEST_CASE("decoding with RoPE: the cache holds rotated keys and the offset gives each its position") {
  for (const std::size_t h_kv : {1u, 2u, 4u})
    for (const attn::RopeStyle style : {attn::RopeStyle::half, attn::RopeStyle::interleaved}) {
      INFO("h_kv ", h_kv, " ", attn::rope_style_name(style));
      GqaModel m = seeded_model(30 + h_kv, 8, 4, h_kv, 4, true);
      m.rope = true;
      m.rope_style = style;
      m.rope_theta = 500000.0f;
      const Ten3 x = attn::TorchGenerator(40).rand(2, 9, 8);  // (B, T, d_in)
      const attn::GqaForward full = attn::gqa_forward(m, x, true);
      attn::KvCache cache = attn::make_kv_cache(2, h_kv, 4, 4);
      CHECK(differences(attn::decode_sequence(m, x, cache), full.output) == "");
      CHECK(differences(cache.keys(), full.k_rope) == "");    // rotated keys are what is cached
      CHECK(differences(cache.values(), full.v_heads) == "");  // values are never rotated
      // Without the offset every step would rotate as position 0, which is the identity, i.e. the
      // model without RoPE: its rows are far from the rotated model's.
      GqaModel plain = m;
      plain.rope = false;
      CHECK(differences(attn::gqa_forward(plain, x).output, full.output, 1e-3) != "");
    }
}

TEST_CASE("cost per step: the cache turns a growing recomputation into one row") {
  // The fixture's sizes: d_in 8, h 4, h_kv 2, d_k 2, d_out 8.
  const attn::AttentionDims d{8, 4, 2, 2, 8};
  // One row of projections: q 8*8 + k, v 2*8*4 + out 8*8 = 64 + 64 + 64.
  const attn::StepCost c0 = attn::decode_step_cost(d, 0, true);
  CHECK(c0.projections == 192);
  CHECK(c0.scores == 4 * 1 * 2);
  CHECK(c0.context == 4 * 1 * 2);
  const attn::StepCost cached = attn::decode_step_cost(d, 4, true);    // 5th token, 5 keys
  const attn::StepCost uncached = attn::decode_step_cost(d, 4, false);
  CHECK(cached.projections == 192);
  CHECK(cached.scores == 4 * 5 * 2);
  CHECK(cached.context == 4 * 5 * 2);
  CHECK(uncached.projections == 5 * 192);
  CHECK(uncached.scores == 4 * 5 * 5 * 2);
  CHECK(uncached.context == 4 * 5 * 5 * 2);
  CHECK(cached.total() == 192 + 40 + 40);
  CHECK(uncached.total() == 960 + 200 + 200);
  // Step 0 costs the same either way: there is no past to reuse yet.
  CHECK(attn::decode_step_cost(d, 0, false).total() == c0.total());
  // Over T steps: linear plus quadratic with the cache, quadratic plus cubic without.
  const attn::StepCost all_cached = attn::generation_cost(d, 5, true);
  const attn::StepCost all_uncached = attn::generation_cost(d, 5, false);
  CHECK(all_cached.projections == 5 * 192);
  CHECK(all_cached.scores == 4 * 2 * (1 + 2 + 3 + 4 + 5));
  CHECK(all_uncached.projections == 192 * (1 + 2 + 3 + 4 + 5));
  CHECK(all_uncached.scores == 4 * 2 * (1 + 4 + 9 + 16 + 25));
  // Llama-3.2-3B's attention sizes (d 3072, 24 heads, 8 kv heads of 128), at step 8191.
  const attn::AttentionDims llama{3072, 24, 8, 128, 3072};
  const attn::StepCost l = attn::decode_step_cost(llama, 8191, true);
  CHECK(l.projections == 3072ull * 3072 + 2ull * 3072 * 1024 + 3072ull * 3072);
  CHECK(l.scores == 24ull * 8192 * 128);
  CHECK(attn::decode_step_cost(llama, 8191, false).total() > 4000 * l.total());
  CHECK(contains(refusal([] { attn::decode_step_cost({8, 4, 3, 2, 8}, 0, true); }), "h_kv 3"));
}

TEST_CASE("KV-cache bytes: Llama-3.2-3B's 114,688 bytes per token, 14 GiB at a 128k context") {
  const std::uint64_t per_token = attn::kv_cache_bytes_per_token(28, 8, 128, 2);  // 28 layers, 8 kv heads, bf16
  CHECK(per_token == 114688);
  CHECK(per_token == 2ull * 28 * 8 * 128 * 2);
  const std::uint64_t at_128k = attn::kv_cache_bytes(per_token, 131072);
  CHECK(at_128k == 15032385536ull);
  CHECK(at_128k == 14ull << 30);  // exactly 14 GiB
  CHECK(attn::kv_cache_bytes(per_token, 131072, 4) == 56ull << 30);
  // Without GQA (24 kv heads, one per query head) the cache would be three times larger.
  CHECK(attn::kv_cache_bytes_per_token(28, 24, 128, 2) == 3 * per_token);
  // Our fixture's model in float32: 2 * 1 layer * 2 kv heads * 2 * 4 bytes = 32 bytes per token,
  // the size of cache_k and cache_v for one position.
  CHECK(attn::kv_cache_bytes_per_token(1, 2, 2, 4) == 32);
  CHECK(contains(refusal([] { attn::kv_cache_bytes_per_token(0, 8, 128, 2); }), "layers 0"));
  CHECK(contains(refusal([] { attn::kv_cache_bytes(1ull << 40, 1ull << 30); }), "overflow"));
}
