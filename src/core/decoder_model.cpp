// Embeddings, layers, final norm and logits (see decoder_model.hpp).
//
// Legend: B batch, T tokens, d hidden size, V vocabulary size, P positions.
#include "core/decoder_model.hpp"

#include <stdexcept>
#include <string>

#include "core/matmul.hpp"

namespace attn {

Ten3 gpt2_embeddings(const Mat& wte, const Mat& wpe, const Ids& ids, std::size_t offset) {
  const std::size_t T = ids.shape()[1], d = wte.shape()[1], P = wpe.shape()[0];
  if (wpe.shape()[1] != d)
    throw std::invalid_argument("gpt2_embeddings: wte " + shape_of(wte) + " and wpe " + shape_of(wpe) +
                                " need the same width d");
  if (offset > P || T > P - offset)
    throw std::invalid_argument("gpt2_embeddings: positions " + std::to_string(offset) + " .. " +
                                std::to_string(offset + T) + " (exclusive) pass wpe " + shape_of(wpe) +
                                " (n_positions, d)");
  Ten3 x = embedding_lookup(wte, ids);  // (V, d)[ids] -> (B, T, d)
  for (std::size_t b = 0; b < ids.shape()[0]; ++b)
    for (std::size_t t = 0; t < T; ++t) {
      float* row = x.data() + (b * T + t) * d;
      const float* pos = wpe.data() + (offset + t) * d;
      for (std::size_t i = 0; i < d; ++i) row[i] += pos[i];  // + wpe[offset + t]
    }
  return x;
}

Ten3 lm_logits(const Ten3& x, const Mat& head) {
  if (head.shape()[1] != x.shape()[2])
    throw std::invalid_argument("lm_logits: x " + shape_of(x) + " and head " + shape_of(head) +
                                " (V, d) need the same d");
  return matmul_bt(x, head);  // (B, T, d) @ (V, d)^T -> (B, T, V)
}

Ten3 gpt2_forward(const Gpt2Model& m, const Ids& ids, ModelTrace* trace) {
  Ten3 x = gpt2_embeddings(m.wte, m.wpe, ids);  // (B, T, d)
  if (trace) {
    trace->embeddings = x;
    trace->layers.assign(m.layers.size(), LayerTrace{});
  }
  for (std::size_t n = 0; n < m.layers.size(); ++n)
    x = gpt2_layer_forward(m.layers[n], x, trace ? &trace->layers[n] : nullptr);  // (B, T, d)
  Ten3 final_hidden = layer_norm(m.ln_f, x);  // (B, T, d)
  Ten3 logits = lm_logits(final_hidden, m.lm_head.size() ? m.lm_head : m.wte);  // (B, T, V)
  if (trace) trace->final_hidden = std::move(final_hidden);
  return logits;
}

Ten3 llama_forward(const LlamaModel& m, const Ids& ids, ModelTrace* trace) {
  Ten3 x = embedding_lookup(m.embed_tokens, ids);  // (V, d)[ids] -> (B, T, d)
  // One set of tables for every layer: positions 0 .. T - 1, width hd = 2 * inv_freq's length.
  const RopeTables rope = rope_tables_from_inv_freq(m.inv_freq, ids.shape()[1]);  // cos, sin (T, hd)
  if (trace) {
    trace->embeddings = x;
    trace->layers.assign(m.layers.size(), LayerTrace{});
  }
  for (std::size_t n = 0; n < m.layers.size(); ++n)
    x = llama_layer_forward(m.layers[n], x, rope, trace ? &trace->layers[n] : nullptr);  // (B, T, d)
  Ten3 final_hidden = rms_norm(m.norm, x);  // (B, T, d)
  Ten3 logits = lm_logits(final_hidden, m.lm_head.size() ? m.lm_head : m.embed_tokens);  // (B, T, V)
  if (trace) trace->final_hidden = std::move(final_hidden);
  return logits;
}

}  // namespace attn
