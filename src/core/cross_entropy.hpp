// Mean cross-entropy over logits, as nn.functional.cross_entropy(logits, targets) computes it:
//   loss = mean over rows n of ( logsumexp(z_n) - z_n[target_n] )
// with logsumexp(z) = max(z) + log(sum(exp(z - max(z)))), so logits of +-1e4 neither overflow
// nor lose the row's largest entry. Its backward pass is in core/grad/cross_entropy.hpp.
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

}  // namespace attn
