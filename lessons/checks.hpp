// The sentences that put an invariant on screen, with the measured number beside it.
#pragma once

#include <cmath>
#include <string>

#include "core/stats.hpp"
#include "report/stage.hpp"

namespace attn {

// "every row of attn_weights sums to 1 (max |sum - 1| = 5.96e-08)"
template <std::size_t N>
std::string rows_sum_to_one(const std::string& name, const xt::xtensor<float, N>& weights) {
  const auto sums = row_sums(weights);  // (...)
  double worst = 0.0;
  for (float s : sums) worst = std::fmax(worst, std::fabs(static_cast<double>(s) - 1.0));
  return "every row of " + name + " sums to 1 (max |sum - 1| = " + report::scientific(worst, 2) + ")";
}

// "max |a - b| = 0.00e+00"
template <class A, class B>
std::string max_diff_text(const A& a, const B& b) {
  return "max |diff| = " + report::scientific(max_abs_diff(a, b), 2);
}

}  // namespace attn
