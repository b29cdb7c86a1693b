// Checks for exercise multi-head (lessons/exercises/multi_head.cpp): h single heads,
// concatenated, equal the fused multi-head layer. Compared with PyTorch (mha_causal_nobias),
// with attn's fused route for several h, and with what `attn lesson heads` printed.
//
// Shape legend: B batch, T tokens, d_in input width, h heads, d_k head width, d_out = h * d_k.
#include <doctest/doctest.h>

#include <stdexcept>

#include <xtensor/xview.hpp>

#include "core/attention.hpp"
#include "core/generator.hpp"
#include "core/heads.hpp"
#include "core/linear.hpp"
#include "core/matmul.hpp"
#include "expect.hpp"
#include "support.hpp"

namespace exercise {
// Written by the learner in lessons/exercises/multi_head.cpp.
attn::Ten3 multi_head_context(const attn::Ten3& x, const attn::Mat& W_query, const attn::Mat& W_key,
                              const attn::Mat& W_value, std::size_t h, bool causal);
}  // namespace exercise

using attn::Mat;
using attn::Ten3;
using attn::Ten4;
using attn::test::load_fixture;
using exercise::multi_head_context;
using exercise::test::same;

namespace {

// attn's fused route, as the heads lesson computes it: one projection per role, split, attend, merge.
Ten3 fused_context(const Ten3& x, const Mat& W_query, const Mat& W_key, const Mat& W_value, std::size_t h,
                   bool causal) {
  auto heads = [&](const Mat& W) {  // (B, T, d_in) -> (B, T, d_out) -> (B, h, T, d_k)
    return attn::swap_token_head_axes(attn::split_heads(attn::matmul_bt(x, W), h));
  };
  const Ten4 context_heads =
      attn::scaled_dot_product_attention(heads(W_query), heads(W_key), heads(W_value), causal).context;  // (B, h, T, d_k)
  return attn::merge_heads(attn::swap_token_head_axes(context_heads));  // (B, T, d_out)
}

}  // namespace

TEST_CASE("PyTorch's mha_causal_nobias: B 2, T 5, d_in 4, d_out 6, h 3, causal") {
  const Ten3 x = load_fixture<3>("mha_causal_nobias__x.npy");                 // (2, 5, 4)
  const Mat W_query = load_fixture<2>("mha_causal_nobias__W_query_weight.npy");  // (6, 4)
  const Mat W_key = load_fixture<2>("mha_causal_nobias__W_key_weight.npy");      // (6, 4)
  const Mat W_value = load_fixture<2>("mha_causal_nobias__W_value_weight.npy");  // (6, 4)
  const Ten3 context = load_fixture<3>("mha_causal_nobias__context.npy");        // (2, 5, 6), before out_proj
  CHECK(same(multi_head_context(x, W_query, W_key, W_value, 3, true), context));
}

TEST_CASE("attn lesson heads, stage 13: torch.cat(heads, dim=-1) for the book's sentence") {
  // The lesson's setting: torch.manual_seed(123); three nn.Linear(3, 2, bias=False); batch 2 of
  // the book's embeddings; 2 heads of width 1; causal.
  attn::TorchGenerator gen(123);
  const Mat W_query = attn::make_linear(gen, 3, 2, false).weight;  // (2, 3)
  const Mat W_key = attn::make_linear(gen, 3, 2, false).weight;    // (2, 3)
  const Mat W_value = attn::make_linear(gen, 3, 2, false).weight;  // (2, 3)
  const Mat sentence = {{0.43f, 0.15f, 0.89f}, {0.55f, 0.87f, 0.66f}, {0.57f, 0.85f, 0.64f},
                        {0.22f, 0.58f, 0.33f}, {0.77f, 0.25f, 0.10f}, {0.05f, 0.80f, 0.55f}};  // (6, 3)
  Ten3 x = xt::empty<float>({std::size_t{2}, std::size_t{6}, std::size_t{3}});  // (2, 6, 3)
  for (std::size_t b = 0; b < 2; ++b) xt::view(x, b, xt::all(), xt::all()) = sentence;
  const Mat printed = {{-0.4519f, 0.2216f}, {-0.5889f, 0.0122f}, {-0.6313f, -0.0576f},
                       {-0.5685f, -0.0832f}, {-0.5541f, -0.0964f}, {-0.5311f, -0.1077f}};  // (6, 2)
  Ten3 expected = xt::empty<float>({std::size_t{2}, std::size_t{6}, std::size_t{2}});  // (2, 6, 2)
  for (std::size_t b = 0; b < 2; ++b) xt::view(expected, b, xt::all(), xt::all()) = printed;
  CHECK(same(multi_head_context(x, W_query, W_key, W_value, 2, true), expected, 1e-4));  // 4 decimals printed
}

TEST_CASE("concatenated heads equal the fused layer for h = 1, 2, 4, 8, with and without the mask") {
  const Ten3 x = load_fixture<3>("mha_full_bias__x.npy");                 // (3, 6, 8)
  const Mat W_query = load_fixture<2>("mha_full_bias__W_query_weight.npy");  // (8, 8)
  const Mat W_key = load_fixture<2>("mha_full_bias__W_key_weight.npy");      // (8, 8)
  const Mat W_value = load_fixture<2>("mha_full_bias__W_value_weight.npy");  // (8, 8)
  for (std::size_t h : {1, 2, 4, 8})
    for (bool causal : {false, true}) {
      CAPTURE(h);
      CAPTURE(causal);
      CHECK(same(multi_head_context(x, W_query, W_key, W_value, h, causal),
                 fused_context(x, W_query, W_key, W_value, h, causal)));
    }
}

TEST_CASE("heads that do not divide d_out are refused with std::invalid_argument") {
  const Ten3 x = load_fixture<3>("mha_causal_nobias__x.npy");                 // (2, 5, 4)
  const Mat W = load_fixture<2>("mha_causal_nobias__W_query_weight.npy");     // (6, 4): d_out 6
  CHECK_THROWS_AS(multi_head_context(x, W, W, W, 4, true), std::invalid_argument);
}
