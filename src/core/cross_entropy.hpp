// Mean cross-entropy over logits, as nn.functional.cross_entropy(logits, targets) computes it:
//   loss = mean over rows n of ( logsumexp(z_n) - z_n[target_n] )
// with logsumexp(z) = max(z) + log(sum(exp(z - max(z)))), so logits of +-1e4 neither overflow
// nor lose the row's largest entry.
//
// Backward: for one row, loss_n = logsumexp(z_n) - z_n[target]; its gradient is softmax(z_n)
// minus the one-hot target: probability taken from the right class is pushed up, every other
// class down, each by how much the model believed in it. The mean divides every row's gradient
// by N, the number of graded rows (a row whose target is kIgnoreTarget gets zero and does not
// count):
//   dL/dz = (softmax(z) - onehot(targets)) / N
//
// Legend: N rows (every (batch, position) of a language model), V classes (the vocabulary).
// T is float (training) or double (the finite-difference tests).
#pragma once

#include <limits>
#include <vector>

#include "core/tensor.hpp"

namespace attn {

// A target that is not graded: its row adds nothing to the loss and gets no gradient, and the
// mean is over the other rows (F.cross_entropy's ignore_index, -100 in PyTorch).
constexpr std::size_t kIgnoreTarget = std::numeric_limits<std::size_t>::max();

// Throws std::invalid_argument unless there is one target per row of logits (N, V), each < V or
// kIgnoreTarget, and at least one is graded.
void check_cross_entropy_targets(const Shape& logits, const std::vector<std::size_t>& targets);

// How many targets are graded (not kIgnoreTarget).
std::size_t graded_targets(const std::vector<std::size_t>& targets);

// log_softmax by rows, stable: (N, V) -> (N, V).
template <class T>
xt::xtensor<T, 2> log_softmax_rows(const xt::xtensor<T, 2>& logits);

// logits (N, V), targets (N,) each < V or kIgnoreTarget -> the mean loss over the graded rows. Throws std::invalid_argument for a
// target out of range, no rows, or a size mismatch.
template <class T>
T cross_entropy(const xt::xtensor<T, 2>& logits, const std::vector<std::size_t>& targets);

// The same over N rows of V logits stored row after row at `logits`, read in place: a model's
// (B, T, V) logits are N = B * T such rows, and a training step copies none of them.
template <class T>
T cross_entropy(const T* logits, std::size_t N, std::size_t V, const std::vector<std::size_t>& targets);

}  // namespace attn

// The backward pass lives in namespace attn::grad, beside its forward pass.
namespace attn::grad {

// logits (N, V), targets (N,) -> dL/dlogits (N, V) for the mean loss over the graded rows.
template <class T>
xt::xtensor<T, 2> cross_entropy_backward(const xt::xtensor<T, 2>& logits, const std::vector<std::size_t>& targets);

// The same over N rows of V logits read in place at `logits`, written to the N * V numbers at
// `d_logits` (a model's (B, T, V) logits and their gradient, with no copy either way).
template <class T>
void cross_entropy_backward(const T* logits, std::size_t N, std::size_t V, const std::vector<std::size_t>& targets,
                            T* d_logits);

}  // namespace attn::grad
