// Checks for exercise additive-scores (lessons/exercises/additive_scores.cpp): Bahdanau's
// e_j = v_a^T tanh(W_a s + U_a h_j). Values come from the worked example, from PyTorch (the
// scores_rnn fixture in tests/data) and from what `attn lesson bahdanau` printed.
//
// Shape legend: S source words, d_s decoder state width, d_h encoder state width,
// d_a alignment width.
#include <doctest/doctest.h>

#include <cmath>

#include <xtensor/xview.hpp>

#include "core/softmax.hpp"
#include "expect.hpp"
#include "support.hpp"

namespace exercise {
// Written by the learner in lessons/exercises/additive_scores.cpp.
attn::Vec additive_scores(const attn::Vec& s, const attn::Mat& H, const attn::Mat& W_a, const attn::Mat& U_a,
                          const attn::Vec& v_a);
}  // namespace exercise

using attn::Mat;
using attn::Vec;
using exercise::additive_scores;
using exercise::test::same;

namespace {

Mat identity(std::size_t n) {
  Mat I = xt::zeros<float>({n, n});  // (n, n)
  for (std::size_t i = 0; i < n; ++i) I(i, i) = 1.0f;
  return I;
}

}  // namespace

TEST_CASE("the worked example: e = [2 tanh(2), 2 tanh(0)]") {
  const Vec s = {1}, v_a = {2};
  const Mat H = {{1}, {-1}}, W_a = {{1}}, U_a = {{1}};  // H (2, 1)
  CHECK(same(additive_scores(s, H, W_a, U_a, v_a), Vec{2 * std::tanh(2.0f), 0.0f}));
}

TEST_CASE("one score per source word, whatever d_s, d_h and d_a are: PyTorch's scores_rnn") {
  using attn::test::load_fixture;
  // S 6, d_s 3, d_h 4, d_a 5: every width different, so a mixed-up axis cannot pass.
  const Vec s = load_fixture<1>("scores_rnn__s.npy");        // (3,)
  const Mat H = load_fixture<2>("scores_rnn__H.npy");        // (6, 4)
  const Mat W_a = load_fixture<2>("scores_rnn__W_a.npy");    // (5, 3)
  const Mat U_a = load_fixture<2>("scores_rnn__U_a.npy");    // (5, 4)
  const Vec v_a = load_fixture<1>("scores_rnn__v_a.npy");    // (5,)
  CHECK(same(additive_scores(s, H, W_a, U_a, v_a), load_fixture<1>("scores_rnn__e_additive.npy")));
}

TEST_CASE("attn lesson bahdanau, stage 5: e_1 from the printed W_a s_0, U_a h and v_a") {
  // With W_a = U_a = I, s stands for the printed W_a s_0 and row j of H for the printed U_a h_j,
  // so the function computes exactly the lesson's v_a . tanh(W_a s_0 + U_a h_j).
  const Vec Ws_0 = {0.1601f, 0.0221f, -0.1668f, -0.1173f, -0.1919f, 0.1087f, 0.0843f, 0.1099f};  // (8,)
  const Mat UH = {{0.1184f, -0.2765f, 0.0161f, -0.0863f, 0.0380f, 0.2576f, 0.3964f, 0.1444f},    // the
                  {0.0299f, -0.2974f, -0.0340f, -0.0225f, -0.0075f, 0.2380f, 0.4868f, 0.1312f},  // cat
                  {0.0738f, -0.3788f, -0.0966f, -0.0270f, 0.0392f, 0.2829f, 0.4855f, 0.2050f},   // sat
                  {0.2010f, -0.3664f, -0.0437f, -0.0518f, -0.0438f, 0.2940f, 0.4562f, 0.2514f},  // on
                  {0.0304f, -0.4629f, 0.0373f, -0.0691f, 0.0214f, 0.3206f, 0.5121f, 0.2871f},    // the
                  {0.0080f, -0.4297f, 0.1095f, -0.0243f, -0.0151f, 0.1802f, 0.4284f, 0.1890f}};  // mat
  const Vec v_a = {-0.2701f, -0.3002f, -0.1912f, -0.1654f, -0.0076f, -0.2048f, -0.2223f, -0.1163f};  // (8,)
  const Vec e_1 = {-0.1357f, -0.1183f, -0.1115f, -0.1532f, -0.1157f, -0.0895f};  // printed, (6,)
  // Inputs and outputs are rounded to 4 decimals in print, hence the tolerance.
  CHECK(same(additive_scores(Ws_0, UH, identity(8), identity(8), v_a), e_1, 3e-4));
}

TEST_CASE("when every key h_j is the same, every score is the same and the weights are uniform") {
  const Vec s = {0.3f, -0.7f};                                        // (2,)
  const Mat H = {{0.5f, 0.1f, -0.2f}, {0.5f, 0.1f, -0.2f}, {0.5f, 0.1f, -0.2f}, {0.5f, 0.1f, -0.2f}};  // (4, 3)
  const Mat W_a = {{0.2f, 0.4f}, {-0.6f, 0.1f}};                      // (2, 2)
  const Mat U_a = {{1.0f, -1.0f, 0.5f}, {0.3f, 0.2f, 0.1f}};           // (2, 3)
  const Vec v_a = {0.9f, -1.3f};                                      // (2,)
  const Vec e = additive_scores(s, H, W_a, U_a, v_a);       // (4,)
  const Mat row = xt::view(e, xt::newaxis(), xt::all());  // (4,) -> (1, 4)
  CHECK(same(attn::softmax_rows(row), Mat{{0.25f, 0.25f, 0.25f, 0.25f}}, 1e-6));
}
