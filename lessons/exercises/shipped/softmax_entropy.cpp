// Exercise softmax-entropy (lesson: scaling). Check it with: attn check softmax-entropy
//
// PyTorch -> xtensor 0.24, for this exercise:
//   p.numel()             p.size()   (every entry; p.shape()[0] for a (n,) vector)
//   p[i]                  p(i)
//   torch.log(p)          std::log(p(i)), one entry at a time
//   (-p * p.log()).sum()  a loop adding -p(i) * std::log(p(i)) in double, skipping p(i) == 0
//
// Entropy says how spread out a row of attention weights is: log(n) when all n keys get the
// same weight, 0 when one key takes everything. `attn lesson scaling` uses it at stage 3 to
// show unscaled softmax saturating as d_k grows (mean entropy 1.668 -> 0.113 from d_k = 2 to
// 512, while the scaled rows stay near 1.7). Write it; the tests replay that table's last row.
//
// Shape legend: n entries in one row of weights.
//
// Contract
//   softmax_entropy(p) = -sum_j p[j] * log(p[j]), natural log (nats), computed in double
//   p (n,) a row of weights (non-negative, summing to 1) -> a number
//   an entry p[j] = 0 contributes 0 (the limit of p log p), never NaN.
//
// Worked example
//   softmax_entropy([0.25, 0.25, 0.25, 0.25]) = -4 * 0.25 * log(0.25) = log(4) = 1.3863
//   softmax_entropy([0.5, 0.5, 0])            = log(2) = 0.6931
//   softmax_entropy([1, 0, 0])                = 0
#include <cmath>

#include "core/tensor.hpp"

namespace exercise {

using attn::Vec;

double softmax_entropy(const Vec& p) {
  // TODO: -sum p log p in double, with 0 log 0 counted as 0.
  return -1.0;  // TODO: return the entropy instead of -1 (entropy is never negative).
}

}  // namespace exercise
