// The encoder-decoder with Bahdanau attention that `attn lesson align` trains: the bahdanau
// lesson's model with a vocabulary at both ends, so that it can learn.
//
//   x_j = src_emb[source word j]                               (S, d_e)
//   h_j = [enc_fwd pass ; enc_bwd pass] at j                   (S, 2 d_h)
//   s_0 = tanh(W_s h_bwd_1 + b_s)                              (d_h,)
//   step i = 1..T:  alpha_i = softmax_j(v_a . tanh(W_a s_{i-1} + U_a h_j)),  c_i = alpha_i @ H
//                   s_i = decoder([y_{i-1} ; c_i], s_{i-1}),  y_0 = tgt_emb[<s>]
//                   logits_i = out([s_i ; c_i])                (V_out,)
//
// Every product is a plain loop in a fixed order, not OpenBLAS: a training run feeds each step's
// rounding into the next, and OpenBLAS rounds differently under each CPU kernel and thread count
// (docs/architecture.md, trap 11), which a few hundred steps would turn into different printed losses. The
// sizes are tiny, so the loops cost nothing that matters.
//
// Legend: S source words, T target words, V_src / V_in / V_out vocabularies (V_in = V_out + 1 for
// <s>), d_e embedding width, d_h hidden width (one direction), d_a alignment width.
#pragma once

#include <string>
#include <vector>

#include "core/generator.hpp"
#include "core/linear.hpp"
#include "core/rnn.hpp"
#include "core/scoring.hpp"
#include "core/tensor.hpp"

namespace attn {

struct BahdanauModel {
  Mat src_emb;      // (V_src, d_e)       nn.Embedding
  Mat tgt_emb;      // (V_in, d_e)        nn.Embedding; the last row is <s>
  RnnCell enc_fwd;  // d_e -> d_h         nn.RNNCell
  RnnCell enc_bwd;  // d_e -> d_h
  Linear W_s;       // (d_h, d_h), (d_h,) nn.Linear: the decoder's first state
  Mat W_a;          // (d_a, d_h)         nn.Linear, no bias
  Mat U_a;          // (d_a, 2 d_h)       nn.Linear, no bias
  Vec v_a;          // (d_a,)             nn.Linear(d_a, 1, bias=False).weight, (1, d_a) as a vector
  RnnCell decoder;  // d_e + 2 d_h -> d_h
  Linear out;       // (V_out, 3 d_h), (V_out,)  reads [s_i ; c_i]

  std::size_t d_e() const { return src_emb.shape()[1]; }
  std::size_t d_h() const { return enc_fwd.hidden(); }
  std::size_t d_a() const { return W_a.shape()[0]; }
  std::size_t vocab_out() const { return out.weight.shape()[0]; }
};

// Drawn as PyTorch builds the modules in this order after torch.manual_seed: src_emb, tgt_emb
// (N(0, 1), nn.Embedding's init), enc_fwd, enc_bwd, W_s, W_a, U_a, v_a, decoder, out.
BahdanauModel make_bahdanau_model(TorchGenerator& gen, std::size_t V_src, std::size_t V_out, std::size_t d_e,
                                  std::size_t d_h, std::size_t d_a);

// The same shapes, all zero: where gradients accumulate.
BahdanauModel zeros_like(const BahdanauModel& m);

// Every parameter as PyTorch's model.named_parameters() lists it ("enc_fwd.weight_ih", ...),
// with its shape as PyTorch holds it and its contiguous values.
struct NamedTensor {
  std::string name;
  Shape shape;
  float* data;
  std::size_t size;
};
std::vector<NamedTensor> named_parameters(BahdanauModel& m);
std::size_t parameter_count(const BahdanauModel& m);

// One sentence through the model with teacher forcing, with everything the backward pass needs.
struct BahdanauPass {
  Mat x;                            // (S, d_e)
  Mat h_fwd, h_bwd;                 // (S, d_h) each
  Mat H;                            // (S, 2 d_h)
  Mat UH;                           // (S, d_a)   U_a h_j, once per sentence
  Vec s_0;                          // (d_h,)
  std::vector<AdditiveStep> steps;  // T of them: alpha_i, c_i, ...
  std::vector<Vec> inputs;          // T of (d_e + 2 d_h,): [y_{i-1} ; c_i]
  std::vector<Vec> states;          // T of (d_h,): s_1 .. s_T
  Mat logits;                       // (T, V_out)
  Mat alignment() const;            // (T, S): row i is alpha_i
};

// src: source ids (S,), each < V_src; tgt_in: the decoder's inputs (T,), <s> then the reference
// words 1..T-1, each < V_in. Throws std::invalid_argument for an id out of range or S == 0.
BahdanauPass bahdanau_forward(const BahdanauModel& m, const std::vector<std::size_t>& src,
                              const std::vector<std::size_t>& tgt_in);

// Back from d_logits = dL/dlogits (T, V_out) through the decoder, the attention and both
// encoder passes to the embeddings; adds every parameter's gradient into `grads` (zeros_like(m),
// or gradients of earlier sentences of the batch).
void bahdanau_backward(const BahdanauModel& m, const BahdanauPass& pass, const std::vector<std::size_t>& src,
                       const std::vector<std::size_t>& tgt_in, const Mat& d_logits, BahdanauModel& grads);

// Greedy translation of T words: each step feeds the word the model just chose (argmax of the
// logits, the first on ties) instead of the reference. Returns the chosen ids (T,) and fills
// `pass` with that run's intermediates (its alignment is the one of the model's own translation).
std::vector<std::size_t> bahdanau_greedy(const BahdanauModel& m, const std::vector<std::size_t>& src, std::size_t T,
                                         std::size_t start_id, BahdanauPass& pass);

}  // namespace attn
