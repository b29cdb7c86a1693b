// Checks for exercise kv-decode-step (lessons/exercises/kv_decode_step.cpp): one decoding step of
// one head with a KV cache, against numbers from PyTorch 1.13 (torch.cat onto the cache, then
// torch.softmax(q @ K.T / d_k**0.5) @ V) and against the `gqa` fixture of tests/data, whose
// context PyTorch computed for the whole causal sequence at once.
//
// Shape legend: t tokens already cached, T tokens, d_k head width, h query heads, h_kv kv heads.
#include <doctest/doctest.h>

#include <stdexcept>

#include "expect.hpp"
#include "support.hpp"

namespace exercise {
// Written by the learner in lessons/exercises/kv_decode_step.cpp.
attn::Vec kv_decode_step(attn::Mat& K, attn::Mat& V, const attn::Vec& q, const attn::Vec& k, const attn::Vec& v);
}  // namespace exercise

using attn::Mat;
using attn::Vec;
using exercise::kv_decode_step;
using exercise::test::same;

TEST_CASE("the worked example: the cache grows to 2 rows and the output is [2.6089, 3.6089]") {
  Mat K = {{1, 0}}, V = {{1, 2}};  // (1, 2): one cached token
  const Vec out = kv_decode_step(K, V, Vec{0, 2}, Vec{0, 1}, Vec{3, 4});
  CHECK(same(K, Mat{{1, 0}, {0, 1}}, 0.0));  // k appended as the last row
  CHECK(same(V, Mat{{1, 2}, {3, 4}}, 0.0));
  CHECK(same(out, Vec{2.60885954f, 3.60885954f}, 1e-5));  // PyTorch
}

TEST_CASE("an empty cache: the token attends only to itself, so the output is its own value") {
  Mat K = xt::zeros<float>({std::size_t{0}, std::size_t{3}});  // (0, 3)
  Mat V = xt::zeros<float>({std::size_t{0}, std::size_t{3}});  // (0, 3)
  const Vec out = kv_decode_step(K, V, Vec{0.3f, -2.0f, 5.0f}, Vec{1, 2, 3}, Vec{-1.5f, 0.25f, 4});
  CHECK(same(K, Mat{{1, 2, 3}}, 0.0));
  CHECK(same(V, Mat{{-1.5f, 0.25f, 4}}, 0.0));
  CHECK(same(out, Vec{-1.5f, 0.25f, 4}, 1e-6));
}

TEST_CASE("d_k 3 with two cached tokens: the old rows stay exactly as they were (PyTorch)") {
  Mat K = {{0.5f, -1.0f, 2.0f}, {1.5f, 0.25f, -0.5f}};  // (2, 3)
  Mat V = {{1, 0, -1}, {0.5f, 2, 0}};                   // (2, 3)
  const Vec out = kv_decode_step(K, V, Vec{0.3f, -0.7f, 1.1f}, Vec{-1, 0.5f, 0.25f}, Vec{2, -1, 3});
  CHECK(same(K, Mat{{0.5f, -1.0f, 2.0f}, {1.5f, 0.25f, -0.5f}, {-1, 0.5f, 0.25f}}, 0.0));
  CHECK(same(V, Mat{{1, 0, -1}, {0.5f, 2, 0}, {2, -1, 3}}, 0.0));
  // Weights [0.7782, 0.1141, 0.1077]: the scale is 1 / sqrt(3), not 1 / 3 or none.
  CHECK(same(out, Vec{1.05065763f, 0.12052161f, -0.45501083f}, 1e-5));
}

TEST_CASE("scores far beyond exp's range: a stable softmax still gives PyTorch's [5, -5]") {
  // Scores 800 / sqrt(2) * [1, 2, 1.5]: exp(1131) is inf in float, so the max must come off first.
  Mat K = {{1, 0}, {2, 0}}, V = {{1, 1}, {5, -5}};  // (2, 2)
  const Vec out = kv_decode_step(K, V, Vec{800, 0}, Vec{1.5f, 0}, Vec{7, 9});
  CHECK(same(out, Vec{5, -5}, 1e-6));
}

TEST_CASE("PyTorch's gqa fixture: decoding every head step by step gives the causal context") {
  using attn::test::load_fixture;
  const attn::Ten4 q = load_fixture<4>("gqa__q_heads.npy");        // (1, h 4, T 5, d_k 2)
  const attn::Ten4 k = load_fixture<4>("gqa__k_heads.npy");        // (1, h_kv 2, T 5, d_k 2)
  const attn::Ten4 v = load_fixture<4>("gqa__v_heads.npy");        // (1, h_kv 2, T 5, d_k 2)
  const attn::Ten3 context = load_fixture<3>("gqa__context.npy");  // (1, T 5, h * d_k 8)
  for (std::size_t i = 0; i < 4; ++i) {
    const std::size_t g = i / 2;  // query heads 0, 1 read kv head 0; heads 2, 3 read kv head 1
    Mat K = xt::zeros<float>({std::size_t{0}, std::size_t{2}});  // (0, d_k)
    Mat V = xt::zeros<float>({std::size_t{0}, std::size_t{2}});  // (0, d_k)
    for (std::size_t t = 0; t < 5; ++t) {
      INFO("query head " << i << ", position " << t);
      const Vec q_t = {q(0, i, t, 0), q(0, i, t, 1)};
      const Vec out = kv_decode_step(K, V, q_t, Vec{k(0, g, t, 0), k(0, g, t, 1)}, Vec{v(0, g, t, 0), v(0, g, t, 1)});
      CHECK(K.shape()[0] == t + 1);
      CHECK(same(out, Vec{context(0, t, 2 * i), context(0, t, 2 * i + 1)}, 1e-5));
    }
  }
}

TEST_CASE("widths that disagree are refused with std::invalid_argument") {
  Mat K = {{1, 0}}, V = {{1, 2}};  // (1, 2)
  CHECK_THROWS_AS(kv_decode_step(K, V, Vec{1, 2, 3}, Vec{0, 1}, Vec{3, 4}), std::invalid_argument);
  CHECK_THROWS_AS(kv_decode_step(K, V, Vec{1, 2}, Vec{0, 1, 2}, Vec{3, 4}), std::invalid_argument);
  Mat short_V = xt::zeros<float>({std::size_t{0}, std::size_t{2}});  // (0, 2): one row fewer than K
  CHECK_THROWS_AS(kv_decode_step(K, short_V, Vec{1, 2}, Vec{0, 1}, Vec{3, 4}), std::invalid_argument);
}
