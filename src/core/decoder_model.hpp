// A whole decoder-only language model from its layers: embeddings, the decoder layers
// (decoder_layer.hpp), the final norm and the logits, as Hugging Face's GPT2LMHeadModel and
// LlamaForCausalLM / Qwen2ForCausalLM compute them:
//   GPT-2:  x = wte[ids] + wpe[offset + t];  x = h.N(x) ...;  x = ln_f(x);  logits = x @ head^T
//   Llama:  x = embed_tokens[ids];           x = layers.N(x, rope) ...;  x = norm(x);  logits = x @ head^T
// head is lm_head (V, d), or the token embedding itself when the checkpoint ties them
// (tie_word_embeddings: GPT-2, Llama-3.2-1B/3B, small Qwen2), left empty here then.
//
// Legend: B batch, T tokens, d hidden size, V vocabulary size, P positions GPT-2 can embed
// (n_positions), hd head width, L layers.
#pragma once

#include <cstddef>
#include <vector>

#include "core/decoder_layer.hpp"
#include "core/embedding.hpp"
#include "core/norm.hpp"
#include "core/tensor.hpp"

namespace attn {

// wte[ids[b, t]] + wpe[offset + t]: wte (V, d), wpe (P, d), ids (B, T) -> (B, T, d). Throws
// std::invalid_argument for an id >= V or a position >= P.
Ten3 gpt2_embeddings(const Mat& wte, const Mat& wpe, const Ids& ids, std::size_t offset = 0);

// x @ head^T: (B, T, d) @ (V, d)^T -> (B, T, V). head is lm_head.weight or the tied embedding.
Ten3 lm_logits(const Ten3& x, const Mat& head);

struct Gpt2Model {
  Mat wte;                        // (V, d)
  Mat wpe;                        // (P, d)
  std::vector<Gpt2Layer> layers;  // h.0 .. h.{L-1}
  LayerNorm ln_f;                 // (d,)
  Mat lm_head;                    // (V, d); empty: tied to wte
};

struct LlamaModel {
  Mat embed_tokens;                // model.embed_tokens (V, d)
  std::vector<LlamaLayer> layers;  // model.layers.0 .. L-1
  RmsNorm norm;                    // model.norm (d,)
  Mat lm_head;                     // (V, d); empty: tied to embed_tokens
  Vec inv_freq;                    // (hd / 2,) rope_inv_freq or rope_inv_freq_llama3 from the config
};

// What the whole pass computed, filled when asked.
struct ModelTrace {
  Ten3 embeddings;                 // (B, T, d)
  std::vector<LayerTrace> layers;  // one per layer; layers[N].output is hidden_N
  Ten3 final_hidden;               // (B, T, d) after the final norm
};

// ids (B, T) at positions 0 .. T - 1 -> logits (B, T, V). With `trace`, every layer takes the
// lessons' path and keeps its intermediates; without, the fast path.
Ten3 gpt2_forward(const Gpt2Model& model, const Ids& ids, ModelTrace* trace = nullptr);
Ten3 llama_forward(const LlamaModel& model, const Ids& ids, ModelTrace* trace = nullptr);

}  // namespace attn
