// Exercise general-scores (lesson: luong). Check it with: attn check general-scores
//
// PyTorch -> xtensor 0.24, for this exercise:
//   W_a.shape[1]               W_a.shape()[1]   (a std::size_t)
//   torch.zeros(S)             Vec e = xt::zeros<float>({S});
//   h_t @ W_a                  no @ in C++: loop, q(j) += h_t(i) * W_a(i, j)
//   q @ H[s]  (a dot product)  a loop over j of q(j) * H(s, j)
//
// Luong's "general" score puts one learned matrix between the decoder state and each encoder
// state. `attn lesson luong` prints it at stage 6 ("three scores for the same states") and, at
// stages 12-13, shows it is the transformer's Q K^T when W_a = W_query W_key^T: h_t^T W_a h_s
// = (h_t^T W_query) . (h_s^T W_key), a query dotted with a key. The tests check that bridge.
//
// Shape legend: S source words, d_t decoder state width, d_h encoder state width.
//
// Contract
//   general_scores(h_t, W_a, H)[s] = h_t^T W_a h_s,  h_s = row s of H
//   h_t (d_t,)       the decoder's current state
//   W_a (d_t, d_h)
//   H   (S, d_h)     one encoder state per source word
//   returns (S,)     one score per source word
//
// Worked example (d_t = d_h = 2, S = 2)
//   h_t = [1, 2], W_a = [[0, 1], [0, 0]], H = [[3, 4], [1, 0]]
//   h_t^T W_a = [0, 1]  ->  scores = [[0, 1] . [3, 4], [0, 1] . [1, 0]] = [4, 0]
//   (with W_a the identity, it is the dot score: [11, 1])
#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;
using attn::Vec;

Vec general_scores(const Vec& h_t, const Mat& W_a, const Mat& H) {
  // TODO: one score per row h_s of H: h_t^T W_a h_s.
  return {};  // TODO: return the (S,) scores instead of this empty vector.
}

}  // namespace exercise
