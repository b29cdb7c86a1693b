// Solution to scaled-scores. The contract and a worked example are in ../scaled_scores.cpp; try
// it there first (`attn hint scaled-scores` helps).
//
// Shape legend: T query tokens, S key tokens, d_k query/key width.
#include <cmath>
#include <stdexcept>

#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;

Mat scaled_scores(const Mat& queries, const Mat& keys) {
  const std::size_t T = queries.shape()[0], S = keys.shape()[0], d_k = keys.shape()[1];
  // A query can only be compared with a key of its own width; say which shapes clashed.
  if (queries.shape()[1] != d_k)
    throw std::invalid_argument("scaled_scores: queries " + attn::shape_of(queries) + " and keys " +
                                attn::shape_of(keys) + " differ in width");
  const float root = std::sqrt(static_cast<float>(d_k));  // in float, as PyTorch divides
  Mat scores = xt::empty<float>({T, S});  // (T, S)
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t j = 0; j < S; ++j) {
      float dot = 0.0f;
      for (std::size_t c = 0; c < d_k; ++c) dot += queries(i, c) * keys(j, c);
      scores(i, j) = dot / root;
    }
  return scores;
}

}  // namespace exercise
