// Solution to additive-grad. The contract and a worked example are in ../additive_grad.cpp;
// try it there first (`attn hint additive-grad` helps).
//
// Shape legend: S source words, d_s decoder state width, d_h encoder state width,
// d_a alignment width.
#include <cmath>

#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;
using attn::Vec;

namespace {

// t = tanh(W_a s + U_a h_j) for every j: (S, d_a). Both gradients need it.
Mat activations(const Vec& s, const Mat& H, const Mat& W_a, const Mat& U_a) {
  const std::size_t S = H.shape()[0], d_h = H.shape()[1], d_a = W_a.shape()[0], d_s = W_a.shape()[1];
  Vec Ws = xt::zeros<float>({d_a});  // (d_a,): the same for every j
  for (std::size_t a = 0; a < d_a; ++a)
    for (std::size_t i = 0; i < d_s; ++i) Ws(a) += W_a(a, i) * s(i);
  Mat t = xt::empty<float>({S, d_a});  // (S, d_a)
  for (std::size_t j = 0; j < S; ++j)
    for (std::size_t a = 0; a < d_a; ++a) {
      float pre = Ws(a);
      for (std::size_t i = 0; i < d_h; ++i) pre += U_a(a, i) * H(j, i);
      t(j, a) = std::tanh(pre);
    }
  return t;
}

}  // namespace

Vec additive_grad_v_a(const Vec& s, const Mat& H, const Mat& W_a, const Mat& U_a, const Vec& v_a, const Vec& d_e) {
  const Mat t = activations(s, H, W_a, U_a);  // (S, d_a)
  Vec g = xt::zeros<float>({v_a.size()});     // (d_a,)
  for (std::size_t j = 0; j < t.shape()[0]; ++j)
    for (std::size_t a = 0; a < g.size(); ++a) g(a) += d_e(j) * t(j, a);  // e_j is linear in v_a
  return g;
}

Vec additive_grad_s(const Vec& s, const Mat& H, const Mat& W_a, const Mat& U_a, const Vec& v_a, const Vec& d_e) {
  const Mat t = activations(s, H, W_a, U_a);  // (S, d_a)
  const std::size_t d_a = W_a.shape()[0], d_s = W_a.shape()[1];
  // dL/d(W_a s): W_a s is added to every row, so its gradient sums the rows' gradients.
  Vec g = xt::zeros<float>({d_a});  // (d_a,)
  for (std::size_t j = 0; j < t.shape()[0]; ++j)
    for (std::size_t a = 0; a < d_a; ++a) g(a) += d_e(j) * v_a(a) * (1.0f - t(j, a) * t(j, a));
  Vec d_s_out = xt::zeros<float>({d_s});  // (d_s,) = W_a^T g
  for (std::size_t a = 0; a < d_a; ++a)
    for (std::size_t i = 0; i < d_s; ++i) d_s_out(i) += W_a(a, i) * g(a);
  return d_s_out;
}

}  // namespace exercise
