// The backward pass of the mean cross-entropy (core/cross_entropy.hpp is the forward).
//
// For one row, loss_n = logsumexp(z_n) - z_n[target]; its gradient is softmax(z_n) minus the
// one-hot target: probability taken from the right class is pushed up, every other class down,
// each by how much the model believed in it. The mean divides every row's gradient by N, the
// number of graded rows (a row whose target is kIgnoreTarget gets zero and does not count):
//   dL/dz = (softmax(z) - onehot(targets)) / N
//
// Legend: N rows, V classes. T is float or double.
#pragma once

#include <vector>

#include "core/tensor.hpp"

namespace attn::grad {

// logits (N, V), targets (N,) -> dL/dlogits (N, V) for the mean loss over the graded rows.
template <class T>
xt::xtensor<T, 2> cross_entropy_backward(const xt::xtensor<T, 2>& logits, const std::vector<std::size_t>& targets);

}  // namespace attn::grad
