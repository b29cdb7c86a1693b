// A tiny causal language model made only of the pieces the lessons teach, with its forward pass
// (keeping every activation) and its backward pass (every parameter's gradient):
//   x      = tok[ids] + pos[0..T-1]                                  token + position embeddings
//   for each block:                                                  (one block = one layer)
//     Q, K, V = x @ W_query^T, x @ W_key^T, x @ W_value^T, split into h heads
//     context = softmax(Q K^T / sqrt(d_k), causal) @ V, heads merged
//     x       = x + out_proj(context)                                the residual
//   logits = x @ unembed^T
//   loss   = mean cross-entropy of logits against the targets
// No layer norm and no MLP: attention is the only thing that mixes tokens, so what a head learns
// is visible in its weights. The `grad_tinylm` fixture is this model with one block (PyTorch
// 1.13, tests/data), and the learn-heads lesson trains it.
//
// Legend: B batch, T tokens (<= context), V vocabulary, d model width, h heads, d_k = d / h,
// L blocks.
#pragma once

#include <string>
#include <vector>

#include "core/adam.hpp"
#include "core/attention.hpp"
#include "core/embedding.hpp"
#include "core/generator.hpp"
#include "core/grad/attention.hpp"
#include "core/linear.hpp"
#include "core/tensor.hpp"

namespace attn {

struct TinyLmBlock {
  Linear W_query, W_key, W_value;  // (d, d) each, no bias
  Linear out_proj;                 // (d, d) + bias (d,)
};

struct TinyLm {
  Mat tok;                          // (V, d)        nn.Embedding(V, d).weight
  Mat pos;                          // (context, d)  nn.Embedding(context, d).weight
  std::vector<TinyLmBlock> blocks;  // L of them
  Linear unembed;                   // (V, d), no bias
  std::size_t heads = 1;

  std::size_t vocab() const { return tok.shape()[0]; }
  std::size_t context() const { return pos.shape()[0]; }
  std::size_t width() const { return tok.shape()[1]; }
  std::size_t parameters() const;
};

// Draws the model as PyTorch builds it after torch.manual_seed: tok = nn.Embedding(V, d),
// pos = nn.Embedding(context, d), then per block W_query, W_key, W_value = nn.Linear(d, d,
// bias=False) and out_proj = nn.Linear(d, d), then unembed = nn.Linear(d, V, bias=False).
// Throws std::invalid_argument when h does not divide d or a size is 0.
TinyLm make_tiny_lm(TorchGenerator& gen, std::size_t vocab, std::size_t context, std::size_t d, std::size_t heads,
                    std::size_t layers);

// The same shapes filled with zeros: a container for gradients.
TinyLm zeros_like(const TinyLm& model);

struct TinyLmBlockForward {
  Ten3 x;             // (B, T, d)       the residual stream coming in
  Ten4 queries;       // (B, h, T, d_k)
  Ten4 keys;          // (B, h, T, d_k)
  Ten4 values;        // (B, h, T, d_k)
  Attention attention;  // scores, scaled, attn_weights (B, h, T, T), context (B, h, T, d_k)
  Ten3 merged;        // (B, T, d)       the heads side by side again
  Ten3 projected;     // (B, T, d)       out_proj(merged), added to x
};

struct TinyLmForward {
  Ids ids;                                // (B, T)
  Ten3 x;                                 // (B, T, d)  tok[ids] + pos[0..T-1]
  std::vector<TinyLmBlockForward> blocks;  // L
  Ten3 y;                                 // (B, T, d)  the residual stream after the last block
  Ten3 logits;                            // (B, T, V)
};

// ids (B, T) with T <= context and each id < V. Throws std::invalid_argument otherwise.
TinyLmForward tiny_lm_forward(const TinyLm& model, const Ids& ids);

// The mean cross-entropy of the forward pass's logits against targets (B, T).
float tiny_lm_loss(const TinyLmForward& forward, const Ids& targets);

struct TinyLmGrads {
  TinyLm params;                                   // dL/d every parameter, shaped like the model
  Ten3 logits;                                     // (B, T, V)  dL/dlogits
  Ten3 x;                                          // (B, T, d)  dL/dx, the embeddings' gradient
  std::vector<grad::AttentionGrads<float>> blocks;  // L: dL/d attn_weights, scores, Q, K, V per block
};

// The backward pass of the mean cross-entropy through the whole model, from the activations
// the forward pass kept.
TinyLmGrads tiny_lm_backward(const TinyLm& model, const TinyLmForward& forward, const Ids& targets);

// Every parameter with its gradient, named as the PyTorch module names them (tok.weight,
// pos.weight, W_query.weight, ..., out_proj.bias, unembed.weight).
// With more than one block every block's names start with "blocks.<i>." as in an nn.ModuleList.
// In the order make_tiny_lm draws them: what Adam::step takes.
std::vector<Param> tiny_lm_params(TinyLm& model, const TinyLm& grads);

}  // namespace attn
