// The checks lessons share: a measured value, a bound chosen for a reason, and the verdict that
// report::Stage::check decides. The bounds are float32 rounding, stated once here.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/stats.hpp"
#include "report/stage.hpp"

namespace attn {

using report::Relation;

// A sum of n float32 terms near 1 may be off by about n units in the last place (2^-23 each);
// never ask for less than 1e-6.
inline double sum_tolerance(std::size_t n) {
  return std::max(1e-6, static_cast<double>(n) * std::ldexp(1.0, -23));
}

// Two float32 computations of the same quantity by different routes (fused vs per head, one
// order of sums vs another): they agree to float32 rounding, relative to the size of the values.
template <class E>
double rounding_tolerance(const E& reference) {
  double largest = 0.0;
  for (float v : reference) largest = std::fmax(largest, std::fabs(static_cast<double>(v)));
  // Rounded up to one significant digit, so the bound reads as a bound: 3e-05, not 2.21505e-05.
  const double raw = 1e-5 * std::max(1.0, largest);
  const double unit = std::pow(10.0, std::floor(std::log10(raw)));
  return std::ceil(raw / unit) * unit;
}

// Largest |sum - 1| over the rows of a weight tensor; NaN when any row sum is NaN.
template <std::size_t N>
double worst_row_sum_error(const xt::xtensor<float, N>& weights) {
  std::vector<double> sums;  // one per row; a vector is one row
  if constexpr (N == 1) {
    double sum = 0.0;
    for (float w : weights) sum += w;
    sums.push_back(sum);
  } else {
    const auto rows = row_sums(weights);  // (...)
    sums.assign(rows.begin(), rows.end());
  }
  double worst = 0.0;
  for (double s : sums) {
    const double e = std::fabs(s - 1.0);
    if (std::isnan(e)) return std::numeric_limits<double>::quiet_NaN();
    worst = std::fmax(worst, e);
  }
  return worst;
}

// check: every row of `name` sums to 1 (max |sum - 1| <= n ulps).
template <std::size_t N>
void check_rows_sum_to_one(report::Stage& s, const std::string& name, const xt::xtensor<float, N>& weights) {
  const std::size_t n = weights.dimension() ? weights.shape()[weights.dimension() - 1] : 1;
  s.check("every row of " + name + " sums to 1", "max |sum - 1|", worst_row_sum_error(weights), Relation::AtMost,
          sum_tolerance(n));
}

// check: `claim` (a and b are the same numbers computed two ways), to float32 rounding.
template <class A, class B>
void check_close(report::Stage& s, const std::string& claim, const A& a, const B& b) {
  s.check(claim, "max |diff|", max_abs_diff(a, b), Relation::AtMost, rounding_tolerance(b));
}

// check: `claim` (a and b are the very same bits: a copy, or the same arithmetic on the same inputs).
template <class A, class B>
void check_identical(report::Stage& s, const std::string& claim, const A& a, const B& b) {
  s.check(claim, "max |diff|", max_abs_diff(a, b), Relation::AtMost, 0.0);
}

}  // namespace attn
