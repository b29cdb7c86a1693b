// attn model DIR --summary (model_command.hpp): files, module tree, tensors, sizes, config.
#include "cli/model_command.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <vector>

#include "cli/model_run.hpp"  // the run's limits, for --help
#include "cli/module_tree.hpp"
#include "io/checkpoint.hpp"
#include "io/npy.hpp"  // escaped_for_message
#include "lesson_kit/numbers.hpp"
#include "lesson_kit/options.hpp"  // UsageError

namespace attn::cli {
namespace {

constexpr std::size_t kLabel = 19;  // width of the left column of the key-value sections

// "  label              value", continuation lines indented under the value.
void row(std::ostream& out, const std::string& label, const std::string& value, std::size_t width = kLabel) {
  out << "  " << label;
  if (!value.empty()) out << std::string(label.size() < width ? width - label.size() : 1, ' ') << value;
  out << "\n";
}
void more(std::ostream& out, const std::string& value) { out << std::string(2 + kLabel, ' ') << value << "\n"; }

std::string shown_dir(const std::string& dir) { return escaped_for_message(dir, 60); }

void files_section(std::ostream& out, const Checkpoint& ck) {
  constexpr std::size_t w = 24;  // "generation_config.json" and a space
  out << "Files (as from_pretrained reads them):\n";
  const ModelConfig& c = ck.config;
  row(out, "config.json", "model_type " + c.model_type + (c.architecture.empty() ? "" : " (" + escaped_for_message(c.architecture, 40) + ")") +
                              (c.dtype.empty() ? "" : ", " + escaped_for_message(c.dtype, 20)), w);
  if (ck.sharded) {
    std::uint64_t data = 0;  // every shard's data, skipped buffers included, as save_pretrained counts it
    for (const auto& f : ck.files) data += f.header().data_bytes();
    std::string total = ck.index_total_size ? "total_size " + with_commas(*ck.index_total_size) : "no total_size";
    if (ck.index_total_size) total += *ck.index_total_size == data ? " (= their data)" : " (the shards hold " + with_commas(data) + ")";
    row(out, "model.safetensors.index.json", "");
    out << std::string(2 + w, ' ') << std::to_string(ck.files.size()) << " shards, " << total << "\n";
  }
  for (std::size_t f = 0; f < ck.files.size(); ++f) {
    const auto& h = ck.files[f].header();
    const std::string name = escaped_for_message(ck.file_names[f], 60);
    const std::string what = std::to_string(h.tensors.size()) + " tensors, " + with_commas(h.data_bytes()) + " bytes of data";
    if (name.size() >= w) {
      row(out, name, "");
      out << std::string(2 + w, ' ') << what << "\n";
    } else {
      row(out, name, what, w);
    }
  }
  row(out, "tokenizer.json", ck.has_tokenizer_json ? "present" : "absent", w);
  row(out, "tokenizer_config.json", ck.has_tokenizer_config ? "present" : "absent", w);
  row(out, "generation_config.json", ck.has_generation_config ? "present" : "absent", w);
  if (!ck.skipped.empty())
    row(out, "skipped buffers", std::to_string(ck.skipped.size()) + " (" + escaped_for_message(ck.skipped.front(), 30) + ", ...: not weights)", w);
}

// The name after the layer number ("self_attn.q_proj.weight"), to compare layers with layer 0.
std::string in_layer(const CheckpointTensor& t) {
  const std::string num = std::to_string(t.expected.layer) + ".";
  const std::string& n = t.expected.name;
  for (const std::string head : {"model.layers.", "transformer.h.", "h."})
    if (n.rfind(head + num, 0) == 0) return n.substr(head.size() + num.size());
  return n;
}

std::string signature(const Checkpoint& ck, int layer) {
  std::string s;
  for (const auto& t : ck.tensors)
    if (t.expected.layer == layer) s += in_layer(t) + " " + dtype_name(t.dtype) + " " + shape_str(t.expected.shape) + "\n";
  return s;
}

// Rows of the tensors of `layer` (-1: outside the layers; `after` picks those after them).
void tensor_rows(std::ostream& out, const Checkpoint& ck, int layer, std::size_t width, bool after = false) {
  bool past_layers = false;
  for (const auto& t : ck.tensors) {
    if (t.expected.layer >= 0) past_layers = true;
    if (t.expected.layer != layer || (layer < 0 && past_layers != after)) continue;
    const std::string& n = t.expected.name;
    const std::string dtype = dtype_name(t.dtype);
    out << "  " << n << std::string(n.size() < width ? width - n.size() : 0, ' ') << "  " << dtype
        << std::string(dtype.size() < 6 ? 6 - dtype.size() : 1, ' ') << shape_str(t.expected.shape) << "\n";
  }
}

void tensors_section(std::ostream& out, const Checkpoint& ck) {
  out << "Tensors as stored (layers numbered from 0, as Hugging Face names them):\n";
  std::size_t width = 4;
  for (const auto& t : ck.tensors)
    if (t.expected.layer <= 0) width = std::max(width, t.expected.name.size());
  out << "  name" << std::string(width - 4, ' ') << "  dtype shape\n";
  tensor_rows(out, ck, -1, width);
  tensor_rows(out, ck, 0, width);
  // Layers 1.. compared with layer 0: a run of equal layers in one line, any other layer in full.
  const std::size_t layers = ck.config.layers;
  const std::string first = signature(ck, 0);
  for (std::size_t l = 1; l < layers;) {
    std::size_t end = l;
    while (end < layers && signature(ck, static_cast<int>(end)) == first) ++end;
    if (end > l) {
      out << "  " << (end - l == 1 ? "layer " + std::to_string(l) : "layers " + std::to_string(l) + "-" + std::to_string(end - 1))
          << ": the same names, dtypes, shapes as layer 0 (checked)\n";
      l = end;
    } else {
      tensor_rows(out, ck, static_cast<int>(l), width);
      ++l;
    }
  }
  tensor_rows(out, ck, -1, width, true);
}

// A config number as written: 500000, 32, 0.5 (Python's repr without a trailing ".0").
std::string number(double v) {
  const std::string s = python_float(v);
  return s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0 ? s.substr(0, s.size() - 2) : s;
}

void size_section(std::ostream& out, const Checkpoint& ck, const MemoryEstimate& m) {
  std::uint64_t params = 0, head = 0;
  std::map<std::string, std::uint64_t> by_dtype;
  for (const auto& t : ck.tensors) {
    params += ck.info(t).count;
    by_dtype[dtype_name(t.dtype)] += ck.info(t).bytes();
    if (t.expected.name == "lm_head.weight") head = ck.info(t).count;
  }
  std::string dtypes;
  for (const auto& [name, bytes] : by_dtype) dtypes += (dtypes.empty() ? "" : ", ") + name;
  out << "Size:\n";
  row(out, "parameters", with_commas(params) + (head ? " (lm_head.weight: " + with_commas(head) + ")" : ""));
  row(out, "on disk", with_commas(m.stored) + " bytes of tensors (" + dtypes + ", " + human_bytes(m.stored) + ")");
  row(out, "as float32", with_commas(m.as_f32) + " bytes (" + human_bytes(m.as_f32) + ")");
  row(out, "this command holds", with_commas(m.largest_f32) + " bytes at once: one tensor as float32,");
  more(out, escaped_for_message(m.largest_name, 58));
}

void config_section(std::ostream& out, const ModelConfig& c) {
  const bool gpt2 = c.family == ModelFamily::Gpt2;
  out << "Config (config.json):\n";
  row(out, "layers", std::to_string(c.layers) + (gpt2 ? " (n_layer)" : " (num_hidden_layers)"));
  row(out, "hidden size", std::to_string(c.hidden) + (gpt2 ? " (n_embd)" : " (hidden_size)"));
  row(out, "query heads", std::to_string(c.heads) + (gpt2 ? " (n_head)" : " (num_attention_heads)"));
  const std::size_t group = c.heads / c.kv_heads;
  row(out, "kv heads", std::to_string(c.kv_heads) + (gpt2 ? " (as many as query heads)" :
                        " (num_key_value_heads): each read by " + std::to_string(group) + " query head" + (group == 1 ? "" : "s")));
  row(out, "head size", std::to_string(c.head_dim) + (c.head_dim_given ? " (head_dim)" : gpt2 ? " (n_embd / n_head)" : " (hidden_size / num_attention_heads)"));
  row(out, "MLP size", std::to_string(c.intermediate) + (gpt2 ? " (n_inner, or 4 x n_embd when null)" : " (intermediate_size)"));
  row(out, "vocabulary", with_commas(c.vocab) + " (vocab_size)");
  row(out, "context", with_commas(c.context) + (gpt2 ? " positions (n_positions)" : " positions (max_position_embeddings)"));
  row(out, "norm", (gpt2 ? "LayerNorm, eps " : "RMSNorm, eps ") + python_float(c.norm_eps));
  if (gpt2) {
    row(out, "positions", "learned (wpe), no RoPE");
  } else {
    row(out, "RoPE base", number(c.rope_theta) + " (rope_theta)");
    const RopeScalingConfig& s = c.rope_scaling;
    if (s.llama3) {
      row(out, "RoPE scaling", "llama3: factor " + number(s.factor) + ", low_freq_factor " + number(s.low_freq_factor) + ",");
      more(out, "high_freq_factor " + number(s.high_freq_factor) + ", original_max_position_embeddings " +
                    std::to_string(s.original_max_position_embeddings));
    } else {
      row(out, "RoPE scaling", "none");
    }
  }
  row(out, "lm_head", c.tie_word_embeddings ? std::string("tied to ") + (gpt2 ? "wte" : "embed_tokens") + " (tie_word_embeddings)"
                                            : "its own weight (tie_word_embeddings false)");
  if (!gpt2) {
    std::string b = c.qkv_bias ? "q, k, v" : "";
    if (c.o_bias) b += ", o";
    if (c.mlp_bias) b += std::string(b.empty() ? "" : ", ") + "gate, up, down";
    row(out, "biases", b.empty() ? "none" : b);
  }
}

void values_section(std::ostream& out, const Checkpoint& ck, const ModelCommandOptions& o) {
  if (o.headers_only) {
    out << "Values: not read (--headers-only): names, shapes, dtypes and offsets checked\n";
    return;
  }
  const ScanResult r = scan_values(ck, o.allow_nonfinite);
  if (r.nonfinite == 0) {
    out << "Values: all " << with_commas(r.values) << " finite (every tensor read and converted to float32)\n";
    return;
  }
  out << "Values: " << with_commas(r.nonfinite) << " of " << with_commas(r.values) << " are not finite (--allow-nonfinite);\n"
      << "  the first: " << escaped_for_message(r.first_tensor, 50) << r.first_index << " = " << value_str(r.first_value) << "\n";
}

std::string summary(const Checkpoint& ck, const ModelCommandOptions& o) {
  const MemoryEstimate m = estimate_memory(ck);
  if (!o.headers_only)  // the scan holds one tensor as float32 at a time
    require_memory(m.largest_f32, mem_available(), "convert " + escaped_for_message(m.largest_name, 60) + " to float32");
  std::ostringstream out;
  out << "Checkpoint " << shown_dir(ck.dir) << " (" << family_name(ck.config.family) << ")\n\n";
  files_section(out, ck);
  out << "\nprint(AutoModel.from_pretrained(DIR)), as transformers 4.48+ prints it:\n" << module_tree(ck.config) << "\n\n";
  tensors_section(out, ck);
  out << "\n";
  size_section(out, ck, m);
  out << "\n";
  config_section(out, ck.config);
  out << "\n";
  values_section(out, ck, o);
  return out.str();
}

}  // namespace

int run_model_command(const ModelCommandOptions& options, std::ostream& out) {
  std::string text;
  try {
    const Checkpoint ck = open_checkpoint(options.dir);
    text = summary(ck, options);
  } catch (const CheckpointError& e) {
    throw UsageError(e.what());
  }
  out << text;
  return 0;
}

std::string model_limits_help() {
  const auto n = [](std::uint64_t v) { return with_commas(v); };
  return "Checks (docs/checkpoints.md): config.json, then model.safetensors or the shards of\n"
         "model.safetensors.index.json; every tensor the config implies, with its shape; F32, F16, BF16.\n"
         "Limits: a safetensors header at most " + n(kSafetensorsMaxHeader) + " bytes, config.json 1 MiB; sizes: width " +
         n(kConfigMaxWidth) + ", layers " + n(kConfigMaxLayers) + ",\n  heads " + n(kConfigMaxHeads) + ", vocabulary " +
         n(kConfigMaxVocab) + ", context " + n(kConfigMaxContext) + "; the value scan holds one tensor\n"
         "  as float32 and is refused when that exceeds MemAvailable (/proc/meminfo).\n"
         "A run (--text, --text-file, --ids, --probe; docs/model.md): at most the model's context and " + n(kModelMaxTokens) +
         " tokens;\n"
         "  a shown layer's (1, h, T, T) weights at most " + n(kModelMaxShownAttention) + " bytes; one layer as float32, the\n"
         "  activations and the shown tensors within MemAvailable. Head roles and --query read every layer's\n"
         "  (1, h, T, T) weights, at most " + n(kModelTracedAttention) + " bytes (longer: roles shown as -, --query refused).\n";
}

}  // namespace attn::cli
