// Solution to general-scores. The contract and a worked example are in ../general_scores.cpp;
// try it there first (`attn hint general-scores` helps).
//
// Shape legend: S source words, d_t decoder state width, d_h encoder state width.
#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;
using attn::Vec;

Vec general_scores(const Vec& h_t, const Mat& W_a, const Mat& H) {
  const std::size_t d_t = W_a.shape()[0], d_h = W_a.shape()[1], S = H.shape()[0];

  // q = h_t^T W_a once: the decoder state turned into a query in the encoder's space.
  Vec q = xt::zeros<float>({d_h});  // (d_h,)
  for (std::size_t i = 0; i < d_t; ++i)
    for (std::size_t j = 0; j < d_h; ++j) q(j) += h_t(i) * W_a(i, j);

  // Then each score is a plain dot product with one encoder state.
  Vec e = xt::zeros<float>({S});  // (S,)
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t j = 0; j < d_h; ++j) e(s) += q(j) * H(s, j);
  return e;
}

}  // namespace exercise
