#include "core/stats.hpp"

namespace attn {

double entropy(const Vec& p) {
  double h = 0.0;
  for (float v : p)
    if (v > 0.0f) h -= static_cast<double>(v) * std::log(static_cast<double>(v));
  return h;
}

double softmax_jacobian_norm(const Vec& p) {
  // ||diag(p) - p p^T||_F^2 = sum_i (p_i - p_i^2)^2 + sum_{i != j} p_i^2 p_j^2
  double sq = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i)
    for (std::size_t j = 0; j < p.size(); ++j) {
      const double pi = p(i), pj = p(j);
      const double jij = (i == j ? pi : 0.0) - pi * pj;
      sq += jij * jij;
    }
  return std::sqrt(sq);
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
