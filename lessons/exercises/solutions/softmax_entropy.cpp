// Solution to softmax-entropy. The contract and a worked example are in ../softmax_entropy.cpp;
// try it there first (`attn hint softmax-entropy` helps).
//
// Shape legend: n entries in one row of weights.
#include <cmath>

#include "core/tensor.hpp"

namespace exercise {

using attn::Vec;

double softmax_entropy(const Vec& p) {
  double h = 0.0;
  for (float v : p)
    if (v > 0.0f) h -= static_cast<double>(v) * std::log(static_cast<double>(v));  // 0 log 0 = 0: skip it
  return h;
}

}  // namespace exercise
