// Solution to dot-variance. The contract and a worked example are in ../dot_variance.cpp; try
// it there first (`attn hint dot-variance` helps).
//
// Shape legend: n pairs of vectors, d_k their width.
#include <vector>

#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;

double dot_variance(const Mat& q, const Mat& k) {
  const std::size_t n = q.shape()[0], d_k = q.shape()[1];
  if (n == 0) return 0.0;
  std::vector<double> dots(n);  // (n,)
  double sum = 0.0;
  for (std::size_t r = 0; r < n; ++r) {
    double dot = 0.0;  // in double: a float sum rounds 1e8 + 3 to 1e8 (the test has such rows)
    for (std::size_t j = 0; j < d_k; ++j) dot += static_cast<double>(q(r, j)) * k(r, j);
    dots[r] = dot;
    sum += dot;
  }
  const double mean = sum / static_cast<double>(n);
  double squares = 0.0;
  for (double d : dots) squares += (d - mean) * (d - mean);  // two passes: no cancellation
  return squares / static_cast<double>(n);
}

}  // namespace exercise
