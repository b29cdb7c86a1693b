// Solution to softmax-backward. The contract and a worked example are in ../softmax_backward.cpp;
// try it there first (`attn hint softmax-backward` helps).
//
// Shape legend: T query tokens (rows), S key tokens (columns).
#include <stdexcept>

#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;

Mat softmax_rows_backward(const Mat& y, const Mat& dy) {
  if (y.shape() != dy.shape())
    throw std::invalid_argument("softmax_rows_backward: y " + attn::shape_of(y) + " and dy " + attn::shape_of(dy) +
                                " differ");
  const std::size_t T = y.shape()[0], S = y.shape()[1];
  Mat dx = xt::empty<float>({T, S});  // (T, S)
  for (std::size_t t = 0; t < T; ++t) {
    // How much the row's output moves on average, weighted by the weights themselves: moving all
    // of a row's scores together changes nothing, so this part is taken out of every entry.
    float dot = 0.0f;
    for (std::size_t j = 0; j < S; ++j) dot += dy(t, j) * y(t, j);
    for (std::size_t j = 0; j < S; ++j) dx(t, j) = y(t, j) * (dy(t, j) - dot);  // y = 0 gives exactly 0
  }
  return dx;
}

}  // namespace exercise
