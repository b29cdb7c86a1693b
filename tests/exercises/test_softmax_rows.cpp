// Checks for exercise softmax-rows (lessons/exercises/softmax_rows.cpp): a numerically stable
// softmax over each row, checked against `attn lesson self-attention` and at +-1e4.
//
// Shape legend: T query tokens (rows), S key tokens (columns), d_in embedding width.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "core/generator.hpp"
#include "core/matmul.hpp"
#include "core/softmax.hpp"
#include "expect.hpp"

namespace exercise {
// Written by the learner in lessons/exercises/softmax_rows.cpp.
attn::Mat softmax_rows(const attn::Mat& scores);
}  // namespace exercise

using attn::Mat;
using exercise::softmax_rows;
using exercise::test::same;

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();
}

TEST_CASE("the worked example: [[1, 1], [0, ln 3]] -> [[0.5, 0.5], [0.25, 0.75]]") {
  const Mat scores = {{1.0f, 1.0f}, {0.0f, std::log(3.0f)}};  // (2, 2)
  CHECK(same(softmax_rows(scores), Mat{{0.5f, 0.5f}, {0.25f, 0.75f}}, 1e-6));
}

TEST_CASE("scores of +-1e4 stay finite: the largest entry of each row is subtracted first") {
  const Mat scores = {{1e4f, 0.0f, -1e4f},     // exp(1e4) overflows float: inf / inf = nan
                      {-1e4f, -1e4f, -1e4f},   // exp(-1e4) underflows to 0: 0 / 0 = nan
                      {1e4f, 1e4f, 0.0f}};     // (3, 3)
  const Mat expected = {{1.0f, 0.0f, 0.0f}, {1.0f / 3, 1.0f / 3, 1.0f / 3}, {0.5f, 0.5f, 0.0f}};
  CHECK(same(softmax_rows(scores), expected, 1e-6));
}

TEST_CASE("attn lesson self-attention, stage 3: attn_weights = softmax(x @ x^T)") {
  // The book's embeddings of "Your journey starts with one step" (stage 1).
  const Mat x = {{0.43f, 0.15f, 0.89f}, {0.55f, 0.87f, 0.66f}, {0.57f, 0.85f, 0.64f},
                 {0.22f, 0.58f, 0.33f}, {0.77f, 0.25f, 0.10f}, {0.05f, 0.80f, 0.55f}};  // (6, 3)
  const Mat attn_scores = attn::matmul_bt(x, x);  // (6, 3) @ (3, 6) -> (6, 6), stage 2
  const Mat printed = {{0.2098f, 0.2006f, 0.1981f, 0.1242f, 0.1220f, 0.1452f},
                       {0.1385f, 0.2379f, 0.2333f, 0.1240f, 0.1082f, 0.1581f},
                       {0.1390f, 0.2369f, 0.2326f, 0.1242f, 0.1108f, 0.1565f},
                       {0.1435f, 0.2074f, 0.2046f, 0.1462f, 0.1263f, 0.1720f},
                       {0.1526f, 0.1958f, 0.1975f, 0.1367f, 0.1879f, 0.1295f},
                       {0.1385f, 0.2184f, 0.2128f, 0.1420f, 0.0988f, 0.1896f}};  // (6, 6)
  CHECK(same(softmax_rows(attn_scores), printed, 1e-4));  // printed with 4 decimals
}

TEST_CASE("a -inf score gets weight exactly 0, and the rest share the row") {
  const Mat scores = {{0.0f, -kInf, 0.0f}, {2.0f, -kInf, -kInf}};  // (2, 3)
  CHECK(same(softmax_rows(scores), Mat{{0.5f, 0.0f, 0.5f}, {1.0f, 0.0f, 0.0f}}, 0));
}

TEST_CASE("when every key scores the same, the weights are uniform: 1/S") {
  const Mat scores = {{7.25f, 7.25f, 7.25f, 7.25f, 7.25f}, {-3.0f, -3.0f, -3.0f, -3.0f, -3.0f}};  // (2, 5)
  CHECK(same(softmax_rows(scores), Mat{{0.2f, 0.2f, 0.2f, 0.2f, 0.2f}, {0.2f, 0.2f, 0.2f, 0.2f, 0.2f}}, 1e-6));
}

TEST_CASE("rows and columns are not mixed up: a (3, 7) matrix, row by row") {
  attn::TorchGenerator gen(5);
  Mat scores = gen.rand(3, 7);          // (3, 7)
  for (float& v : scores) v = 8.0f * v - 4.0f;  // spread over [-4, 4)
  CHECK(same(softmax_rows(scores), attn::softmax_rows(scores), 1e-6));  // attn's own softmax
}
