// Checks for exercise general-scores (lessons/exercises/general_scores.cpp): Luong's
// e_s = h_t^T W_a h_s, and the bridge the luong lesson ends on: with W_a = W_query W_key^T it is
// the query-key dot product of a transformer, and with W_a / sqrt(d_k) the scaled one.
//
// Shape legend: S source words, T target steps, d_t decoder state width, d_h encoder state
// width, d_k query/key width.
#include <doctest/doctest.h>

#include <cmath>

#include <xtensor/xview.hpp>

#include "core/attention.hpp"
#include "core/generator.hpp"
#include "core/matmul.hpp"
#include "core/softmax.hpp"
#include "expect.hpp"
#include "support.hpp"

namespace exercise {
// Written by the learner in lessons/exercises/general_scores.cpp.
attn::Vec general_scores(const attn::Vec& h_t, const attn::Mat& W_a, const attn::Mat& H);
}  // namespace exercise

using attn::Mat;
using attn::Vec;
using exercise::general_scores;
using exercise::test::same;

TEST_CASE("the worked example: [4, 0], and [11, 1] with W_a = I (the dot score)") {
  const Vec h_t = {1, 2};
  const Mat H = {{3, 4}, {1, 0}};  // (2, 2)
  CHECK(same(general_scores(h_t, Mat{{0, 1}, {0, 0}}, H), Vec{4, 0}));
  CHECK(same(general_scores(h_t, Mat{{1, 0}, {0, 1}}, H), Vec{11, 1}));
}

TEST_CASE("W_a need not be square: d_t 3, d_h 2") {
  const Vec h_t = {1, 0, 2};                    // (3,)
  const Mat W_a = {{1, 2}, {3, 4}, {5, 6}};     // (3, 2): h_t^T W_a = [11, 14]
  const Mat H = {{1, 0}, {0, 1}, {1, -1}};      // (3, 2)
  CHECK(same(general_scores(h_t, W_a, H), Vec{11, 14, -3}));
}

TEST_CASE("PyTorch's scores_rnn fixture (W_g is not symmetric, so a transposed W_a fails)") {
  using attn::test::load_fixture;
  const Vec h_t = load_fixture<1>("scores_rnn__h_t.npy");  // (4,)
  const Mat W_g = load_fixture<2>("scores_rnn__W_g.npy");  // (4, 4)
  const Mat H = load_fixture<2>("scores_rnn__H.npy");      // (6, 4)
  CHECK(same(general_scores(h_t, W_g, H), load_fixture<1>("scores_rnn__e_general.npy")));
}

TEST_CASE("the bridge: W_a = W_query W_key^T gives q . k, and W_a / sqrt(d_k) the scaled scores") {
  attn::TorchGenerator gen(2015);
  const std::size_t S = 5, d_h = 8, d_k = 4;
  const Mat W_query = gen.rand(d_h, d_k), W_key = gen.rand(d_h, d_k);  // (8, 4) each, as in the lesson
  const Vec h_t = gen.rand(d_h);                                      // (8,)
  const Mat H = gen.rand(S, d_h);                                     // (5, 8)

  // The transformer's route: one query, S keys, dot products.
  const Mat query = attn::matmul(Mat(xt::view(h_t, xt::newaxis(), xt::all())), W_query);  // (1, 8) @ (8, 4) -> (1, 4)
  const Mat keys = attn::matmul(H, W_key);                                                // (5, 8) @ (8, 4) -> (5, 4)
  const Mat qk = attn::matmul_bt(query, keys);                                            // (1, 5)
  const Vec expected = xt::view(qk, 0, xt::all());                                        // (5,)

  const Mat W_a = attn::matmul_bt(W_query, W_key);  // (8, 4) @ (4, 8) -> (8, 8)
  CHECK(same(general_scores(h_t, W_a, H), expected, 1e-4));

  const Mat W_a_scaled = attn::scale_scores(W_a, d_k);    // W_a / sqrt(d_k), (8, 8)
  const Vec expected_scaled = attn::scale_scores(expected, d_k);  // q . k / sqrt(d_k), (5,)
  CHECK(same(general_scores(h_t, W_a_scaled, H), expected_scaled, 1e-4));
}

TEST_CASE("attn lesson luong, stage 12: general_scores for \"le\" from the printed W_query, W_key, h_1, h_s") {
  const Mat W_query = {{0.6557f, 0.5181f, 0.5190f, 0.2448f}, {0.8660f, 0.7579f, 0.6825f, 0.6370f},
                       {0.8311f, 0.9217f, 0.9553f, 0.7637f}, {0.1005f, 0.5591f, 0.0228f, 0.7038f},
                       {0.1351f, 0.2165f, 0.8070f, 0.9824f}, {0.3943f, 0.1645f, 0.7029f, 0.6176f},
                       {0.9345f, 0.3733f, 0.6127f, 0.5958f}, {0.3883f, 0.3831f, 0.5547f, 0.2658f}};  // (8, 4)
  const Mat W_key = {{0.5355f, 0.4916f, 0.3054f, 0.7258f}, {0.5496f, 0.8082f, 0.8058f, 0.5253f},
                     {0.9868f, 0.5211f, 0.1481f, 0.8639f}, {0.2166f, 0.4042f, 0.7707f, 0.5137f},
                     {0.2128f, 0.9700f, 0.9159f, 0.7432f}, {0.8653f, 0.2104f, 0.0758f, 0.5031f},
                     {0.9551f, 0.5930f, 0.3712f, 0.1045f}, {0.0259f, 0.1606f, 0.1356f, 0.8611f}};  // (8, 4)
  const Vec h_1 = {0.3126f, 0.1230f, -0.2831f, -0.2221f, -0.2486f, -0.5001f, 0.1824f, -0.6742f};  // (8,)
  const Mat h_s = {{0.0783f, -0.1689f, 0.6313f, -0.3212f, 0.2279f, -0.1231f, -0.6870f, -0.3928f},   // the
                   {0.0578f, -0.0996f, 0.5109f, 0.1739f, 0.4301f, -0.1549f, -0.7249f, -0.6021f},    // cat
                   {0.3842f, -0.1438f, 0.5329f, 0.0632f, 0.3921f, -0.1660f, -0.6813f, -0.5555f},    // sat
                   {0.1627f, -0.0695f, 0.4391f, -0.0258f, 0.4381f, 0.0328f, -0.7113f, -0.5137f},    // on
                   {0.0766f, -0.0056f, 0.5347f, -0.1844f, 0.3270f, -0.0655f, -0.7762f, -0.4741f},   // the
                   {0.1252f, -0.1479f, 0.5713f, 0.0799f, 0.3596f, -0.0366f, -0.7149f, -0.4640f}};   // mat
  const Vec printed = {0.4169f, -0.2945f, -0.5109f, -0.3738f, 0.0236f, -0.3546f};  // row "le", (6,)
  // Every input was rounded to 4 decimals when printed; 64 products add up the rounding.
  CHECK(same(general_scores(h_1, attn::matmul_bt(W_query, W_key), h_s), printed, 1e-3));
}

TEST_CASE("when every key h_s is the same, the weights are uniform") {
  const Vec h_t = {0.4f, -1.2f, 0.7f};                              // (3,)
  const Mat W_a = {{0.1f, 0.9f}, {-0.3f, 0.5f}, {0.8f, -0.2f}};     // (3, 2)
  const Mat H = {{0.6f, -0.4f}, {0.6f, -0.4f}, {0.6f, -0.4f}};      // (3, 2), three copies of one state
  const Vec e = general_scores(h_t, W_a, H);                         // (3,)
  const Mat row = xt::view(e, xt::newaxis(), xt::all());            // (3,) -> (1, 3)
  CHECK(same(attn::softmax_rows(row), Mat{{1.0f / 3, 1.0f / 3, 1.0f / 3}}, 1e-6));
}
