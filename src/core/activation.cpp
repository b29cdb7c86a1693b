// gelu_new and silu, one float at a time in PyTorch's order of operations (see activation.hpp).
#include "core/activation.hpp"

#include <cmath>

namespace attn {

float gelu_new(float x) {
  // math.sqrt(2.0 / math.pi) is a Python float (double); multiplying a float32 tensor rounds it to float.
  static const float kSqrt2OverPi = static_cast<float>(std::sqrt(2.0 / 3.14159265358979323846));
  const float cube = x * x * x;                     // torch.pow(x, 3.0): x * x * x in float
  const float inner = x + 0.044715f * cube;         // x + 0.044715 * x^3
  const float t = std::tanh(kSqrt2OverPi * inner);  // tanh(sqrt(2/pi) * inner)
  return 0.5f * x * (1.0f + t);                     // (0.5 * x) * (1 + t)
}

float silu(float x) { return x / (1.0f + std::exp(-x)); }

void gelu_new_inplace(float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = gelu_new(x[i]);
}

void silu_inplace(float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = silu(x[i]);
}

Ten3 gelu_new(const Ten3& x) {
  Ten3 y = x;  // (B, T, n)
  gelu_new_inplace(y.data(), y.size());
  return y;
}

Ten3 silu(const Ten3& x) {
  Ten3 y = x;  // (B, T, n)
  silu_inplace(y.data(), y.size());
  return y;
}

}  // namespace attn
