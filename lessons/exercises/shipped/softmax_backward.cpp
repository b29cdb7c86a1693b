// Exercise softmax-backward (lesson: learn-heads). Check it with: attn check softmax-backward
//
// PyTorch -> xtensor 0.24, for this exercise:
//   y.shape == dy.shape                 y.shape() == dy.shape()
//   torch.zeros_like(y)                 Mat dx = xt::zeros<float>(y.shape());
//   (dy * y).sum(dim=-1, keepdim=True)  per row t, a loop over j of dy(t, j) * y(t, j)
//   y * (dy - dot)                      dx(t, j) = y(t, j) * (dy(t, j) - dot);
//   raise ValueError(...)               throw std::invalid_argument("...");
//
// Training needs every forward step run backwards. `attn lesson learn-heads` does it at stage 4:
// from d loss / d attn_weights, the softmax's backward pass gives d loss / d scores, which then
// flows on into Q and K. You get the softmax's output y (the attention weights, which the forward
// pass keeps anyway) and the gradient dy of the loss with respect to y; return the gradient dx
// with respect to the scores x the softmax was applied to.
//
// Shape legend: T query tokens (rows), S key tokens (columns).
//
// Contract
//   y = softmax(x) by rows, so for one row  dy_i/dx_j = y_i (delta_ij - y_j), and
//   dx[t, j] = y[t, j] * (dy[t, j] - sum_i dy[t, i] * y[t, i])
//   y (T, S), dy (T, S) -> dx (T, S), the same shape
//   - a masked score (weight 0) gets gradient exactly 0: nothing flows to the future;
//   - every row of dx sums to 0 (adding a constant to a row of x does not change softmax);
//   - throw std::invalid_argument when y and dy have different shapes.
//
// Worked example (PyTorch: x.softmax(-1).backward(dy); x.grad)
//   y  = [[0.2689, 0, 0.7311]]   (softmax of [[0, -inf, 1]])
//   dy = [[2, 5, -1]]
//   sum dy * y = 2 * 0.2689 - 0.7311 = -0.1932
//   dx = [[0.2689 * (2 + 0.1932), 0, 0.7311 * (-1 + 0.1932)]] = [[0.5898, 0, -0.5898]]
#include <stdexcept>

#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;

Mat softmax_rows_backward(const Mat& y, const Mat& dy) {
  // TODO: check the shapes, then for each row: the dot product of dy and y, and dx from it.
  return {};  // TODO: return the (T, S) gradient instead of this empty (0, 0) tensor.
}

}  // namespace exercise
