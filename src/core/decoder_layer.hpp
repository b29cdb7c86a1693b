// One decoder layer of a real model, as Hugging Face's modules compute it, with weights in
// Hugging Face's layouts (float32; a checkpoint reader upcasts bf16/f16 first):
//
//   GPT-2 (GPT2Block, pre-norm):
//     a = ln_1(x);  q | k | v = c_attn(a)            (Conv1D (d, 3d): q, k, v side by side)
//     attn_weights = softmax(q_i @ k_i^T / sqrt(hd) + causal mask)   per head i, hd = d / h
//     attn_out = c_proj(merge(attn_weights @ v));  residual = x + attn_out
//     output = residual + mlp(ln_2(residual)),  mlp = c_proj(gelu_new(c_fc(.)))
//   Llama / Qwen2 (LlamaDecoderLayer; Qwen2 adds biases to q, k and v):
//     a = input_layernorm(x)  (RMSNorm)
//     q = rope(q_proj(a)), k = rope(k_proj(a)), v = v_proj(a)      h query heads, h_kv kv heads
//     attn_weights = softmax(q_i @ k_g^T * hd^-0.5 + causal mask),  g = i / (h / h_kv)
//     attn_out = o_proj(merge(attn_weights @ v_g));  residual = x + attn_out
//     output = residual + down(silu(gate(b)) * up(b)),  b = post_attention_layernorm(residual)
//
// Two routes to the same numbers:
//  - with a LayerTrace, the lessons' path: heads split and transposed, then
//    scaled_dot_product_attention (GPT-2) or grouped_query_attention (Llama: kv heads read in
//    place), which materialise the (B, h, T, T) weights, kept with every other intermediate;
//  - without one, the fast path: attention_context_merged straight from the (B, T, h * hd)
//    projections (RoPE applied in that layout), no (T, T) buffer, no transposes.
// They agree to float32 rounding, not bit for bit (fast_attention.hpp says why).
//
// Mask: Hugging Face's eager attention fills masked scores with float32's lowest value
// (torch.finfo(float32).min); these paths use -inf. While every row sees at least one key (any
// causal mask over a whole sequence) both give exactly the same softmax: exp(lowest - max)
// underflows to 0 as exp(-inf) does. tests/core/test_model_layers.cpp checks it.
//
// Legend: B batch, T tokens, d hidden size, h query heads, h_kv key/value heads, hd head width
// (d / h for GPT-2; q_proj's rows / h for Llama, the config's head_dim), f the MLP's width.
#pragma once

#include <cstddef>

#include "core/conv1d.hpp"
#include "core/linear.hpp"
#include "core/mlp.hpp"
#include "core/norm.hpp"
#include "core/rope.hpp"
#include "core/tensor.hpp"

namespace attn {

// h.N of a GPT-2 checkpoint.
struct Gpt2Layer {
  LayerNorm ln_1;         // ln_1.weight, ln_1.bias (d,), eps layer_norm_epsilon
  Conv1D c_attn;          // attn.c_attn (d, 3d), (3d,)
  Conv1D c_proj;          // attn.c_proj (d, d), (d,)
  LayerNorm ln_2;         // ln_2 (d,)
  Gpt2Mlp mlp;            // mlp.c_fc (d, f), mlp.c_proj (f, d)
  std::size_t heads = 1;  // n_head
};

// model.layers.N of a Llama or Qwen2 checkpoint.
struct LlamaLayer {
  RmsNorm input_layernorm;           // (d,), eps rms_norm_eps
  Linear q_proj;                     // self_attn.q_proj (h * hd, d), bias (h * hd,) for Qwen2
  Linear k_proj;                     // self_attn.k_proj (h_kv * hd, d), bias for Qwen2
  Linear v_proj;                     // self_attn.v_proj (h_kv * hd, d), bias for Qwen2
  Linear o_proj;                     // self_attn.o_proj (d, h * hd), bias only with attention_bias
  RmsNorm post_attention_layernorm;  // (d,)
  GatedMlp mlp;                      // mlp.gate_proj, mlp.up_proj (f, d), mlp.down_proj (d, f)
  std::size_t heads = 1;             // num_attention_heads
  std::size_t kv_heads = 1;          // num_key_value_heads, divides heads
};

// Every intermediate a learner is shown, filled only on the lessons' path.
struct LayerTrace {
  Ten3 normed;        // (B, T, d)        ln_1(x) / input_layernorm(x)
  Ten3 q_proj;        // (B, T, h * hd)   the projections as the modules return them (GPT-2:
  Ten3 k_proj;        // (B, T, h_kv * hd) c_attn's three column blocks), before RoPE
  Ten3 v_proj;        // (B, T, h_kv * hd)
  Ten4 q;             // (B, h, T, hd)    after RoPE (Llama, Qwen2)
  Ten4 k;             // (B, h_kv, T, hd) after RoPE (Llama, Qwen2); h_kv = h for GPT-2
  Ten4 v;             // (B, h_kv, T, hd)
  Ten4 scores;        // (B, h, T, T)     q @ k^T / sqrt(hd), -inf above the diagonal
  Ten4 attn_weights;  // (B, h, T, T)     outputs.attentions[layer]
  Ten3 context;       // (B, T, h * hd)   heads merged, before the output projection
  Ten3 attn_out;      // (B, T, d)        after c_proj / o_proj
  Ten3 residual;      // (B, T, d)        x + attn_out
  Ten3 mlp_normed;    // (B, T, d)        ln_2 / post_attention_layernorm(residual)
  Ten3 mlp_out;       // (B, T, d)
  Ten3 output;        // (B, T, d)        residual + mlp_out
};

// Check that the weights fit together; return hd.
// Throw std::invalid_argument naming the shapes.
std::size_t gpt2_layer_head_width(const Gpt2Layer& layer);
std::size_t llama_layer_head_width(const LlamaLayer& layer);

// x (B, T, d) -> the layer's output (B, T, d), causal over the T tokens. With `trace`, the
// lessons' path, every intermediate kept in *trace; without, the fast path.
Ten3 gpt2_layer_forward(const Gpt2Layer& layer, const Ten3& x, LayerTrace* trace = nullptr);
// `rope`: tables for the T positions of x, width hd (rope_tables_from_inv_freq).
Ten3 llama_layer_forward(const LlamaLayer& layer, const Ten3& x, const RopeTables& rope,
                         LayerTrace* trace = nullptr);

}  // namespace attn
