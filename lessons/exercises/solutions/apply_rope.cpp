// Solution to apply-rope. The contract and a worked example are in ../apply_rope.cpp; try it
// there first (`attn hint apply-rope` helps).
//
// Shape legend: T tokens, d_k head width (even), P = d_k / 2 pairs.
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;

Mat apply_rope(const Mat& x, std::size_t offset, float theta) {
  const std::size_t T = x.shape()[0], d_k = x.shape()[1], P = d_k / 2;
  if (d_k % 2 != 0) throw std::invalid_argument("apply_rope: d_k must be even, got " + std::to_string(d_k));
  Mat out = xt::empty<float>({T, d_k});  // (T, d_k)
  for (std::size_t i = 0; i < P; ++i) {
    // In float, as PyTorch builds the tables: 1.0 / theta ** (arange(0, d_k, 2).float() / d_k).
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(d_k);
    const float inv_freq = 1.0f / std::pow(theta, exponent);
    for (std::size_t t = 0; t < T; ++t) {
      const float angle = static_cast<float>(offset + t) * inv_freq;  // position times frequency
      const float c = std::cos(angle), s = std::sin(angle);
      const float a = x(t, i), b = x(t, i + P);  // the pair (i, i + P), Llama's rotate_half layout
      out(t, i) = a * c - b * s;
      out(t, i + P) = b * c + a * s;
    }
  }
  return out;
}

}  // namespace exercise
