// Checks for exercise dot-variance (lessons/exercises/dot_variance.cpp): the variance of q . k
// over many pairs. The main case replays `attn lesson scaling`'s draws (torch.manual_seed(0),
// torch.randn) and compares with the variances it printed at stage 2.
//
// Shape legend: n pairs of vectors, d_k their width.
#include <doctest/doctest.h>

#include <cmath>

#include "core/generator.hpp"
#include "expect.hpp"

namespace exercise {
// Written by the learner in lessons/exercises/dot_variance.cpp.
double dot_variance(const attn::Mat& q, const attn::Mat& k);
}  // namespace exercise

using attn::Mat;
using exercise::dot_variance;
using exercise::test::near;

TEST_CASE("the worked example: dots [2, 4] have variance 1 (divided by n = 2, not n - 1)") {
  const Mat q = {{1, 0}, {0, 1}}, k = {{2, 0}, {0, 4}};  // (2, 2) each
  CHECK(near(dot_variance(q, k), 1.0, 1e-12));
}

TEST_CASE("only matching rows are multiplied: dots [3, -1, 0]") {
  const Mat q = {{1, 1, 1}, {1, -1, 0}, {0, 0, 0}};  // (3, 3)
  const Mat k = {{1, 1, 1}, {0, 1, 5}, {9, 9, 9}};   // (3, 3)
  // mean 2/3; squares (7/3)^2 + (5/3)^2 + (2/3)^2 = 78/9, divided by 3
  CHECK(near(dot_variance(q, k), 78.0 / 27.0, 1e-6));
}

TEST_CASE("the sums are kept in double: a float sum rounds 1e8 + 3 to 1e8 and loses the dot product") {
  // Each row holds +1e8 and -1e8 around a small entry, so q . k is that entry exactly (k is all
  // ones). Floats near 1e8 are 8 apart: summed in float, 1e8 + 3 is already 1e8, every dot product
  // comes out 0 and so does the variance. In double the sum is exact: dots 1, 2, 3, 4.
  const Mat q = {{1e8f, 1, -1e8f}, {1e8f, 2, -1e8f}, {1e8f, 3, -1e8f}, {1e8f, 4, -1e8f}};  // (4, 3)
  const Mat k = {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}};                           // (4, 3)
  // mean 2.5; squares 2.25 + 0.25 + 0.25 + 2.25 = 5, divided by 4
  CHECK(near(dot_variance(q, k), 1.25, 1e-12));
}

TEST_CASE("attn lesson scaling, stage 2: Var(q.k) grows like d_k, Var(q.k / sqrt(d_k)) stays near 1") {
  // The lesson's draws, in its order: torch.manual_seed(0), then for each d_k
  // q = torch.randn(4096, d_k); k = torch.randn(4096, d_k).
  attn::TorchGenerator gen(0);
  const std::size_t widths[] = {2, 8, 32, 128, 512};
  const double printed_raw[] = {2.0254, 7.9357, 30.9061, 130.3755, 514.2939};
  const double printed_scaled[] = {1.0127, 0.9920, 0.9658, 1.0186, 1.0045};
  for (std::size_t w = 0; w < 5; ++w) {
    const std::size_t d_k = widths[w];
    CAPTURE(d_k);
    const Mat q = gen.randn(4096, d_k);  // (4096, d_k)
    const Mat k = gen.randn(4096, d_k);  // (4096, d_k)
    const double var = dot_variance(q, k);
    // Printed with 4 decimals from float dot products: allow a relative 2e-4.
    CHECK(near(var, printed_raw[w], 2e-4 * printed_raw[w]));
    CHECK(near(var / static_cast<double>(d_k), 1.0, 0.1));  // the point of the stage: Var ~ d_k

    Mat q_scaled = q;  // (4096, d_k): (q / sqrt(d_k)) . k = (q . k) / sqrt(d_k)
    for (float& v : q_scaled) v /= std::sqrt(static_cast<float>(d_k));
    CHECK(near(dot_variance(q_scaled, k), printed_scaled[w], 2e-4));
  }
}
