// config.json of a Hugging Face checkpoint -> the sizes attn needs, checked against each other.
//
// Reads the names of transformers 4.x (rope_theta, rope_scaling, torch_dtype) and of
// transformers 5 (rope_parameters holding rope_theta and the scaling fields, dtype). Fields
// Hugging Face defaults when absent are defaulted the same way (docs/checkpoints.md lists them);
// the sizes that shape the tensors are required.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace attn {

enum class ModelFamily { Gpt2, Llama, Qwen2 };

// rope_scaling of type llama3 (Llama-3.1 and 3.2); `llama3` false means none ("default" or null).
struct RopeScalingConfig {
  bool llama3 = false;
  double factor = 1, low_freq_factor = 1, high_freq_factor = 1;
  std::uint64_t original_max_position_embeddings = 0;
};

struct ModelConfig {
  ModelFamily family = ModelFamily::Llama;
  std::string model_type;    // "gpt2", "llama", "qwen2"
  std::string architecture;  // architectures[0] when given ("LlamaForCausalLM"), else ""
  std::size_t hidden = 0;        // d_model: n_embd / hidden_size
  std::size_t layers = 0;        // n_layer / num_hidden_layers
  std::size_t heads = 0;         // n_head / num_attention_heads
  std::size_t kv_heads = 0;      // num_key_value_heads (= heads for GPT-2)
  std::size_t head_dim = 0;      // head_dim when given, else hidden / heads
  bool head_dim_given = false;
  std::size_t intermediate = 0;  // n_inner or 4 * n_embd / intermediate_size
  std::size_t vocab = 0;         // vocab_size
  std::size_t context = 0;       // n_positions / max_position_embeddings
  double norm_eps = 1e-5;        // layer_norm_epsilon / rms_norm_eps
  double rope_theta = 0;         // 0 for GPT-2 (learned positions)
  RopeScalingConfig rope_scaling;
  bool tie_word_embeddings = false;
  bool qkv_bias = false;         // biases on q, k, v (Qwen2 always; Llama attention_bias)
  bool o_bias = false;           // bias on o_proj (Llama attention_bias)
  bool mlp_bias = false;         // Llama mlp_bias
  std::string dtype;             // torch_dtype / dtype as written ("bfloat16"), or ""
  std::optional<std::uint64_t> pad_token_id;  // the embedding's padding_idx in the printed module tree
  std::optional<std::uint64_t> bos_token_id;  // bos_token_id when it is one id below vocab_size, else none
  // GPT-2's dropout probabilities, shown in the module tree (embd_pdrop, attn_pdrop, resid_pdrop).
  double embd_pdrop = 0.1, attn_pdrop = 0.1, resid_pdrop = 0.1;
  std::string path;              // the config.json read, for messages
};

// Largest sizes accepted: beyond any published model of these families, far below overflow.
constexpr std::size_t kConfigMaxWidth = 1 << 17;       // hidden, intermediate, head_dim
constexpr std::size_t kConfigMaxLayers = 1024;
constexpr std::size_t kConfigMaxHeads = 4096;
constexpr std::size_t kConfigMaxVocab = 1 << 22;
constexpr std::size_t kConfigMaxContext = 1 << 24;

// Throws CheckpointError (io/safetensors.hpp) with one line naming `path`, the field and the values.
ModelConfig parse_model_config(const std::string& text, const std::string& path);
ModelConfig read_model_config(const std::string& path);

// "llama" etc.; "query heads per kv head": heads / kv_heads.
const char* family_name(ModelFamily f);

}  // namespace attn
