// GPT-2's and Llama's MLPs (see mlp.hpp).
//
// Legend: B batch, T tokens, d hidden size, f the MLP's hidden width.
#include "core/mlp.hpp"

#include <stdexcept>
#include <string>

#include "core/activation.hpp"

namespace attn {

Ten3 gpt2_mlp(const Gpt2Mlp& mlp, const Ten3& x) {
  if (mlp.c_fc.weight.shape()[1] != mlp.c_proj.weight.shape()[0])
    throw std::invalid_argument("gpt2_mlp: c_fc " + shape_of(mlp.c_fc.weight) + " and c_proj " +
                                shape_of(mlp.c_proj.weight) + " do not chain (d, f) then (f, d)");
  Ten3 hidden = conv1d(mlp.c_fc, x);           // (B, T, d) -> (B, T, f)
  gelu_new_inplace(hidden.data(), hidden.size());  // (B, T, f)
  return conv1d(mlp.c_proj, hidden);          // (B, T, f) -> (B, T, d)
}

Ten3 gated_mlp(const GatedMlp& mlp, const Ten3& x) {
  const auto& g = mlp.gate_proj.weight;
  const auto& u = mlp.up_proj.weight;
  const auto& dn = mlp.down_proj.weight;
  if (g.shape() != u.shape() || dn.shape()[1] != g.shape()[0] || x.shape()[2] != g.shape()[1])
    throw std::invalid_argument("gated_mlp: x " + shape_of(x) + ", gate_proj " + shape_of(g) + ", up_proj " +
                                shape_of(u) + ", down_proj " + shape_of(dn) +
                                ": need gate and up (f, d), down (d, f)");
  Ten3 gate = linear(mlp.gate_proj, x);  // (B, T, d) -> (B, T, f)
  const Ten3 up = linear(mlp.up_proj, x);  // (B, T, d) -> (B, T, f)
  float* a = gate.data();
  const float* b = up.data();
  for (std::size_t i = 0; i < gate.size(); ++i) a[i] = silu(a[i]) * b[i];  // silu(gate) * up: (B, T, f)
  return linear(mlp.down_proj, gate);                                     // (B, T, f) -> (B, T, d)
}

}  // namespace attn
