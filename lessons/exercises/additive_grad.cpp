// Exercise additive-grad (lesson: align). Check it with: attn check additive-grad
//
// PyTorch -> xtensor 0.24, for this exercise:
//   H.shape[0]            H.shape()[0]   (a std::size_t)
//   torch.zeros(d_a)      Vec g = xt::zeros<float>({d_a});
//   W_a @ s               no @ in C++: loop, u(a) += W_a(a, i) * s(i)
//   W_a.T @ g             no .T: loop with the indices swapped, d_s(i) += W_a(a, i) * g(a)
//   torch.tanh(x)         std::tanh(x(a)) for one entry
//
// To train Bahdanau's alignment model, the loss has to reach its parameters through the scores.
// Backward from the context and the softmax you get dL/de, one number per source word: how much
// the loss would change if score e_j moved. This exercise takes that one step further back,
// through e_j = v_a . tanh(W_a s + U_a h_j), to the vector v_a and to the decoder state s.
// `attn lesson align` prints the norms of these gradients at stage 5 ("One backward pass").
//
// Shape legend: S source words, d_s decoder state width, d_h encoder state width,
// d_a alignment width.
//
// Contract (pre_j = W_a s + U_a h_j and t_j = tanh(pre_j), both (d_a,); h_j = row j of H)
//   additive_grad_v_a(s, H, W_a, U_a, v_a, d_e) = dL/dv_a = sum_j d_e[j] t_j                  (d_a,)
//   additive_grad_s(s, H, W_a, U_a, v_a, d_e)   = dL/ds   = W_a^T sum_j d_e[j] v_a * (1 - t_j^2)  (d_s,)
//   s (d_s,), H (S, d_h), W_a (d_a, d_s), U_a (d_a, d_h), v_a (d_a,), d_e (S,)
//   (* is entry by entry; 1 - tanh^2 is the slope of tanh)
//
// Worked example (d_s = d_h = d_a = 1, S = 2; the additive-scores example)
//   s = [1], H = [[1], [-1]], W_a = [[1]], U_a = [[1]], v_a = [2], d_e = [1, 0.5]
//   pre = [2, 0], t = [tanh(2), 0] = [0.9640, 0]
//   dL/dv_a = 1 * 0.9640 + 0.5 * 0 = [0.9640]
//   dL/ds   = 1 * (1 * 2 * (1 - 0.9640^2) + 0.5 * 2 * (1 - 0^2)) = [1.1413]
#include <cmath>

#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;
using attn::Vec;

Vec additive_grad_v_a(const Vec& s, const Mat& H, const Mat& W_a, const Mat& U_a, const Vec& v_a, const Vec& d_e) {
  // TODO: for every j, t_j = tanh(W_a s + U_a h_j); add d_e[j] * t_j into the result.
  return {};  // TODO: return dL/dv_a, a (d_a,) vector, instead of this empty one.
}

Vec additive_grad_s(const Vec& s, const Mat& H, const Mat& W_a, const Mat& U_a, const Vec& v_a, const Vec& d_e) {
  // TODO: g = sum_j d_e[j] * v_a * (1 - t_j^2), a (d_a,) vector; then dL/ds = W_a^T g.
  return {};  // TODO: return dL/ds, a (d_s,) vector, instead of this empty one.
}

}  // namespace exercise
