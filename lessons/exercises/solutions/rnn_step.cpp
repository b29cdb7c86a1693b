// Solution to rnn-step. The contract and a worked example are in ../rnn_step.cpp; try it there
// first (`attn hint rnn-step` helps). `attn lesson bottleneck` prints the numbers this computes.
//
// Shape legend: d_in embedding width, d_h hidden width.
#include <cmath>

#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;
using attn::Vec;

Vec rnn_step(const Mat& W_xh, const Mat& W_hh, const Vec& b_h, const Vec& x, const Vec& h_prev) {
  const std::size_t d_h = W_hh.shape()[0], d_in = W_xh.shape()[1];
  Vec h = xt::empty<float>({d_h});  // (d_h,)
  for (std::size_t i = 0; i < d_h; ++i) {
    // One hidden unit: its bias, what it reads from the word, what it keeps from the past.
    float pre = b_h(i);
    for (std::size_t j = 0; j < d_in; ++j) pre += W_xh(i, j) * x(j);
    for (std::size_t j = 0; j < d_h; ++j) pre += W_hh(i, j) * h_prev(j);
    h(i) = std::tanh(pre);  // squashed into (-1, 1): the state cannot grow without bound
  }
  return h;
}

}  // namespace exercise
