// Exercise rnn-step (lesson: bottleneck). Check it with: attn check rnn-step
//
// PyTorch -> xtensor 0.24, for this exercise:
//   W_xh.shape[0]         W_xh.shape()[0]   (a std::size_t)
//   torch.zeros(d_h)      Vec h = xt::zeros<float>({d_h});
//   W[i, j], x[j]         W(i, j), x(j)
//   W @ x                 no @ in C++: loop, h(i) += W(i, j) * x(j) for each j
//   torch.tanh(h)         std::tanh(h(i)) for one entry
//
// The encoder of the RNN era reads a sentence one word at a time, and each step folds the new
// word into one state vector. `attn lesson bottleneck` prints this step at stages 3 to 8
// ("Encoder step 1: reads "the"", h_1 = tanh(W_xh x_1 + W_hh h_0 + b_h)). Write that step.
//
// Shape legend: d_in embedding width, d_h hidden width.
//
// Contract
//   rnn_step(W_xh, W_hh, b_h, x, h_prev) = tanh(W_xh x + W_hh h_prev + b_h), element by element
//   W_xh (d_h, d_in)  nn.RNNCell's weight_ih
//   W_hh (d_h, d_h)   nn.RNNCell's weight_hh
//   b_h  (d_h,)       bias_ih + bias_hh
//   x    (d_in,)      this step's word
//   h_prev (d_h,)     the previous state (zeros before the first word)
//   returns (d_h,)    the new state h_t
//
// Worked example (d_in 2, d_h 1)
//   W_xh = [[1, 0]], W_hh = [[0.5]], b_h = [0], x = [0.5, 2], h_prev = [1]
//   W_xh x = [0.5], W_hh h_prev = [0.5]  ->  h_t = [tanh(1.0)] = [0.7616]
#include <cmath>

#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;
using attn::Vec;

Vec rnn_step(const Mat& W_xh, const Mat& W_hh, const Vec& b_h, const Vec& x, const Vec& h_prev) {
  // TODO: compute h_t = tanh(W_xh x + W_hh h_prev + b_h), a (d_h,) vector.
  return {};  // TODO: return h_t instead of this empty (0,) vector.
}

}  // namespace exercise
