#include "core/linear.hpp"

#include <cmath>
#include <stdexcept>

#include "core/matmul.hpp"

namespace attn {

Linear make_linear(TorchGenerator& gen, std::size_t in, std::size_t out, bool bias) {
  if (in == 0 || out == 0)
    throw std::invalid_argument("make_linear: widths must be positive, got in " +
                                std::to_string(in) + ", out " + std::to_string(out));
  // kaiming_uniform_(a=sqrt(5)) reduces to U(-1/sqrt(in), 1/sqrt(in)); the bias uses the same bound.
  const float bound = static_cast<float>(1.0 / std::sqrt(static_cast<double>(in)));
  Linear layer;
  layer.weight = xt::empty<float>({out, in});  // (out, in)
  gen.uniform_(layer.weight.data(), layer.weight.size(), -bound, bound);
  if (bias) {
    layer.bias = xt::empty<float>({out});  // (out,)
    gen.uniform_(layer.bias.data(), layer.bias.size(), -bound, bound);
  }
  return layer;
}

Ten3 linear(const Linear& layer, const Ten3& x) {
  Ten3 y = matmul_bt(x, layer.weight);  // (B, T, in) @ (out, in)^T -> (B, T, out)
  if (layer.has_bias()) {
    const std::size_t out = layer.bias.size();
    for (std::size_t r = 0; r < y.size() / out; ++r)
      for (std::size_t j = 0; j < out; ++j) y.data()[r * out + j] += layer.bias(j);
  }
  return y;
}

}  // namespace attn
