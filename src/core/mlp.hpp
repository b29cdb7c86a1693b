// The feed-forward half of a decoder layer, as Hugging Face's modules compute it:
//   gpt2_mlp(x)  = c_proj(gelu_new(c_fc(x)))                    GPT2MLP; Conv1D weights (in, out)
//   gated_mlp(x) = down_proj(silu(gate_proj(x)) * up_proj(x))   LlamaMLP / Qwen2MLP; nn.Linear
//                                                               weights (out, in), no biases
// The hidden width is 4d for GPT-2 (n_inner unset), the config's intermediate_size for Llama.
//
// Legend: B batch, T tokens, d hidden size, f the MLP's hidden width.
#pragma once

#include "core/conv1d.hpp"
#include "core/linear.hpp"
#include "core/tensor.hpp"

namespace attn {

struct Gpt2Mlp {
  Conv1D c_fc;    // (d, f), (f,)
  Conv1D c_proj;  // (f, d), (d,)
};

struct GatedMlp {
  Linear gate_proj;  // (f, d)
  Linear up_proj;    // (f, d)
  Linear down_proj;  // (d, f)
};

// (B, T, d) -> (B, T, d). Throw std::invalid_argument with the shapes when the weights do not chain.
Ten3 gpt2_mlp(const Gpt2Mlp& mlp, const Ten3& x);
Ten3 gated_mlp(const GatedMlp& mlp, const Ten3& x);

}  // namespace attn
