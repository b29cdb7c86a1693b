// A checkpoint folder, checked whole (checkpoint.hpp).
#include "io/checkpoint.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "io/json.hpp"
#include "io/npy.hpp"  // escaped_for_message, not_a_file, index_str, value_str

namespace attn {
namespace fs = std::filesystem;
namespace {

std::string q(const std::string& s) { return "'" + escaped_for_message(s, 80, true) + "'"; }

// One axis of an expected shape and the config fields it comes from.
struct Dim {
  std::size_t size;
  const char* field;
};

ExpectedTensor make(const std::string& name, std::initializer_list<Dim> dims, int layer) {
  ExpectedTensor e;
  e.name = name;
  e.layer = layer;
  e.why = "(";
  for (const Dim& d : dims) {
    e.shape.push_back(d.size);
    e.why += std::string(e.why.size() > 1 ? ", " : "") + d.field;
  }
  e.why += dims.size() == 1 ? ",)" : ")";
  return e;
}

void gpt2_tensors(const ModelConfig& c, const std::string& p, std::vector<ExpectedTensor>& out) {
  const std::size_t d = c.hidden, ff = c.intermediate;
  out.push_back(make(p + "wte.weight", {{c.vocab, "vocab_size"}, {d, "n_embd"}}, -1));        // (V, d)
  out.push_back(make(p + "wpe.weight", {{c.context, "n_positions"}, {d, "n_embd"}}, -1));     // (n_positions, d)
  for (std::size_t l = 0; l < c.layers; ++l) {
    const std::string h = p + "h." + std::to_string(l) + ".";
    const int L = static_cast<int>(l);
    // Conv1D stores (in, out): y = x @ W + b.
    out.push_back(make(h + "ln_1.weight", {{d, "n_embd"}}, L));
    out.push_back(make(h + "ln_1.bias", {{d, "n_embd"}}, L));
    out.push_back(make(h + "attn.c_attn.weight", {{d, "n_embd"}, {3 * d, "3 x n_embd"}}, L));  // (d, 3d): q, k, v
    out.push_back(make(h + "attn.c_attn.bias", {{3 * d, "3 x n_embd"}}, L));
    out.push_back(make(h + "attn.c_proj.weight", {{d, "n_embd"}, {d, "n_embd"}}, L));          // (d, d)
    out.push_back(make(h + "attn.c_proj.bias", {{d, "n_embd"}}, L));
    out.push_back(make(h + "ln_2.weight", {{d, "n_embd"}}, L));
    out.push_back(make(h + "ln_2.bias", {{d, "n_embd"}}, L));
    out.push_back(make(h + "mlp.c_fc.weight", {{d, "n_embd"}, {ff, "n_inner"}}, L));           // (d, ff)
    out.push_back(make(h + "mlp.c_fc.bias", {{ff, "n_inner"}}, L));
    out.push_back(make(h + "mlp.c_proj.weight", {{ff, "n_inner"}, {d, "n_embd"}}, L));         // (ff, d)
    out.push_back(make(h + "mlp.c_proj.bias", {{d, "n_embd"}}, L));
  }
  out.push_back(make(p + "ln_f.weight", {{d, "n_embd"}}, -1));
  out.push_back(make(p + "ln_f.bias", {{d, "n_embd"}}, -1));
}

void llama_tensors(const ModelConfig& c, std::vector<ExpectedTensor>& out) {
  const std::size_t d = c.hidden, ff = c.intermediate;
  const std::size_t q_out = c.heads * c.head_dim, kv_out = c.kv_heads * c.head_dim;
  const char* q_field = c.head_dim_given ? "num_attention_heads x head_dim" : "hidden_size";
  const char* kv_field = c.head_dim_given ? "num_key_value_heads x head_dim"
                                          : "num_key_value_heads x hidden_size / num_attention_heads";
  out.push_back(make("model.embed_tokens.weight", {{c.vocab, "vocab_size"}, {d, "hidden_size"}}, -1));  // (V, d)
  for (std::size_t l = 0; l < c.layers; ++l) {
    const std::string m = "model.layers." + std::to_string(l) + ".";
    const int L = static_cast<int>(l);
    // nn.Linear stores (out, in): y = x @ W.T + b.
    out.push_back(make(m + "input_layernorm.weight", {{d, "hidden_size"}}, L));
    out.push_back(make(m + "self_attn.q_proj.weight", {{q_out, q_field}, {d, "hidden_size"}}, L));    // (h*hd, d)
    out.push_back(make(m + "self_attn.k_proj.weight", {{kv_out, kv_field}, {d, "hidden_size"}}, L));  // (h_kv*hd, d)
    out.push_back(make(m + "self_attn.v_proj.weight", {{kv_out, kv_field}, {d, "hidden_size"}}, L));  // (h_kv*hd, d)
    out.push_back(make(m + "self_attn.o_proj.weight", {{d, "hidden_size"}, {q_out, q_field}}, L));    // (d, h*hd)
    if (c.qkv_bias) {
      out.push_back(make(m + "self_attn.q_proj.bias", {{q_out, q_field}}, L));
      out.push_back(make(m + "self_attn.k_proj.bias", {{kv_out, kv_field}}, L));
      out.push_back(make(m + "self_attn.v_proj.bias", {{kv_out, kv_field}}, L));
    }
    if (c.o_bias) out.push_back(make(m + "self_attn.o_proj.bias", {{d, "hidden_size"}}, L));
    out.push_back(make(m + "post_attention_layernorm.weight", {{d, "hidden_size"}}, L));
    out.push_back(make(m + "mlp.gate_proj.weight", {{ff, "intermediate_size"}, {d, "hidden_size"}}, L));  // (ff, d)
    out.push_back(make(m + "mlp.up_proj.weight", {{ff, "intermediate_size"}, {d, "hidden_size"}}, L));    // (ff, d)
    out.push_back(make(m + "mlp.down_proj.weight", {{d, "hidden_size"}, {ff, "intermediate_size"}}, L));  // (d, ff)
    if (c.mlp_bias) {
      out.push_back(make(m + "mlp.gate_proj.bias", {{ff, "intermediate_size"}}, L));
      out.push_back(make(m + "mlp.up_proj.bias", {{ff, "intermediate_size"}}, L));
      out.push_back(make(m + "mlp.down_proj.bias", {{d, "hidden_size"}}, L));
    }
  }
  out.push_back(make("model.norm.weight", {{d, "hidden_size"}}, -1));
}

// A buffer some exports carry that attn skips on purpose (checkpoint.hpp).
bool skipped_buffer(const std::string& name, const std::string& prefix, ModelFamily f) {
  auto layer_suffix = [&](const std::string& head, const std::string& tail) {
    if (name.rfind(head, 0) != 0 || name.size() <= head.size() + tail.size()) return false;
    if (name.compare(name.size() - tail.size(), tail.size(), tail) != 0) return false;
    const std::string digits = name.substr(head.size(), name.size() - head.size() - tail.size());
    return !digits.empty() && digits.size() < 6 && digits.find_first_not_of("0123456789") == std::string::npos;
  };
  if (f == ModelFamily::Gpt2)
    return layer_suffix(prefix + "h.", ".attn.bias") || layer_suffix(prefix + "h.", ".attn.masked_bias");
  return layer_suffix("model.layers.", ".self_attn.rotary_emb.inv_freq");
}

std::string read_small_file(const std::string& path, std::size_t limit) {
  if (const std::string problem = not_a_file(path); !problem.empty())
    checkpoint_fail("cannot read " + fs::path(path).filename().string(), path, "a regular file", problem);
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec || size > limit) checkpoint_fail("file is too large", path, "at most " + std::to_string(limit) + " bytes", std::to_string(size) + " bytes");
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The index's weight_map (tensor -> shard file name) and metadata.total_size.
std::map<std::string, std::string> read_index(const std::string& path, std::optional<std::uint64_t>& total_size) {
  const std::string text = read_small_file(path, 64u << 20);
  nlohmann::json doc;
  try {
    doc = parse_json_strict(text, path);
  } catch (const JsonError& e) {
    std::string why = e.what();
    if (why.rfind(path + ": ", 0) == 0) why = why.substr(path.size() + 2);
    checkpoint_fail("the shard index is not valid JSON", path, "UTF-8 JSON, each key once", why);
  }
  if (!doc.is_object() || !doc.contains("weight_map") || !doc["weight_map"].is_object())
    checkpoint_fail("the shard index has no weight_map", path, "{\"metadata\": {...}, \"weight_map\": {name: file}}",
                    doc.is_object() ? "no weight_map object" : doc.type_name());
  if (doc.contains("metadata")) {
    const auto& m = doc["metadata"];
    if (!m.is_object()) checkpoint_fail("the shard index's metadata is not an object", path, "an object", m.type_name());
    if (m.contains("total_size")) {
      if (!m["total_size"].is_number_unsigned())
        checkpoint_fail("the shard index's total_size is not a whole number", path, "bytes", escaped_for_message(m["total_size"].dump(), 30));
      total_size = m["total_size"].get<std::uint64_t>();
    }
  }
  std::map<std::string, std::string> map;
  for (const auto& [name, file] : doc["weight_map"].items()) {
    if (!file.is_string()) checkpoint_fail("the shard index names a file that is not a string", path, "a file name", q(name));
    const std::string f = file.get<std::string>();
    // A shard is a file beside the index: no directories, no way out of the folder.
    if (f.empty() || f == "." || f == ".." || f.find('/') != std::string::npos || f.find('\0') != std::string::npos)
      checkpoint_fail("the shard index names a file outside the folder", path, "a file name beside the index", q(f));
    map[name] = f;
  }
  return map;
}

void open_files(Checkpoint& ck) {
  const fs::path dir(ck.dir);
  const std::string single = (dir / "model.safetensors").string(), index = (dir / "model.safetensors.index.json").string();
  std::error_code ec;
  const bool has_single = fs::exists(single, ec), has_index = fs::exists(index, ec);
  if (has_single && has_index)
    checkpoint_fail("both a single file and a shard index", ck.dir, "model.safetensors or model.safetensors.index.json", "both");
  if (!has_single && !has_index) {
    const bool bin = fs::exists(dir / "pytorch_model.bin", ec) || fs::exists(dir / "pytorch_model.bin.index.json", ec);
    checkpoint_fail(std::string("no safetensors weights") + (bin ? " (pytorch_model.bin is not read: download the .safetensors files)" : ""),
                    ck.dir, "model.safetensors or model.safetensors.index.json", "neither");
  }
  if (has_single) {
    ck.file_names = {"model.safetensors"};
    ck.files.emplace_back(single);
    return;
  }
  ck.sharded = true;
  const auto map = read_index(index, ck.index_total_size);
  std::set<std::string> shards;
  for (const auto& [name, file] : map) shards.insert(file);
  for (const auto& f : shards) {
    if (!fs::exists(dir / f, ec))
      checkpoint_fail("a shard the index lists is missing", index, q(f) + " in " + ck.dir, "no such file");
    ck.file_names.push_back(f);
    ck.files.emplace_back((dir / f).string());
  }
  // Every tensor of every shard listed for that shard, once; every listed tensor where listed.
  std::map<std::string, std::size_t> found;  // tensor -> shard
  for (std::size_t s = 0; s < ck.files.size(); ++s)
    for (const auto& t : ck.files[s].header().tensors) {
      if (auto [it, fresh] = found.emplace(t.name, s); !fresh)
        checkpoint_fail("tensor " + q(t.name) + " is stored in two shards", index, "one shard", q(ck.file_names[it->second]) + " and " + q(ck.file_names[s]));
      const auto listed = map.find(t.name);
      if (listed == map.end())
        checkpoint_fail("tensor " + q(t.name) + " of a shard is not in the index", index, "weight_map listing it", "absent from weight_map (in " + q(ck.file_names[s]) + ")");
      if (listed->second != ck.file_names[s])
        checkpoint_fail("tensor " + q(t.name) + " is not in the shard the index names", index, q(listed->second), "found in " + q(ck.file_names[s]));
    }
  for (const auto& [name, file] : map)
    if (!found.count(name))
      checkpoint_fail("tensor " + q(name) + " listed in the index is in no shard", index, "it in " + q(file), "absent");
}

// "model.safetensors", or "the shards" for messages about a tensor that is in none of them.
std::string where(const Checkpoint& ck) { return ck.sharded ? (fs::path(ck.dir) / "model.safetensors.index.json").string() : ck.files[0].header().path; }

void match_tensors(Checkpoint& ck) {
  std::map<std::string, std::pair<std::size_t, std::size_t>> stored;  // name -> (file, index)
  for (std::size_t f = 0; f < ck.files.size(); ++f)
    for (std::size_t i = 0; i < ck.files[f].header().tensors.size(); ++i) stored[ck.files[f].header().tensors[i].name] = {f, i};
  if (ck.config.family == ModelFamily::Gpt2)
    for (const auto& [name, _] : stored)
      if (name.rfind("transformer.", 0) == 0) ck.prefix = "transformer.";
  auto expected = expected_tensors(ck.config, ck.prefix);
  std::map<std::string, std::size_t> by_name;
  for (std::size_t i = 0; i < expected.size(); ++i) by_name[expected[i].name] = i;
  for (const auto& [name, at] : stored) {
    if (by_name.count(name)) continue;
    if (skipped_buffer(name, ck.prefix, ck.config.family)) {
      ck.skipped.push_back(name);
      continue;
    }
    const std::string file = ck.files[at.first].header().path;
    if (name == "lm_head.weight" && ck.config.tie_word_embeddings)
      checkpoint_fail("tensor 'lm_head.weight' is stored but the config ties it to the embedding", file,
                      "no lm_head.weight (tie_word_embeddings: true)", "lm_head.weight present");
    checkpoint_fail("unexpected tensor " + q(name), file, "the tensors of a " + ck.config.model_type + " model with this config",
                    q(name) + " (a different architecture or config?)");
  }
  for (const auto& e : expected) {
    const auto it = stored.find(e.name);
    if (it == stored.end())
      checkpoint_fail("tensor " + q(e.name) + " is missing", where(ck), shape_str(e.shape) + " = " + e.why, "absent");
    const TensorInfo& t = ck.files[it->second.first].header().tensors[it->second.second];
    const std::string& file = ck.files[it->second.first].header().path;
    if (!dtype_converts(t.dtype))
      checkpoint_fail("tensor " + q(e.name) + " has a dtype attn does not convert", file, "F32, F16 or BF16", dtype_name(t.dtype));
    if (t.shape != e.shape)
      checkpoint_fail("tensor " + q(e.name) + " has the wrong shape for the config", file, shape_str(e.shape) + " = " + e.why,
                      shape_str(t.shape));
    ck.tensors.push_back({e, t.dtype, it->second.first, it->second.second});
  }
}

}  // namespace

std::vector<ExpectedTensor> expected_tensors(const ModelConfig& config, const std::string& prefix) {
  std::vector<ExpectedTensor> out;
  if (config.family == ModelFamily::Gpt2) gpt2_tensors(config, prefix, out);
  else llama_tensors(config, out);
  if (!config.tie_word_embeddings)
    out.push_back(make("lm_head.weight", {{config.vocab, "vocab_size"}, {config.hidden, config.family == ModelFamily::Gpt2 ? "n_embd" : "hidden_size"}}, -1));
  return out;
}

Checkpoint open_checkpoint(const std::string& dir) {
  std::error_code ec;
  const auto st = fs::status(dir, ec);
  if (st.type() == fs::file_type::not_found) checkpoint_fail("no such checkpoint folder", dir, "a folder", "no such file or folder");
  if (st.type() != fs::file_type::directory)
    checkpoint_fail("the checkpoint is not a folder", dir, "a folder holding config.json and *.safetensors", "a file");
  Checkpoint ck;
  ck.dir = dir;
  const fs::path d(dir);
  if (!fs::exists(d / "config.json", ec)) checkpoint_fail("no config.json in the checkpoint folder", dir, "config.json", "absent");
  ck.config = read_model_config((d / "config.json").string());
  open_files(ck);
  match_tensors(ck);
  ck.has_tokenizer_json = fs::is_regular_file(d / "tokenizer.json", ec);
  ck.has_tokenizer_config = fs::is_regular_file(d / "tokenizer_config.json", ec);
  ck.has_generation_config = fs::is_regular_file(d / "generation_config.json", ec);
  return ck;
}

MemoryEstimate estimate_memory(const Checkpoint& ck) {
  MemoryEstimate m;
  for (const auto& t : ck.tensors) {
    const TensorInfo& info = ck.info(t);
    m.stored += info.bytes();
    m.as_f32 += info.count * 4;
    if (info.count * 4 > m.largest_f32) {
      m.largest_f32 = info.count * 4;
      m.largest_name = info.name;
    }
  }
  return m;
}

std::optional<std::uint64_t> mem_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return std::nullopt;
}

void require_memory(std::uint64_t needed, std::optional<std::uint64_t> available, const std::string& what) {
  if (available && needed > *available)
    checkpoint_fail("not enough memory to " + what, "/proc/meminfo MemAvailable",
                    std::to_string(needed) + " bytes needed", std::to_string(*available) + " bytes available");
}

ScanResult scan_values(const Checkpoint& ck, bool allow_nonfinite) {
  ScanResult r;
  std::vector<float> buffer;  // reused: the largest tensor, as float32
  for (const auto& t : ck.tensors) {
    const TensorInfo& info = ck.info(t);
    buffer.resize(static_cast<std::size_t>(info.count));  // (prod(shape),)
    ck.file(t).read_f32(info, 0, info.count, buffer.data());
    r.values += info.count;
    for (std::size_t i = 0; i < buffer.size(); ++i) {
      if (std::isfinite(buffer[i])) continue;
      if (r.nonfinite++ == 0) {
        r.first_tensor = info.name;
        r.first_index = index_str(info.shape, i);
        r.first_value = buffer[i];
      }
      if (!allow_nonfinite)
        checkpoint_fail("tensor " + q(info.name) + " holds a non-finite value at " + r.first_index, ck.file(t).header().path,
                        "finite values (or --allow-nonfinite)", value_str(buffer[i]));
    }
  }
  return r;
}

}  // namespace attn
