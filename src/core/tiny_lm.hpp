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
// Float and double. The model is drawn in float32 as PyTorch draws it (make_tiny_lm); to_double
// gives the same numbers in float64 (PyTorch's model.double()). A lesson trains in double: over
// hundreds of steps training amplifies every last-bit difference, and float32's, which differ
// between OpenBLAS kernels, thread counts and libm variants, grow to differences in the printed
// digits, while float64's stay far below them. Both passes call the lessons' own operations, each
// templated on the element type: core/linear.hpp, core/heads.hpp, core/attention.hpp,
// core/residual.hpp, core/embedding.hpp and core/cross_entropy.hpp, forward and backward.
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
#include "core/linear.hpp"
#include "core/tensor.hpp"

namespace attn {

template <class T>
struct TinyLmBlockT {
  LinearT<T> W_query, W_key, W_value;  // (d, d) each, no bias
  LinearT<T> out_proj;                 // (d, d) + bias (d,)
};

template <class T>
struct TinyLmT {
  xt::xtensor<T, 2> tok;                 // (V, d)        nn.Embedding(V, d).weight
  xt::xtensor<T, 2> pos;                 // (context, d)  nn.Embedding(context, d).weight
  std::vector<TinyLmBlockT<T>> blocks;   // L of them
  LinearT<T> unembed;                    // (V, d), no bias
  std::size_t heads = 1;

  std::size_t vocab() const { return tok.shape()[0]; }
  std::size_t context() const { return pos.shape()[0]; }
  std::size_t width() const { return tok.shape()[1]; }
  std::size_t parameters() const;
};
using TinyLm = TinyLmT<float>;
using TinyLmBlock = TinyLmBlockT<float>;

// Draws the model as PyTorch builds it after torch.manual_seed: tok = nn.Embedding(V, d),
// pos = nn.Embedding(context, d), then per block W_query, W_key, W_value = nn.Linear(d, d,
// bias=False) and out_proj = nn.Linear(d, d), then unembed = nn.Linear(d, V, bias=False).
// Throws std::invalid_argument when h does not divide d or a size is 0.
TinyLm make_tiny_lm(TorchGenerator& gen, std::size_t vocab, std::size_t context, std::size_t d, std::size_t heads,
                    std::size_t layers);

// The same numbers in float64 (model.double()).
TinyLmT<double> to_double(const TinyLm& model);

// The same shapes filled with zeros: a container for gradients.
template <class T>
TinyLmT<T> zeros_like(const TinyLmT<T>& model);

template <class T>
struct TinyLmBlockForward {
  xt::xtensor<T, 3> x;             // (B, T, d)       the residual stream coming in
  xt::xtensor<T, 4> queries;       // (B, h, T, d_k)
  xt::xtensor<T, 4> keys;          // (B, h, T, d_k)
  xt::xtensor<T, 4> values;        // (B, h, T, d_k)
  xt::xtensor<T, 4> attn_scores;   // (B, h, T, T)    Q K^T
  xt::xtensor<T, 4> scaled;        // (B, h, T, T)    / sqrt(d_k), -inf above the diagonal
  xt::xtensor<T, 4> attn_weights;  // (B, h, T, T)    softmax(scaled) by rows
  xt::xtensor<T, 4> context;       // (B, h, T, d_k)  attn_weights @ V
  xt::xtensor<T, 3> merged;        // (B, T, d)       the heads side by side again
  xt::xtensor<T, 3> projected;     // (B, T, d)       out_proj(merged), added to x
};

template <class T>
struct TinyLmForward {
  Ids ids;                                     // (B, T)
  xt::xtensor<T, 3> x;                         // (B, T, d)  tok[ids] + pos[0..T-1]
  std::vector<TinyLmBlockForward<T>> blocks;   // L
  xt::xtensor<T, 3> y;                         // (B, T, d)  the residual stream after the last block
  xt::xtensor<T, 3> logits;                    // (B, T, V)
  xt::xtensor<T, 3> projection;                // (B, T, d)  scratch: a projection before its split into heads
};

// ids (B, T) with T <= context and each id < V. Throws std::invalid_argument otherwise.
template <class T>
TinyLmForward<T> tiny_lm_forward(const TinyLmT<T>& model, const Ids& ids);

// The same into f. Its tensors keep their memory when they already have their shapes, so a
// training loop that passes the same f every step allocates nothing after its first step (the
// way llm.c allocates its activations once). Besides time, that keeps sanitizer builds usable:
// AddressSanitizer maps every tensor this size (above 128 KiB) fresh from the kernel.
template <class T>
void tiny_lm_forward(const TinyLmT<T>& model, const Ids& ids, TinyLmForward<T>& f);

// The mean cross-entropy of the forward pass's logits against targets (B, T); a target equal to
// kIgnoreTarget (core/cross_entropy.hpp) is not graded.
template <class T>
T tiny_lm_loss(const TinyLmForward<T>& forward, const Ids& targets);

template <class T>
struct TinyLmGrads {
  TinyLmT<T> params;                            // dL/d every parameter, shaped like the model
  xt::xtensor<T, 3> logits;                     // (B, T, V)  dL/dlogits
  xt::xtensor<T, 3> x;                          // (B, T, d)  dL/dx, the embeddings' gradient
  std::vector<grad::AttentionGrads<T>> blocks;  // L: dL/d attn_weights, scores, Q, K, V per block
  // Scratch the backward pass reuses from block to block and step to step:
  xt::xtensor<T, 3> d_rows;     // (B, T, d)       dL/d a linear layer's output, heads merged
  xt::xtensor<T, 3> d_input;    // (B, T, d)       dL/d a linear layer's input, before it joins dL/dx
  xt::xtensor<T, 4> d_context;  // (B, h, T, d_k)  dL/d context, heads split
};

// The backward pass of the mean cross-entropy through the whole model, from the activations
// the forward pass kept.
template <class T>
TinyLmGrads<T> tiny_lm_backward(const TinyLmT<T>& model, const TinyLmForward<T>& forward, const Ids& targets);

// The same into g, reusing its memory as tiny_lm_forward reuses f's.
template <class T>
void tiny_lm_backward(const TinyLmT<T>& model, const TinyLmForward<T>& forward, const Ids& targets,
                      TinyLmGrads<T>& g);

// Every parameter with its gradient, named as the PyTorch module names them (tok.weight,
// pos.weight, W_query.weight, ..., out_proj.bias, unembed.weight).
// With more than one block every block's names start with "blocks.<i>." as in an nn.ModuleList.
// In the order make_tiny_lm draws them: what AdamT::step takes.
template <class T>
std::vector<ParamT<T>> tiny_lm_params(TinyLmT<T>& model, const TinyLmT<T>& grads);

}  // namespace attn
