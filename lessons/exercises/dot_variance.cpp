// Exercise dot-variance (lesson: scaling). Check it with: attn check dot-variance
//
// PyTorch -> xtensor 0.24, for this exercise:
//   n, d_k = q.shape          q.shape()[0], q.shape()[1]
//   (q[r] * k[r]).sum()       a loop over j of double(q(r, j)) * k(r, j)
//   q.double()                static_cast<double>(q(r, j)), one entry at a time
//   dots.var(unbiased=False)  the mean of (dot - mean)^2: divide by n
//
// Why divide scores by sqrt(d_k)? Because a dot product of two random d_k-wide vectors adds d_k
// products, so its variance grows like d_k. `attn lesson scaling` measures it at stage 2 ("The
// variance of q . k grows with d_k": Var(q.k) = 2.03, 7.94, 30.91, 130.38, 514.29 for d_k = 2,
// 8, 32, 128, 512). Write the measurement; the tests replay the lesson's draws with it.
//
// Shape legend: n pairs of vectors, d_k their width.
//
// Contract
//   dot_variance(q, k) = the population variance of the n dot products q[r] . k[r]
//     dots[r] = sum_j q[r, j] * k[r, j]
//     mean    = sum_r dots[r] / n
//     result  = sum_r (dots[r] - mean)^2 / n           (divide by n, not n - 1)
//   q (n, d_k), k (n, d_k) -> a number; accumulate in double.
//
// Worked example (n 2, d_k 2)
//   q = [[1, 0], [0, 1]], k = [[2, 0], [0, 4]]
//   dots = [2, 4], mean = 3, variance = ((2 - 3)^2 + (4 - 3)^2) / 2 = 1
#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;

double dot_variance(const Mat& q, const Mat& k) {
  // TODO: the n dot products of matching rows, then their mean and population variance.
  return 0.0;  // TODO: return the variance instead of 0.
}

}  // namespace exercise
