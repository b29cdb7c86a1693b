// A Hugging Face checkpoint folder, read the way from_pretrained reads it, and checked whole:
// config.json; model.safetensors, or shards listed by model.safetensors.index.json; every
// tensor the config implies present with its shape, nothing unexpected; then, on request, every
// value converted to float32 and checked finite, one tensor at a time.
//
// Buffers some checkpoints carry and attn does not read are skipped on purpose and listed:
// GPT-2's causal-mask buffers h.N.attn.bias and h.N.attn.masked_bias, and older Llama exports'
// model.layers.N.self_attn.rotary_emb.inv_freq (recomputed from the config).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "io/model_config.hpp"
#include "io/safetensors.hpp"

namespace attn {

// A tensor the config implies: its name as stored, its shape, and which config fields set it.
struct ExpectedTensor {
  std::string name;
  Shape shape;
  std::string why;  // "(vocab_size, hidden_size)"
  int layer = -1;   // 0-based layer index (Hugging Face's numbering), -1 outside the layers
};

// Every tensor a model of `config` holds, in the model's order. `prefix` is "transformer." for a
// GPT-2 saved from GPT2LMHeadModel, "" otherwise (Llama's and Qwen2's names carry "model.").
std::vector<ExpectedTensor> expected_tensors(const ModelConfig& config, const std::string& prefix = "");

struct CheckpointTensor {
  ExpectedTensor expected;  // name, shape (as stored: checked equal), why, layer
  DType dtype = DType::F32;
  std::size_t file = 0;     // index into Checkpoint::files
  std::size_t index = 0;    // index into that file's header().tensors
};

struct Checkpoint {
  std::string dir;
  ModelConfig config;
  std::vector<std::string> file_names;   // "model.safetensors", or the shards in name order
  std::vector<SafetensorsFile> files;    // open, headers checked
  bool sharded = false;
  std::optional<std::uint64_t> index_total_size;  // metadata.total_size of the index, when given
  std::vector<CheckpointTensor> tensors;  // in the model's order
  std::vector<std::string> skipped;       // buffers present and skipped on purpose
  std::string prefix;                     // "transformer." or ""
  bool has_tokenizer_json = false, has_tokenizer_config = false, has_generation_config = false;

  const TensorInfo& info(const CheckpointTensor& t) const { return files[t.file].header().tensors[t.index]; }
  const SafetensorsFile& file(const CheckpointTensor& t) const { return files[t.file]; }
};

// Opens and checks `dir`; reads headers only. Throws CheckpointError, one line naming the file.
Checkpoint open_checkpoint(const std::string& dir);

// Bytes: as stored, as float32 (all of it), and the largest single tensor as float32 (what a
// reader that converts one tensor at a time holds). The later forward pass adds its own scratch.
struct MemoryEstimate {
  std::uint64_t stored = 0;
  std::uint64_t as_f32 = 0;
  std::uint64_t largest_f32 = 0;
  std::string largest_name;
};
MemoryEstimate estimate_memory(const Checkpoint& ckpt);

// MemAvailable from /proc/meminfo, in bytes; nullopt where there is none.
std::optional<std::uint64_t> mem_available();
// Refuses (CheckpointError naming `what` and both numbers) when `needed` exceeds `available`.
void require_memory(std::uint64_t needed, std::optional<std::uint64_t> available, const std::string& what);

// The value scan: every tensor converted to float32, non-finite values counted.
struct ScanResult {
  std::uint64_t values = 0;
  std::uint64_t nonfinite = 0;
  std::string first_tensor;  // where the first non-finite value is: tensor, index, value
  std::string first_index;
  float first_value = 0;
};
// Reads one tensor at a time into one reused buffer. Without `allow_nonfinite` the first NaN or
// inf is refused, naming the tensor and the index.
ScanResult scan_values(const Checkpoint& ckpt, bool allow_nonfinite);

}  // namespace attn
