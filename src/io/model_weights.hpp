// A checkpoint's weights as the model path needs them, read one piece at a time: one decoder
// layer (upcast to float32 just before it runs, dropped after), the embedding rows of the prompt's
// tokens, the final norm, and the logits computed block by block over the vocabulary.
//
// Why piecewise: Llama-3.2-3B is 6.4 GB as stored (bf16) and 12.8 GB as float32. Holding one
// layer as float32 costs about 400 MB, the prompt's embedding rows a few KB, and a block of the
// (V, d) head 48 MB, so a run's resident memory stays near a layer's size, not the model's. The
// values come from the files with pread (safetensors.hpp says why not mmap).
//
// Legend: T tokens (B = 1), d hidden size, V vocabulary size, P positions GPT-2 can embed.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/decoder_layer.hpp"
#include "core/norm.hpp"
#include "core/tensor.hpp"
#include "io/checkpoint.hpp"

namespace attn {

class ModelWeights {
 public:
  explicit ModelWeights(const Checkpoint& checkpoint);

  const Checkpoint& checkpoint() const { return ck_; }
  // The name a tensor has in this checkpoint: "h.0.ln_1.weight" gains "transformer." when the
  // checkpoint has it; Llama and Qwen2 names are used as given ("model.layers.0. ...").
  std::string name(const std::string& short_name) const;

  // Layer n, every weight as float32 (CheckpointError when a tensor is absent: open_checkpoint
  // has checked them all, so only a file changed since then gets here). Read into `into`,
  // whose buffers are reused when their shapes fit: layer after layer, the same memory is
  // filled again instead of freed and faulted in afresh (a 3B layer is 400 MB, and the
  // page faults of new memory cost more than the reading).
  void gpt2_layer(std::size_t n, Gpt2Layer& into) const;
  void llama_layer(std::size_t n, LlamaLayer& into) const;

  // Rows `ids` of a (rows, d) tensor: the token embeddings of a prompt. (T,) -> (T, d)
  Mat rows(const std::string& tensor, const std::vector<std::size_t>& ids) const;
  // A 1-D tensor (norm weights).
  Vec vec(const std::string& tensor) const;

  // The token embeddings of `ids` (Llama: embed_tokens; GPT-2: wte), (T, d); GPT-2's position
  // embeddings of positions 0 .. T - 1, (T, d).
  Mat token_embeddings(const std::vector<std::size_t>& ids) const;
  Mat position_embeddings(std::size_t T) const;
  // ln_f / model.norm.
  LayerNorm gpt2_final_norm() const;
  RmsNorm llama_final_norm() const;
  // The name of the (V, d) matrix the logits multiply: lm_head.weight, or the token embedding
  // when the checkpoint ties them.
  std::string head_name() const;
  // logits = x @ head^T, (B, T, d) -> (B, T, V), reading the head `block_rows` rows at a time.
  Ten3 logits(const Ten3& x, std::size_t block_rows = 4096) const;
  // The same without holding (rows, V): x (rows, d) against `block_rows` rows of the head at a
  // time, visit(r0, n, z) with z (rows, n) the logits of ids r0 .. r0 + n - 1 (the logit lens).
  void for_each_logit_block(const Mat& x, const std::function<void(std::size_t, std::size_t, const float*)>& visit,
                            std::size_t block_rows = 4096) const;

  // Bytes of float32 one layer takes (the largest of them), the head's block, for estimates.
  std::size_t layer_f32_bytes() const;

 private:
  const CheckpointTensor& find(const std::string& full_name) const;
  void mat(const std::string& full_name, Mat& into) const;
  void vec_full(const std::string& full_name, Vec& into) const;
  Vec vec_full(const std::string& full_name) const;

  const Checkpoint& ck_;
  std::map<std::string, std::size_t> index_;  // full name -> ck_.tensors index
};

}  // namespace attn
