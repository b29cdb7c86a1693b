// Checks for exercise repeat-kv (lessons/exercises/repeat_kv.cpp): the repeat_interleave copy of
// grouped key/value heads, against the worked example, PyTorch's gqa fixture (k_heads ->
// k_repeated, and the attention weights the copy leads to), the two ends MHA and MQA, and attn's
// own repeat_kv_heads.
//
// Shape legend: B batch, h_kv key/value heads, h query heads, groups = h / h_kv, T tokens,
// d_k head width.
#include <doctest/doctest.h>

#include <stdexcept>

#include "core/attention.hpp"
#include "core/heads.hpp"
#include "expect.hpp"
#include "support.hpp"

namespace exercise {
// Written by the learner in lessons/exercises/repeat_kv.cpp.
attn::Ten4 repeat_kv(const attn::Ten4& kv, std::size_t h);
}  // namespace exercise

using attn::Ten4;
using attn::test::load_fixture;
using attn::test::random_heads;
using exercise::repeat_kv;
using exercise::test::same;

TEST_CASE("the worked example: kv heads 0, 0, 1, 1 for query heads 0, 1, 2, 3") {
  const Ten4 kv = {{{{1, 2}}, {{3, 4}}}};  // (1, 2, 1, 2)
  CHECK(same(repeat_kv(kv, 4), Ten4{{{{1, 2}}, {{1, 2}}, {{3, 4}}, {{3, 4}}}}, 0));
}

TEST_CASE("repeat_interleave, not repeat: query head 1 reads kv head 0") {
  const Ten4 kv = {{{{1, 2}}, {{3, 4}}}};  // (1, 2, 1, 2)
  const Ten4 tiled = {{{{1, 2}}, {{3, 4}}, {{1, 2}}, {{3, 4}}}};  // what kv.repeat(1, 2, 1, 1) gives
  CHECK_FALSE(same(repeat_kv(kv, 4), tiled, 0));
}

TEST_CASE("PyTorch's gqa fixture: k_heads (1, 2, 5, 2) -> k_repeated (1, 4, 5, 2)") {
  const Ten4 k_heads = load_fixture<4>("gqa__k_heads.npy");       // (1, 2, 5, 2)
  const Ten4 k_repeated = load_fixture<4>("gqa__k_repeated.npy");  // (1, 4, 5, 2)
  CHECK(same(repeat_kv(k_heads, 4), k_repeated, 0));  // a copy: every bit the same
}

TEST_CASE("with your copy, causal attention gives PyTorch's attn_weights (4 query heads, 2 kv heads)") {
  const Ten4 q_heads = load_fixture<4>("gqa__q_heads.npy");  // (1, 4, 5, 2)
  const Ten4 k_heads = load_fixture<4>("gqa__k_heads.npy");  // (1, 2, 5, 2)
  const Ten4 v_heads = load_fixture<4>("gqa__v_heads.npy");  // (1, 2, 5, 2)
  const Ten4 k_rep = repeat_kv(k_heads, 4);                  // (1, 4, 5, 2)
  const Ten4 v_rep = repeat_kv(v_heads, 4);                  // (1, 4, 5, 2)
  REQUIRE(attn::shape_of(k_rep) == "(1, 4, 5, 2)");  // attention refuses any other shape
  const attn::Attention a = attn::scaled_dot_product_attention(q_heads, k_rep, v_rep, true);
  CHECK(same(a.attn_weights, load_fixture<4>("gqa__attn_weights.npy")));  // (1, 4, 5, 5)
}

TEST_CASE("h = h_kv is multi-head attention: the copy equals its input") {
  const Ten4 kv = random_heads(3, 2, 3, 4, 5);  // (B 2, h_kv 3, T 4, d_k 5)
  CHECK(same(repeat_kv(kv, 3), kv, 0));
}

TEST_CASE("h_kv = 1 is multi-query attention: every query head reads the one kv head") {
  const Ten4 kv = random_heads(4, 2, 1, 3, 2);  // (B 2, 1, T 3, d_k 2)
  const Ten4 out = repeat_kv(kv, 6);            // (2, 6, 3, 2)
  REQUIRE(attn::shape_of(out) == "(2, 6, 3, 2)");
  for (std::size_t i = 0; i < 6; ++i) {
    CAPTURE(i);
    const Ten4 head = xt::view(out, xt::all(), xt::range(i, i + 1), xt::all(), xt::all());  // (2, 1, 3, 2)
    CHECK(same(head, kv, 0));
  }
}

TEST_CASE("a batch of two, 8 kv heads for 24 query heads (Llama-3.2-3B's grouping) matches attn's copy") {
  const Ten4 kv = random_heads(5, 2, 8, 3, 4);  // (B 2, h_kv 8, T 3, d_k 4)
  CHECK(same(repeat_kv(kv, 24), attn::repeat_kv_heads(kv, 3), 0));
}

TEST_CASE("an h that h_kv does not divide is refused with std::invalid_argument") {
  const Ten4 kv = random_heads(6, 1, 2, 3, 4);  // (1, h_kv 2, 3, 4)
  CHECK_THROWS_AS(repeat_kv(kv, 3), std::invalid_argument);  // 3 query heads cannot share 2 kv heads evenly
  CHECK_THROWS_AS(repeat_kv(kv, 1), std::invalid_argument);  // fewer query heads than kv heads
  CHECK_THROWS_AS(repeat_kv(kv, 0), std::invalid_argument);
}
