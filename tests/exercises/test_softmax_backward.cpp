// Checks for exercise softmax-backward (lessons/exercises/softmax_backward.cpp): the backward pass
// of a row softmax from its output, against PyTorch's autograd and attn's own grad::softmax_rows_backward.
//
// Shape legend: T query tokens (rows), S key tokens (columns).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/generator.hpp"
#include "core/softmax.hpp"
#include "expect.hpp"

namespace exercise {
// Written by the learner in lessons/exercises/softmax_backward.cpp.
attn::Mat softmax_rows_backward(const attn::Mat& y, const attn::Mat& dy);
}  // namespace exercise

using attn::Mat;
using exercise::softmax_rows_backward;
using exercise::test::same;

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();
}

TEST_CASE("the worked example: a masked middle score, dy = [[2, 5, -1]] -> [[0.5898, 0, -0.5898]]") {
  // x = torch.tensor([[0., -inf, 1.]], requires_grad=True); x.softmax(-1).backward(dy); x.grad
  const Mat y = attn::softmax_rows(Mat{{0.0f, -kInf, 1.0f}});  // (1, 3)
  CHECK(same(softmax_rows_backward(y, Mat{{2.0f, 5.0f, -1.0f}}), Mat{{0.58983582f, 0.0f, -0.58983582f}}, 1e-6));
}

TEST_CASE("PyTorch's autograd on two rows") {
  // x = [[1, 2, 3], [0.5, -1, 2]]; y = x.softmax(-1); y.backward(dy); print(x.grad)   (PyTorch 1.13)
  const Mat y = attn::softmax_rows(Mat{{1.0f, 2.0f, 3.0f}, {0.5f, -1.0f, 2.0f}});  // (2, 3)
  const Mat dy = {{1.0f, 0.0f, 0.0f}, {0.2f, -0.4f, 1.0f}};                         // (2, 3)
  const Mat grad = {{0.08192507f, -0.02203305f, -0.05989202f}, {-0.10605246f, -0.04713104f, 0.15318350f}};
  CHECK(same(softmax_rows_backward(y, dy), grad, 1e-6));
}

TEST_CASE("a causal row: every future position gets exactly 0, and each row sums to 0") {
  attn::TorchGenerator gen(3);
  Mat scores = gen.rand(4, 4);  // (4, 4)
  for (std::size_t t = 0; t < 4; ++t)
    for (std::size_t s = t + 1; s < 4; ++s) scores(t, s) = -kInf;
  const Mat y = attn::softmax_rows(scores);  // (4, 4)
  Mat dy = gen.rand(4, 4);                   // (4, 4)
  const Mat dx = softmax_rows_backward(y, dy);
  REQUIRE(same(dx, attn::grad::softmax_rows_backward(y, dy), 1e-6));  // attn's own backward pass
  for (std::size_t t = 0; t < 4; ++t) {
    double row = 0;
    for (std::size_t s = 0; s < 4; ++s) row += dx(t, s);
    CHECK(std::fabs(row) < 1e-6);
    for (std::size_t s = t + 1; s < 4; ++s) CHECK(dx(t, s) == 0.0f);
  }
}

TEST_CASE("rows and columns are not mixed up: a (3, 5) case against attn's own backward pass") {
  attn::TorchGenerator gen(11);
  const Mat y = attn::softmax_rows(Mat(gen.rand(3, 5) * 6.0f - 3.0f));  // (3, 5)
  const Mat dy = gen.rand(3, 5);                                        // (3, 5)
  CHECK(same(softmax_rows_backward(y, dy), attn::grad::softmax_rows_backward(y, dy), 1e-6));
}

TEST_CASE("y and dy of different shapes are refused") {
  CHECK_THROWS_AS(softmax_rows_backward(Mat{{0.5f, 0.5f}}, Mat{{1.0f, 2.0f, 3.0f}}), std::invalid_argument);
}
