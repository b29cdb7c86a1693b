// Checks for exercise masked-fill (lessons/exercises/masked_fill.cpp): scores.masked_fill(
// mask.bool(), fill), replayed on the scores `attn lesson causal` printed, with the fills it
// compares (-inf, -1e9) and the fully masked row it shows.
//
// Shape legend: T query tokens, S key tokens.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/attention.hpp"
#include "core/mask.hpp"
#include "core/softmax.hpp"
#include "expect.hpp"

namespace exercise {
// Written by the learner in lessons/exercises/masked_fill.cpp.
attn::Mat masked_fill(const attn::Mat& scores, const attn::Mat& mask, float fill);
}  // namespace exercise

using attn::Mat;
using exercise::masked_fill;
using exercise::test::same;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// attn_scores as `attn lesson causal` printed them at stage 3, used here as exact inputs.
const Mat& lesson_scores() {
  static const Mat scores = {{0.2899f, 0.0716f, 0.0760f, -0.0138f, 0.1344f, -0.0511f},
                             {0.4656f, 0.1723f, 0.1751f, 0.0259f, 0.1771f, 0.0085f},
                             {0.4594f, 0.1703f, 0.1731f, 0.0259f, 0.1745f, 0.0090f},
                             {0.2642f, 0.1024f, 0.1036f, 0.0186f, 0.0973f, 0.0122f},
                             {0.2183f, 0.0874f, 0.0882f, 0.0177f, 0.0786f, 0.0144f},
                             {0.3408f, 0.1270f, 0.1290f, 0.0198f, 0.1290f, 0.0078f}};  // (6, 6)
  return scores;
}

// attn_weights as the lesson printed them at stage 6 (4 decimals).
const Mat& lesson_weights() {
  static const Mat weights = {{1.0000f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f},
                              {0.5517f, 0.4483f, 0.0f, 0.0f, 0.0f, 0.0f},
                              {0.3800f, 0.3097f, 0.3103f, 0.0f, 0.0f, 0.0f},
                              {0.2758f, 0.2460f, 0.2462f, 0.2319f, 0.0f, 0.0f},
                              {0.2175f, 0.1983f, 0.1984f, 0.1888f, 0.1971f, 0.0f},
                              {0.1935f, 0.1663f, 0.1666f, 0.1542f, 0.1666f, 0.1529f}};  // (6, 6)
  return weights;
}

// The lesson's next step: softmax(masked / sqrt(d_k)) with d_k = 2, using attn's own functions.
Mat weights_of(const Mat& masked) { return attn::softmax_rows(attn::scale_scores(masked, 2)); }

}  // namespace

TEST_CASE("the worked example: the masked cell becomes -inf, the others stay") {
  const Mat scores = {{0.5f, 0.2f}, {0.1f, 0.9f}};  // (2, 2)
  const Mat mask = {{0, 1}, {0, 0}};                 // (2, 2)
  CHECK(same(masked_fill(scores, mask, -kInf), Mat{{0.5f, -kInf}, {0.1f, 0.9f}}, 0));
}

TEST_CASE("attn lesson causal, stage 5: the future set to -inf, every other score untouched") {
  const Mat printed = {{0.2899f, -kInf, -kInf, -kInf, -kInf, -kInf},
                       {0.4656f, 0.1723f, -kInf, -kInf, -kInf, -kInf},
                       {0.4594f, 0.1703f, 0.1731f, -kInf, -kInf, -kInf},
                       {0.2642f, 0.1024f, 0.1036f, 0.0186f, -kInf, -kInf},
                       {0.2183f, 0.0874f, 0.0882f, 0.0177f, 0.0786f, -kInf},
                       {0.3408f, 0.1270f, 0.1290f, 0.0198f, 0.1290f, 0.0078f}};  // (6, 6)
  CHECK(same(masked_fill(lesson_scores(), attn::causal_mask(6), -kInf), printed, 0));
}

TEST_CASE("attn lesson causal, stage 6: after softmax the future gets exactly 0") {
  CHECK(same(weights_of(masked_fill(lesson_scores(), attn::causal_mask(6), -kInf)), lesson_weights(), 1e-4));
}

TEST_CASE("attn lesson causal, stage 8: filling with -1e9 gives the same weights as -inf") {
  const Mat with_inf = weights_of(masked_fill(lesson_scores(), attn::causal_mask(6), -kInf));
  const Mat with_1e9 = weights_of(masked_fill(lesson_scores(), attn::causal_mask(6), -1e9f));
  CHECK(same(with_1e9, lesson_weights(), 1e-4));
  CHECK(same(with_1e9, with_inf, 0));  // not just close: exp(-1e9 / sqrt(2) - max) is exactly 0
}

TEST_CASE("attn lesson causal, stage 8: a fully masked row is NaN with -inf, uniform with -1e9") {
  const Mat row = {{0.2899f, 0.0716f, 0.0760f, -0.0138f, 0.1344f, -0.0511f}};  // (1, 6)
  const Mat all = {{1, 1, 1, 1, 1, 1}};                                         // (1, 6): nothing to see
  const float nan = std::numeric_limits<float>::quiet_NaN(), sixth = 1.0f / 6;
  CHECK(same(weights_of(masked_fill(row, all, -kInf)), Mat{{nan, nan, nan, nan, nan, nan}}, 0));
  CHECK(same(weights_of(masked_fill(row, all, -1e9f)), Mat{{sixth, sixth, sixth, sixth, sixth, sixth}}, 1e-6));
}

TEST_CASE("a mask of another shape is refused with std::invalid_argument") {
  CHECK_THROWS_AS(masked_fill(lesson_scores(), attn::causal_mask(5), -kInf), std::invalid_argument);
}
