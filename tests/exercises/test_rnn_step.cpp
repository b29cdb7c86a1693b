// Checks for exercise rnn-step (lessons/exercises/rnn_step.cpp): one step of the tanh RNN.
// The last cases replay `attn lesson bottleneck` and compare with the states it printed.
//
// Shape legend: d_in embedding width, d_h hidden width.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "core/embedding.hpp"
#include "core/generator.hpp"
#include "core/rnn.hpp"
#include "expect.hpp"

namespace exercise {
// Written by the learner in lessons/exercises/rnn_step.cpp.
attn::Vec rnn_step(const attn::Mat& W_xh, const attn::Mat& W_hh, const attn::Vec& b_h, const attn::Vec& x,
                   const attn::Vec& h_prev);
}  // namespace exercise

using attn::Mat;
using attn::Vec;
using exercise::rnn_step;
using exercise::test::same;

TEST_CASE("the worked example: tanh(0.5 + 0.5 + 0)") {
  const Mat W_xh = {{1.0f, 0.0f}};  // (1, 2)
  const Mat W_hh = {{0.5f}};        // (1, 1)
  const Vec b_h = {0.0f}, x = {0.5f, 2.0f}, h_prev = {1.0f};
  CHECK(same(rnn_step(W_xh, W_hh, b_h, x, h_prev), Vec{std::tanh(1.0f)}));
}

TEST_CASE("the new state has d_h entries (one per row of W_xh), not d_in") {
  // d_in 4, d_h 2: unit 0 reads the first input, unit 1 the last; no past, no bias.
  const Mat W_xh = {{1, 0, 0, 0}, {0, 0, 0, 1}};  // (2, 4)
  const Mat W_hh = {{0, 0}, {0, 0}};              // (2, 2)
  const Vec b_h = {0, 0}, x = {0.1f, 0.2f, 0.3f, 0.4f}, h_prev = {0, 0};
  CHECK(same(rnn_step(W_xh, W_hh, b_h, x, h_prev), Vec{std::tanh(0.1f), std::tanh(0.4f)}));
}

TEST_CASE("the past comes in through W_hh, and the bias is added") {
  // W_hh swaps the two units; the input weights are zero, so only h_prev and b_h matter.
  const Mat W_xh = {{0}, {0}};         // (2, 1)
  const Mat W_hh = {{0, 1}, {1, 0}};   // (2, 2)
  const Vec b_h = {0.25f, -0.5f}, x = {3}, h_prev = {0.5f, -0.25f};
  CHECK(same(rnn_step(W_xh, W_hh, b_h, x, h_prev), Vec{std::tanh(-0.25f + 0.25f), std::tanh(0.5f - 0.5f)}));
  const Vec h_big = {100, -100};  // tanh keeps the state inside (-1, 1) however large the sum
  CHECK(same(rnn_step(W_xh, W_hh, Vec{0, 0}, x, h_big), Vec{-1, 1}));
}

namespace {

// The bottleneck lesson's encoder: torch.manual_seed(1); nn.RNNCell(4, 8).
struct LessonEncoder {
  attn::RnnCell cell;
  Vec b_h;  // (8,) bias_ih + bias_hh, the papers' single bias
};

LessonEncoder lesson_encoder() {
  attn::TorchGenerator gen(1);
  LessonEncoder e{attn::make_rnn_cell(gen, 4, 8), {}};
  e.b_h = e.cell.bias_ih + e.cell.bias_hh;  // (8,)
  return e;
}

}  // namespace

TEST_CASE("attn lesson bottleneck, stage 3: h_1 after reading \"the\"") {
  const LessonEncoder enc = lesson_encoder();
  const Vec h_0 = xt::zeros<float>({std::size_t{8}});         // (8,)
  const Vec x_1 = attn::word_embedding("the", 4);              // (4,)
  const Vec printed = {0.0116f, -0.3841f, 0.3123f, -0.0607f, 0.7455f, -0.2192f, 0.5052f, 0.4580f};
  // The lesson prints 4 decimals, hence the tolerance.
  CHECK(same(rnn_step(enc.cell.weight_ih, enc.cell.weight_hh, enc.b_h, x_1, h_0), printed, 1e-4));
}

TEST_CASE("attn lesson bottleneck, stage 6: h_4 after \"the cat sat on\"") {
  const LessonEncoder enc = lesson_encoder();
  Vec h = xt::zeros<float>({std::size_t{8}});  // (8,) h_0
  for (const std::string word : {"the", "cat", "sat", "on"}) {
    CAPTURE(word);
    h = rnn_step(enc.cell.weight_ih, enc.cell.weight_hh, enc.b_h, attn::word_embedding(word, 4), h);
    REQUIRE(h.size() == 8);  // a wrong shape would make the next step meaningless
  }
  const Vec printed = {0.1747f, -0.2724f, 0.4090f, 0.0302f, 0.6605f, -0.2936f, 0.5731f, 0.3636f};
  CHECK(same(h, printed, 1e-4));
}
