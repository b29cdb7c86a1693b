// Measurements the lessons print as evidence: differences between two routes, row sums,
// entropy and the softmax Jacobian, sample variance.
#pragma once

#include <cmath>
#include <array>
#include <stdexcept>

#include "core/tensor.hpp"

namespace attn {

// max |a - b| over all elements; NaN if either side holds a NaN (a route that broke must not
// look equal). Shapes must match.
template <class A, class B>
float max_abs_diff(const A& a, const B& b) {
  if (to_shape(a.shape()) != to_shape(b.shape()))
    throw std::invalid_argument("max_abs_diff: shapes differ: " + shape_of(a) + " vs " + shape_of(b));
  float m = 0.0f;
  auto ib = b.begin();
  for (auto ia = a.begin(); ia != a.end(); ++ia, ++ib) {
    const float d = std::fabs(*ia - *ib);
    if (std::isnan(d)) return d;
    if (d > m) m = d;
  }
  return m;
}

// Sum over the last axis: (..., n) -> (...). Used to show that attention rows sum to 1.
template <std::size_t N>
xt::xtensor<float, N - 1> row_sums(const xt::xtensor<float, N>& x) {
  static_assert(N >= 2, "row_sums needs at least two axes");
  auto shape = x.shape();
  std::array<std::size_t, N - 1> out_shape{};
  for (std::size_t d = 0; d + 1 < N; ++d) out_shape[d] = shape[d];
  xt::xtensor<float, N - 1> out = xt::zeros<float>(out_shape);  // (...)
  const std::size_t n = shape[N - 1];
  for (std::size_t r = 0; r < out.size(); ++r) {
    float s = 0.0f;
    for (std::size_t j = 0; j < n; ++j) s += x.data()[r * n + j];
    out.data()[r] = s;
  }
  return out;
}

// -sum p log p, in nats; 0 log 0 counts as 0. log(n) for a uniform row of n.
double entropy(const Vec& p);
double entropy(const float* p, std::size_t n);  // the same over n contiguous values (a row, not copied)

// Frobenius norm of the softmax Jacobian d softmax / d logits = diag(p) - p p^T.
// Near 0 when one weight is ~1: almost no gradient flows back to the scores.
double softmax_jacobian_norm(const Vec& p);
double softmax_jacobian_norm(const float* p, std::size_t n);

// Mean and population variance of a set of samples (double accumulation).
struct Moments {
  double mean;
  double variance;
};
Moments moments(const Vec& samples);

}  // namespace attn
