// Checks for exercise masked-softmax (lessons/exercises/masked_softmax.cpp): d2l's masked_softmax
// from valid lengths. The expected values come from PyTorch 1.13: d2l's own masked_softmax (and
// torch.softmax(X.masked_fill(torch.arange(S) >= valid_lens[:, None, None], fill), dim=-1), which
// gives the same numbers), and the `padding` fixture that `attn lesson padding` reproduces.
//
// Shape legend: B batch, T queries, S key positions, d width.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "core/attention.hpp"
#include "core/generator.hpp"
#include "core/matmul.hpp"
#include "core/padding.hpp"
#include "expect.hpp"
#include "support.hpp"

namespace exercise {
// Written by the learner in lessons/exercises/masked_softmax.cpp.
attn::Ten3 masked_softmax(const attn::Ten3& scores, const std::vector<std::size_t>& valid_lens, float fill);
}  // namespace exercise

using attn::Ten3;
using attn::test::load_fixture;
using exercise::masked_softmax;
using exercise::test::same;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

// The lesson's cross-attention scores: the fixture's q @ k^T / sqrt(4), (2, 3, 5).
Ten3 fixture_scores() {
  const Ten3 q = load_fixture<3>("padding__q.npy"), k = load_fixture<3>("padding__k.npy");  // (2, 3, 4), (2, 5, 4)
  return attn::scale_scores(attn::matmul_bt(q, k), 4);  // (2, 3, 5)
}

}  // namespace

TEST_CASE("the worked example: two real keys out of three, -inf on the third") {
  const Ten3 scores = {{{1, 2, 3}, {3, 2, 1}}};  // (1, 2, 3)
  const Ten3 expected = {{{0.26894143f, 0.73105860f, 0.0f}, {0.73105860f, 0.26894143f, 0.0f}}};
  CHECK(same(masked_softmax(scores, {2}, -kInf), expected, 1e-6));
}

TEST_CASE("attn lesson padding, stage 4: valid_lens [5, 2] with -inf gives the fixture's attn_weights_inf") {
  CHECK(same(masked_softmax(fixture_scores(), {5, 2}, -kInf), load_fixture<3>("padding__attn_weights_inf.npy"), 1e-6));
}

TEST_CASE("attn lesson padding, stage 5: d2l's fill -1e6 gives the fixture's attn_weights_d2l") {
  CHECK(same(masked_softmax(fixture_scores(), {5, 2}, -1e6f), load_fixture<3>("padding__attn_weights_d2l.npy"), 1e-6));
}

TEST_CASE("padded keys get exactly 0, not just a small weight") {
  const Ten3 w = masked_softmax(fixture_scores(), {5, 2}, -kInf);
  REQUIRE(same(w, load_fixture<3>("padding__attn_weights_inf.npy"), 1e-6));  // shape and values first
  for (std::size_t t = 0; t < 3; ++t)
    for (std::size_t s = 2; s < 5; ++s) {
      CAPTURE(t);
      CAPTURE(s);
      CHECK(w(1, t, s) == 0.0f);
    }
}

TEST_CASE("a sequence with no real key (valid length 0): NaN with -inf, uniform 1/S with -1e6") {
  const Ten3 scores = {{{0.5f, -1.0f, 2.0f}}, {{0.5f, -1.0f, 2.0f}}};  // (2, 1, 3)
  const Ten3 with_inf = {{{kNan, kNan, kNan}}, {{0.17529039f, 0.03911257f, 0.78559703f}}};
  const Ten3 with_d2l = {{{0.33333334f, 0.33333334f, 0.33333334f}}, {{0.17529039f, 0.03911257f, 0.78559703f}}};
  CHECK(same(masked_softmax(scores, {0, 3}, -kInf), with_inf, 1e-6));
  CHECK(same(masked_softmax(scores, {0, 3}, -1e6f), with_d2l, 1e-6));
}

TEST_CASE("several queries per sequence: each sequence's length covers all of its queries") {
  // torch.manual_seed(0); Z = torch.rand(2, 2, 4); d2l's masked_softmax(Z, torch.tensor([2, 3]))
  const Ten3 Z = {{{0.49625659f, 0.76822180f, 0.08847743f, 0.13203049f}, {0.30742282f, 0.63407868f, 0.49009341f, 0.89644474f}},
                  {{0.45562798f, 0.63230628f, 0.34889346f, 0.40171731f}, {0.02232575f, 0.16885895f, 0.29388845f, 0.51852179f}}};
  const Ten3 expected = {{{0.43242469f, 0.56757528f, 0.0f, 0.0f}, {0.41905454f, 0.58094549f, 0.0f, 0.0f}},
                         {{0.32341409f, 0.38591293f, 0.29067299f, 0.0f}, {0.28819886f, 0.33368048f, 0.37812069f, 0.0f}}};
  CHECK(same(masked_softmax(Z, {2, 3}, -kInf), expected, 1e-6));
}

TEST_CASE("a larger batch matches attn's own key-padding mask and masked softmax") {
  Ten3 scores = xt::empty<float>({4, 6, 9});  // (B, T, S)
  attn::TorchGenerator(7).uniform_(scores.data(), scores.size(), -3.0f, 3.0f);
  const std::vector<std::size_t> lens = {9, 1, 4, 0};
  const Ten3 mask = attn::cross_padding_mask(attn::key_padding_mask(lens, 9), 6);  // (4, 6, 9)
  CHECK(same(masked_softmax(scores, lens, -kInf), attn::masked_softmax(scores, mask, -kInf), 1e-6));
  CHECK(same(masked_softmax(scores, lens, -1e9f), attn::masked_softmax(scores, mask, -1e9f), 1e-6));
}

TEST_CASE("refusals: one length per sequence, none longer than S") {
  const Ten3 scores = fixture_scores();  // (2, 3, 5)
  CHECK_THROWS_AS(masked_softmax(scores, {5}, -kInf), std::invalid_argument);
  CHECK_THROWS_AS(masked_softmax(scores, {5, 2, 1}, -kInf), std::invalid_argument);
  CHECK_THROWS_AS(masked_softmax(scores, {5, 6}, -kInf), std::invalid_argument);
}
