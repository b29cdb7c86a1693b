// Checks for exercise scaled-scores (lessons/exercises/scaled_scores.cpp): queries @ keys^T /
// sqrt(d_k), against `attn lesson self-attention` and PyTorch's multi-head fixture.
//
// Shape legend: B batch, h heads, T query tokens, S key tokens, d_in embedding width,
// d_k query/key width (d_out = h * d_k).
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include <xtensor/xview.hpp>

#include "core/generator.hpp"
#include "core/matmul.hpp"
#include "expect.hpp"
#include "support.hpp"

namespace exercise {
// Written by the learner in lessons/exercises/scaled_scores.cpp.
attn::Mat scaled_scores(const attn::Mat& queries, const attn::Mat& keys);
}  // namespace exercise

using attn::Mat;
using exercise::scaled_scores;
using exercise::test::same;

TEST_CASE("the worked example: [[2, 0, 1], [2, 2, 2]] / sqrt(2)") {
  const Mat queries = {{1, 0}, {1, 1}};        // (2, 2)
  const Mat keys = {{2, 0}, {0, 2}, {1, 1}};   // (3, 2)
  const float r = std::sqrt(2.0f);
  CHECK(same(scaled_scores(queries, keys), Mat{{2 / r, 0, 1 / r}, {2 / r, 2 / r, 2 / r}}));
}

TEST_CASE("one row per query, one column per key: T 1, S 4, d_k 3") {
  const Mat queries = {{1, 1, 1}};                                  // (1, 3)
  const Mat keys = {{1, 0, 0}, {0, 2, 0}, {0, 0, 3}, {1, 1, 1}};    // (4, 3)
  const float r = std::sqrt(3.0f);
  CHECK(same(scaled_scores(queries, keys), Mat{{1 / r, 2 / r, 3 / r, 3 / r}}));
}

TEST_CASE("attn lesson self-attention, stage 8: scaled = queries @ keys^T / sqrt(2)") {
  // The lesson's inputs: the book's embeddings and torch.manual_seed(123); W_query, W_key =
  // torch.rand(3, 2) twice (stages 1, 5 and 6).
  const Mat x = {{0.43f, 0.15f, 0.89f}, {0.55f, 0.87f, 0.66f}, {0.57f, 0.85f, 0.64f},
                 {0.22f, 0.58f, 0.33f}, {0.77f, 0.25f, 0.10f}, {0.05f, 0.80f, 0.55f}};  // (6, 3)
  attn::TorchGenerator gen(123);
  const Mat W_query = gen.rand(3, 2), W_key = gen.rand(3, 2);  // (3, 2) each
  const Mat queries = attn::matmul(x, W_query);                 // (6, 3) @ (3, 2) -> (6, 2)
  const Mat keys = attn::matmul(x, W_key);                      // (6, 2)
  const Mat printed = {{0.6528f, 0.9578f, 0.9363f, 0.5593f, 0.2851f, 0.8011f},
                       {0.8984f, 1.3098f, 1.2806f, 0.7633f, 0.3944f, 1.0918f},
                       {0.8870f, 1.2929f, 1.2641f, 0.7534f, 0.3895f, 1.0775f},
                       {0.4930f, 0.7189f, 0.7029f, 0.4190f, 0.2164f, 0.5993f},
                       {0.4323f, 0.6236f, 0.6099f, 0.3621f, 0.1914f, 0.5167f},
                       {0.6361f, 0.9309f, 0.9101f, 0.5432f, 0.2784f, 0.7776f}};  // (6, 6)
  CHECK(same(scaled_scores(queries, keys), printed, 1e-4));  // printed with 4 decimals
}

TEST_CASE("every head of PyTorch's mha_full_bias fixture: B 3, h 4, T 6, d_k 2") {
  using attn::test::load_fixture;
  const attn::Ten3 q = load_fixture<3>("mha_full_bias__q.npy");               // (3, 6, 8)
  const attn::Ten3 k = load_fixture<3>("mha_full_bias__k.npy");               // (3, 6, 8)
  const attn::Ten4 scaled = load_fixture<4>("mha_full_bias__scaled_scores.npy");  // (3, 4, 6, 6)
  const std::size_t d_k = 2;
  for (std::size_t b = 0; b < 3; ++b)
    for (std::size_t i = 0; i < 4; ++i) {
      CAPTURE(b);
      CAPTURE(i);
      // Head i of batch entry b: columns i*d_k .. i*d_k + d_k - 1 of every token's row.
      const Mat q_bi = xt::view(q, b, xt::all(), xt::range(i * d_k, (i + 1) * d_k));  // (6, 2)
      const Mat k_bi = xt::view(k, b, xt::all(), xt::range(i * d_k, (i + 1) * d_k));  // (6, 2)
      const Mat expected = xt::view(scaled, b, i, xt::all(), xt::all());               // (6, 6)
      CHECK(same(scaled_scores(q_bi, k_bi), expected));
    }
}

TEST_CASE("queries and keys of different widths are refused with std::invalid_argument") {
  const Mat queries = {{1, 2, 3}, {4, 5, 6}};  // (2, 3)
  const Mat keys = {{1, 2}, {3, 4}};           // (2, 2)
  CHECK_THROWS_AS(scaled_scores(queries, keys), std::invalid_argument);
}
