// GPT-2's Conv1D: despite the name a linear layer, with its weight stored transposed against
// nn.Linear's:
//   y = x @ weight + bias      weight (in, out), bias (out,)
// (core/linear.hpp is nn.Linear: weight (out, in), y = x @ weight^T + bias.) Hugging Face's GPT-2
// checkpoints store attn.c_attn, attn.c_proj, mlp.c_fc and mlp.c_proj this way; the weights are
// used as stored, nothing is transposed.
//
// Legend: B batch, T tokens, in/out the layer's widths.
#pragma once

#include "core/tensor.hpp"

namespace attn {

struct Conv1D {
  Mat weight;  // (in, out)
  Vec bias;    // (out,), empty when the layer has no bias
  bool has_bias() const { return bias.size() != 0; }
};

// (B, T, in) -> (B, T, out). Throws std::invalid_argument with the shapes when they do not fit.
Ten3 conv1d(const Conv1D& layer, const Ten3& x);

// Adds bias (n,) to every row of y (rows, n): the "+ b" of Conv1D and nn.Linear.
void add_bias_rows(float* y, std::size_t rows, const Vec& bias);

}  // namespace attn
