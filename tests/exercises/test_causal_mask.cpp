// Checks for exercise causal-mask (lessons/exercises/causal_mask.cpp): torch.triu(torch.ones(T,
// T), diagonal=1), against the worked example and what `attn lesson causal` printed.
//
// Shape legend: T tokens.
#include <doctest/doctest.h>

#include "core/mask.hpp"
#include "expect.hpp"

namespace exercise {
// Written by the learner in lessons/exercises/causal_mask.cpp.
attn::Mat causal_mask(std::size_t T);
}  // namespace exercise

using attn::Mat;
using exercise::causal_mask;
using exercise::test::same;

TEST_CASE("the worked example: causal_mask(3)") {
  CHECK(same(causal_mask(3), Mat{{0, 1, 1}, {0, 0, 1}, {0, 0, 0}}, 0));
}

TEST_CASE("attn lesson causal, stage 4: the mask for six tokens") {
  const Mat printed = {{0, 1, 1, 1, 1, 1},   // Your
                       {0, 0, 1, 1, 1, 1},   // journey
                       {0, 0, 0, 1, 1, 1},   // starts
                       {0, 0, 0, 0, 1, 1},   // with
                       {0, 0, 0, 0, 0, 1},   // one
                       {0, 0, 0, 0, 0, 0}};  // step
  CHECK(same(causal_mask(6), printed, 0));
}

TEST_CASE("one token sees only itself: causal_mask(1) is [[0]]") {
  CHECK(same(causal_mask(1), Mat{{0}}, 0));
}

TEST_CASE("no tokens: causal_mask(0) is an empty (0, 0) tensor") {
  CHECK(same(causal_mask(0), Mat(xt::zeros<float>({std::size_t{0}, std::size_t{0}})), 0));
}

TEST_CASE("a long sequence matches attn's own mask: T = 50") {
  CHECK(same(causal_mask(50), attn::causal_mask(50), 0));
}
