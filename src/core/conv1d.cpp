#include "core/conv1d.hpp"

#include <stdexcept>
#include <string>

#include "core/matmul.hpp"

namespace attn {

void add_bias_rows(float* y, std::size_t rows, const Vec& bias) {
  const std::size_t n = bias.size();
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t j = 0; j < n; ++j) y[r * n + j] += bias(j);
}

Ten3 conv1d(const Conv1D& layer, const Ten3& x) {
  const std::size_t in = layer.weight.shape()[0], out = layer.weight.shape()[1];
  if (x.shape()[2] != in || (layer.has_bias() && layer.bias.size() != out))
    throw std::invalid_argument("conv1d: x " + shape_of(x) + ", weight " + shape_of(layer.weight) + " (in, out), bias " +
                                shape_of(layer.bias) + ": x must end in `in` and bias be (out,)");
  Ten3 y = matmul(x, layer.weight);  // (B, T, in) @ (in, out) -> (B, T, out)
  if (layer.has_bias()) add_bias_rows(y.data(), y.size() / out, layer.bias);
  return y;
}

}  // namespace attn
