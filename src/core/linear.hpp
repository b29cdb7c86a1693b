// nn.Linear: y = x @ weight^T + bias, with weight stored (out, in) as PyTorch stores it.
//
// Legend: B batch, T tokens, in/out the layer's widths.
#pragma once

#include "core/generator.hpp"
#include "core/tensor.hpp"

namespace attn {

struct Linear {
  Mat weight;  // (out, in)
  Vec bias;    // (out,), empty when the layer has no bias
  bool has_bias() const { return bias.size() != 0; }
};

// nn.Linear(in, out, bias): weight then bias drawn U(-1/sqrt(in), 1/sqrt(in)) from `gen`.
Linear make_linear(TorchGenerator& gen, std::size_t in, std::size_t out, bool bias);

// (B, T, in) -> (B, T, out)
Ten3 linear(const Linear& layer, const Ten3& x);

}  // namespace attn
