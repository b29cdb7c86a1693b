// Stable log-softmax, the mean cross-entropy, and its backward pass, softmax minus one-hot over N
// (see cross_entropy.hpp).
//
// Legend: N rows, V classes.
#include "core/cross_entropy.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace attn {

void check_cross_entropy_targets(const Shape& logits, const std::vector<std::size_t>& targets) {
  if (logits[0] == 0 || targets.size() != logits[0])
    throw std::invalid_argument("cross_entropy: " + std::to_string(targets.size()) + " targets for logits " +
                                shape_str(logits));
  std::size_t graded = 0;
  for (std::size_t t : targets) {
    if (t == kIgnoreTarget) continue;
    ++graded;
    if (t >= logits[1])
      throw std::invalid_argument("cross_entropy: target " + std::to_string(t) + " is not one of " +
                                  std::to_string(logits[1]) + " classes");
  }
  if (graded == 0) throw std::invalid_argument("cross_entropy: every target is ignored");
}

std::size_t graded_targets(const std::vector<std::size_t>& targets) {
  std::size_t n = 0;
  for (std::size_t t : targets) n += t != kIgnoreTarget;
  return n;
}

template <class T>
xt::xtensor<T, 2> log_softmax_rows(const xt::xtensor<T, 2>& logits) {
  const std::size_t N = logits.shape()[0], V = logits.shape()[1];
  xt::xtensor<T, 2> out = xt::empty<T>({N, V});  // (N, V)
  for (std::size_t n = 0; n < N; ++n) {
    const T* z = logits.data() + n * V;
    T top = z[0];
    for (std::size_t v = 1; v < V; ++v) top = std::max(top, z[v]);
    T sum = 0;
    for (std::size_t v = 0; v < V; ++v) sum += std::exp(z[v] - top);
    const T log_sum = std::log(sum);
    for (std::size_t v = 0; v < V; ++v) out(n, v) = z[v] - top - log_sum;
  }
  return out;
}

template <class T>
T cross_entropy(const T* logits, std::size_t N, std::size_t V, const std::vector<std::size_t>& targets) {
  check_cross_entropy_targets({N, V}, targets);
  // Summed in double: a mean over a few hundred rows keeps float32's full precision.
  double total = 0.0;
  for (std::size_t n = 0; n < N; ++n) {
    if (targets[n] == kIgnoreTarget) continue;
    // log_softmax(z)[target] = z[target] - max(z) - log(sum(exp(z - max(z)))), as log_softmax_rows
    const T* z = logits + n * V;
    T top = z[0];
    for (std::size_t v = 1; v < V; ++v) top = std::max(top, z[v]);
    T sum = 0;
    for (std::size_t v = 0; v < V; ++v) sum += std::exp(z[v] - top);
    const T log_sum = std::log(sum);
    total -= static_cast<double>(z[targets[n]] - top - log_sum);
  }
  return static_cast<T>(total / static_cast<double>(graded_targets(targets)));
}

template <class T>
T cross_entropy(const xt::xtensor<T, 2>& logits, const std::vector<std::size_t>& targets) {
  return cross_entropy(logits.data(), logits.shape()[0], logits.shape()[1], targets);
}

template xt::xtensor<float, 2> log_softmax_rows(const xt::xtensor<float, 2>&);
template xt::xtensor<double, 2> log_softmax_rows(const xt::xtensor<double, 2>&);
template float cross_entropy(const xt::xtensor<float, 2>&, const std::vector<std::size_t>&);
template double cross_entropy(const xt::xtensor<double, 2>&, const std::vector<std::size_t>&);
template float cross_entropy(const float*, std::size_t, std::size_t, const std::vector<std::size_t>&);
template double cross_entropy(const double*, std::size_t, std::size_t, const std::vector<std::size_t>&);

}  // namespace attn

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
