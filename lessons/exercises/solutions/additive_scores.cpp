// Solution to additive-scores. The contract and a worked example are in ../additive_scores.cpp;
// try it there first (`attn hint additive-scores` helps).
//
// Shape legend: S source words, d_s decoder state width, d_h encoder state width,
// d_a alignment width.
#include <cmath>

#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;
using attn::Vec;

Vec additive_scores(const Vec& s, const Mat& H, const Mat& W_a, const Mat& U_a, const Vec& v_a) {
  const std::size_t S = H.shape()[0], d_h = H.shape()[1], d_a = W_a.shape()[0], d_s = W_a.shape()[1];

  // The query part does not depend on j: compute it once, not S times.
  Vec Ws = xt::zeros<float>({d_a});  // (d_a,)
  for (std::size_t a = 0; a < d_a; ++a)
    for (std::size_t i = 0; i < d_s; ++i) Ws(a) += W_a(a, i) * s(i);

  Vec e = xt::zeros<float>({S});  // (S,)
  for (std::size_t j = 0; j < S; ++j) {
    for (std::size_t a = 0; a < d_a; ++a) {
      float Uh = 0.0f;  // (U_a h_j)[a]
      for (std::size_t i = 0; i < d_h; ++i) Uh += U_a(a, i) * H(j, i);
      e(j) += v_a(a) * std::tanh(Ws(a) + Uh);  // query and key meet by addition, inside tanh
    }
  }
  return e;
}

}  // namespace exercise
