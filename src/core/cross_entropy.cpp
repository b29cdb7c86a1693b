// Stable log-softmax and the mean cross-entropy (see cross_entropy.hpp).
//
// Legend: N rows, V classes.
#include "core/cross_entropy.hpp"

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
T cross_entropy(const xt::xtensor<T, 2>& logits, const std::vector<std::size_t>& targets) {
  check_cross_entropy_targets(to_shape(logits.shape()), targets);
  const xt::xtensor<T, 2> log_p = log_softmax_rows(logits);  // (N, V)
  // Summed in double: a mean over a few hundred rows keeps float32's full precision.
  double total = 0.0;
  for (std::size_t n = 0; n < targets.size(); ++n)
    if (targets[n] != kIgnoreTarget) total -= static_cast<double>(log_p(n, targets[n]));
  return static_cast<T>(total / static_cast<double>(graded_targets(targets)));
}

template xt::xtensor<float, 2> log_softmax_rows(const xt::xtensor<float, 2>&);
template xt::xtensor<double, 2> log_softmax_rows(const xt::xtensor<double, 2>&);
template float cross_entropy(const xt::xtensor<float, 2>&, const std::vector<std::size_t>&);
template double cross_entropy(const xt::xtensor<double, 2>&, const std::vector<std::size_t>&);

}  // namespace attn
