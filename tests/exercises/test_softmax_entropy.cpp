// Checks for exercise softmax-entropy (lessons/exercises/softmax_entropy.cpp): -sum p log p,
// on hand-made rows and on `attn lesson scaling`'s stage 3, replayed draw for draw.
//
// Shape legend: R query rows, S keys per row, d_k query/key width.
#include <doctest/doctest.h>

#include <cmath>

#include <xtensor/xview.hpp>

#include "core/attention.hpp"
#include "core/generator.hpp"
#include "core/matmul.hpp"
#include "core/softmax.hpp"
#include "expect.hpp"

namespace exercise {
// Written by the learner in lessons/exercises/softmax_entropy.cpp.
double softmax_entropy(const attn::Vec& p);
}  // namespace exercise

using attn::Mat;
using attn::Vec;
using exercise::softmax_entropy;
using exercise::test::near;

TEST_CASE("the worked examples: log(4), log(2) with a zero weight, 0 for one-hot") {
  CHECK(near(softmax_entropy(Vec{0.25f, 0.25f, 0.25f, 0.25f}), std::log(4.0), 1e-7));
  CHECK(near(softmax_entropy(Vec{0.5f, 0.5f, 0.0f}), std::log(2.0), 1e-7));  // 0 log 0 counts as 0, not NaN
  CHECK(near(softmax_entropy(Vec{1.0f, 0.0f, 0.0f}), 0.0, 1e-12));
}

TEST_CASE("attn lesson scaling, stage 3: at most log(8) = 2.079, reached when all 8 keys are equal") {
  const Vec uniform = xt::ones<float>({std::size_t{8}}) / 8.0f;  // (8,)
  CHECK(near(softmax_entropy(uniform), 2.0794415, 1e-6));
  CHECK(near(softmax_entropy(Vec{0.7f, 0.1f, 0.1f, 0.1f}), 0.9404479, 1e-6));  // in between
}

TEST_CASE("attn lesson scaling, stage 3: mean entropy of unscaled vs scaled rows for each d_k") {
  attn::TorchGenerator gen(0);
  const std::size_t widths[] = {2, 8, 32, 128, 512};
  for (std::size_t d_k : widths) {  // stage 2 draws first; replay them to reach stage 3's numbers
    gen.randn(4096, d_k);
    gen.randn(4096, d_k);
  }
  const double printed_raw[] = {1.668, 1.127, 0.381, 0.239, 0.113};
  const double printed_scaled[] = {1.817, 1.860, 1.629, 1.749, 1.717};
  for (std::size_t w = 0; w < 5; ++w) {
    const std::size_t d_k = widths[w];
    CAPTURE(d_k);
    const Mat queries = gen.randn(256, d_k);                      // (R, d_k)
    const Mat keys = gen.randn(8, d_k);                           // (S, d_k)
    const Mat scores = attn::matmul_bt(queries, keys);            // (R, d_k) @ (d_k, S) -> (R, S)
    const Mat p_raw = attn::softmax_rows(scores);                 // (R, S)
    const Mat p_scaled = attn::softmax_rows(attn::scale_scores(scores, d_k));  // (R, S)
    double h_raw = 0.0, h_scaled = 0.0;
    for (std::size_t r = 0; r < 256; ++r) {
      h_raw += softmax_entropy(Vec(xt::view(p_raw, r)));        // (S,)
      h_scaled += softmax_entropy(Vec(xt::view(p_scaled, r)));  // (S,)
    }
    // Printed with 3 decimals.
    CHECK(near(h_raw / 256.0, printed_raw[w], 6e-4));
    CHECK(near(h_scaled / 256.0, printed_scaled[w], 6e-4));
  }
}
