// Exercise additive-scores (lesson: bahdanau). Check it with: attn check additive-scores
//
// PyTorch -> xtensor 0.24, for this exercise:
//   H.shape[0]                H.shape()[0]   (a std::size_t)
//   torch.zeros(d_a)          Vec u = xt::zeros<float>({d_a});
//   W_a @ s                   no @ in C++: loop, u(a) += W_a(a, i) * s(i)
//   H[j, i]                   H(j, i)
//   torch.tanh(x)             std::tanh(x(a)) for one entry
//   v_a @ t  (a dot product)  a loop over a of v_a(a) * t(a)
//
// Bahdanau's decoder scores every source word against its previous state s before choosing
// what to read. The query (W_a s) and the key (U_a h_j) meet by addition inside tanh, hence
// "additive". `attn lesson bahdanau` prints this at stage 5 ("Step 1: score every source
// word", e_1j = v_a^T tanh(W_a s_0 + U_a h_j)).
//
// Shape legend: S source words, d_s decoder state width, d_h encoder state width,
// d_a alignment width.
//
// Contract
//   additive_scores(s, H, W_a, U_a, v_a)[j] = v_a . tanh(W_a s + U_a h_j),  h_j = row j of H
//   s   (d_s,)       the decoder state
//   H   (S, d_h)     one encoder state per source word
//   W_a (d_a, d_s)
//   U_a (d_a, d_h)
//   v_a (d_a,)
//   returns e (S,)   one score per source word (softmax(e) are the alignment weights)
//
// Worked example (d_s = d_h = d_a = 1, S = 2)
//   s = [1], H = [[1], [-1]], W_a = [[1]], U_a = [[1]], v_a = [2]
//   W_a s = [1]; U_a h_1 = [1], U_a h_2 = [-1]
//   e = [2 tanh(1 + 1), 2 tanh(1 - 1)] = [1.9281, 0]
#include <cmath>

#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;
using attn::Vec;

Vec additive_scores(const Vec& s, const Mat& H, const Mat& W_a, const Mat& U_a, const Vec& v_a) {
  // TODO: one score per row h_j of H: e[j] = v_a . tanh(W_a s + U_a h_j).
  return {};  // TODO: return e, an (S,) vector, instead of this empty one.
}

}  // namespace exercise
