// Checks for exercise split-merge-heads (lessons/exercises/split_merge_heads.cpp): the view +
// transpose that makes heads, and the merge that undoes it, against the worked example,
// PyTorch's multi-head fixture (q -> q_heads, context_heads -> context) and round trips.
//
// Shape legend: B batch, T tokens, h heads, d_k head width, d_out = h * d_k.
#include <doctest/doctest.h>

#include <stdexcept>

#include "core/heads.hpp"
#include "expect.hpp"
#include "support.hpp"

namespace exercise {
// Written by the learner in lessons/exercises/split_merge_heads.cpp.
attn::Ten4 split_heads(const attn::Ten3& x, std::size_t h);
attn::Ten3 merge_heads(const attn::Ten4& heads);
}  // namespace exercise

using attn::Ten3;
using attn::Ten4;
using attn::test::load_fixture;
using exercise::merge_heads;
using exercise::split_heads;
using exercise::test::same;

namespace {

const Ten3 kWorkedX = {{{1, 2, 3, 4}, {5, 6, 7, 8}}};                    // (1, 2, 4)
const Ten4 kWorkedHeads = {{{{1, 2}, {5, 6}}, {{3, 4}, {7, 8}}}};        // (1, 2, 2, 2)

}  // namespace

TEST_CASE("the worked example: head 0 gets columns 0-1 of both tokens, head 1 columns 2-3") {
  CHECK(same(split_heads(kWorkedX, 2), kWorkedHeads, 0));
}

TEST_CASE("the worked example merged back") {
  CHECK(same(merge_heads(kWorkedHeads), kWorkedX, 0));
}

TEST_CASE("the transpose is not optional: PyTorch's q_heads = q.view(2, 5, 3, 2).transpose(1, 2)") {
  const Ten3 q = load_fixture<3>("mha_causal_nobias__q.npy");              // (2, 5, 6)
  const Ten4 q_heads = load_fixture<4>("mha_causal_nobias__q_heads.npy");  // (2, 3, 5, 2)
  CHECK(same(split_heads(q, 3), q_heads, 0));
  // The mistake the heads lesson shows has the right shape and the wrong numbers.
  CHECK_FALSE(same(attn::reshape_without_transpose(q, 3), q_heads, 0));
}

TEST_CASE("merge: PyTorch's context = context_heads.transpose(1, 2).contiguous().view(2, 5, 6)") {
  const Ten4 context_heads = load_fixture<4>("mha_causal_nobias__context_heads.npy");  // (2, 3, 5, 2)
  const Ten3 context = load_fixture<3>("mha_causal_nobias__context.npy");              // (2, 5, 6)
  CHECK(same(merge_heads(context_heads), context, 0));
}

TEST_CASE("round trip: merge_heads(split_heads(x, h)) == x for every h dividing d_out") {
  const Ten3 x = load_fixture<3>("mha_full_bias__x.npy");  // (3, 6, 8)
  for (std::size_t h : {1, 2, 4, 8}) {
    CAPTURE(h);
    const Ten4 heads = split_heads(x, h);  // (3, h, 6, 8 / h)
    CHECK(same(heads, attn::swap_token_head_axes(attn::split_heads(x, h)), 0));  // attn's own split
    CHECK(same(merge_heads(heads), x, 0));
  }
}

TEST_CASE("heads that do not divide d_out are refused with std::invalid_argument") {
  const Ten3 x = load_fixture<3>("mha_full_bias__x.npy");  // (3, 6, 8): d_out 8
  CHECK_THROWS_AS(split_heads(x, 3), std::invalid_argument);
  CHECK_THROWS_AS(split_heads(x, 0), std::invalid_argument);
}
