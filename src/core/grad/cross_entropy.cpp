// softmax minus one-hot, over N (see cross_entropy.hpp).
//
// Legend: N rows, V classes.
#include "core/grad/cross_entropy.hpp"

#include <algorithm>
#include <cmath>

#include "core/cross_entropy.hpp"

namespace attn::grad {

template <class T>
void cross_entropy_backward(const T* logits, std::size_t N, std::size_t V, const std::vector<std::size_t>& targets,
                            T* d_logits) {
  check_cross_entropy_targets({N, V}, targets);  // as the forward pass does
  const T inv_n = T(1) / static_cast<T>(graded_targets(targets));
  for (std::size_t n = 0; n < N; ++n) {
    T* d = d_logits + n * V;
    if (targets[n] == kIgnoreTarget) {  // not graded: no gradient at all
      std::fill(d, d + V, T(0));
      continue;
    }
    // softmax(z) as exp(log_softmax(z)), the stable form of core/cross_entropy.cpp
    const T* z = logits + n * V;
    T top = z[0];
    for (std::size_t v = 1; v < V; ++v) top = std::max(top, z[v]);
    T sum = 0;
    for (std::size_t v = 0; v < V; ++v) sum += std::exp(z[v] - top);
    const T log_sum = std::log(sum);
    for (std::size_t v = 0; v < V; ++v) d[v] = std::exp(z[v] - top - log_sum);
    d[targets[n]] -= T(1);
    for (std::size_t v = 0; v < V; ++v) d[v] *= inv_n;
  }
}

template <class T>
xt::xtensor<T, 2> cross_entropy_backward(const xt::xtensor<T, 2>& logits, const std::vector<std::size_t>& targets) {
  const std::size_t N = logits.shape()[0], V = logits.shape()[1];
  xt::xtensor<T, 2> d = xt::empty<T>({N, V});  // (N, V)
  cross_entropy_backward(logits.data(), N, V, targets, d.data());
  return d;
}

template xt::xtensor<float, 2> cross_entropy_backward(const xt::xtensor<float, 2>&, const std::vector<std::size_t>&);
template xt::xtensor<double, 2> cross_entropy_backward(const xt::xtensor<double, 2>&,
                                                       const std::vector<std::size_t>&);
template void cross_entropy_backward(const float*, std::size_t, std::size_t, const std::vector<std::size_t>&, float*);
template void cross_entropy_backward(const double*, std::size_t, std::size_t, const std::vector<std::size_t>&,
                                     double*);

}  // namespace attn::grad
