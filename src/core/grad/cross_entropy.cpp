// softmax minus one-hot, over N (see cross_entropy.hpp).
//
// Legend: N rows, V classes.
#include "core/grad/cross_entropy.hpp"

#include <cmath>

#include "core/cross_entropy.hpp"

namespace attn::grad {

template <class T>
xt::xtensor<T, 2> cross_entropy_backward(const xt::xtensor<T, 2>& logits, const std::vector<std::size_t>& targets) {
  check_cross_entropy_targets(to_shape(logits.shape()), targets);  // as the forward pass does
  xt::xtensor<T, 2> d = log_softmax_rows(logits);  // (N, V), then exp: the probabilities
  const std::size_t N = d.shape()[0], V = d.shape()[1];
  const T inv_n = T(1) / static_cast<T>(graded_targets(targets));
  for (std::size_t n = 0; n < N; ++n) {
    if (targets[n] == kIgnoreTarget) {  // not graded: no gradient at all
      for (std::size_t v = 0; v < V; ++v) d(n, v) = T(0);
      continue;
    }
    for (std::size_t v = 0; v < V; ++v) d(n, v) = std::exp(d(n, v));
    d(n, targets[n]) -= T(1);
    for (std::size_t v = 0; v < V; ++v) d(n, v) *= inv_n;
  }
  return d;
}

template xt::xtensor<float, 2> cross_entropy_backward(const xt::xtensor<float, 2>&, const std::vector<std::size_t>&);
template xt::xtensor<double, 2> cross_entropy_backward(const xt::xtensor<double, 2>&,
                                                       const std::vector<std::size_t>&);

}  // namespace attn::grad
