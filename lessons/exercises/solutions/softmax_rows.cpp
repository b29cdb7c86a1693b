// Solution to softmax-rows. The contract and a worked example are in ../softmax_rows.cpp; try
// it there first (`attn hint softmax-rows` helps).
//
// Shape legend: T query tokens (rows), S key tokens (columns).
#include <cmath>
#include <limits>

#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;

Mat softmax_rows(const Mat& scores) {
  const std::size_t T = scores.shape()[0], S = scores.shape()[1];
  Mat weights = xt::empty<float>({T, S});  // (T, S)
  for (std::size_t i = 0; i < T; ++i) {
    // Softmax is unchanged when a whole row moves by a constant. Moving it by its maximum makes
    // the largest exponent exp(0) = 1, so nothing overflows, and the sum is at least 1.
    float max = -std::numeric_limits<float>::infinity();
    for (std::size_t j = 0; j < S; ++j) max = std::fmax(max, scores(i, j));
    float sum = 0.0f;
    for (std::size_t j = 0; j < S; ++j) {
      weights(i, j) = std::exp(scores(i, j) - max);  // exp(-inf) = 0: a masked score gets nothing
      sum += weights(i, j);
    }
    for (std::size_t j = 0; j < S; ++j) weights(i, j) /= sum;
  }
  return weights;
}

}  // namespace exercise
