#include "core/stats.hpp"

#include <algorithm>

namespace attn {

double entropy(const Vec& p) { return entropy(p.data(), p.size()); }

double entropy(const float* p, std::size_t n) {
  double h = 0.0;
  for (std::size_t i = 0; i < n; ++i)
    if (p[i] > 0.0f) h -= static_cast<double>(p[i]) * std::log(static_cast<double>(p[i]));
  return h;
}

double softmax_jacobian_norm(const Vec& p) { return softmax_jacobian_norm(p.data(), p.size()); }

double softmax_jacobian_norm(const float* p, std::size_t n) {
  // ||diag(p) - p p^T||_F^2 = sum_i p_i^2 - 2 sum_i p_i^3 + (sum_i p_i^2)^2: O(n), not O(n^2),
  // so long rows (the scaling lesson's --seq-len) stay cheap.
  double sq = 0.0, cube = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = p[i];
    sq += x * x;
    cube += x * x * x;
  }
  return std::sqrt(std::max(0.0, sq - 2.0 * cube + sq * sq));
}

Moments moments(const Vec& samples) {
  if (samples.size() == 0) throw std::invalid_argument("moments: no samples");
  double mean = 0.0;
  for (float v : samples) mean += v;
  mean /= static_cast<double>(samples.size());
  double var = 0.0;
  for (float v : samples) var += (v - mean) * (v - mean);
  return {mean, var / static_cast<double>(samples.size())};
}

}  // namespace attn
