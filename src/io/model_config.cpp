// config.json -> ModelConfig (model_config.hpp): every size checked, every contradiction named.
#include "io/model_config.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include "io/json.hpp"
#include "io/npy.hpp"          // escaped_for_message, not_a_file
#include "io/safetensors.hpp"  // CheckpointError, checkpoint_fail

namespace attn {
namespace {

using nlohmann::json;

// Reads one config.json with its path at hand for every message.
struct Fields {
  const json& doc;
  const std::string& path;

  // The field, or nullptr when absent or null (Hugging Face treats null as "not given").
  const json* get(const json& obj, const std::string& name) const {
    const auto it = obj.find(name);
    return it == obj.end() || it->is_null() ? nullptr : &*it;
  }
  const json* get(const std::string& name) const { return get(doc, name); }

  std::string shown(const json& v) const { return escaped_for_message(v.dump(), 40); }

  [[noreturn]] void missing(const std::string& name, const std::string& expected) const {
    checkpoint_fail("config.json has no " + name, path, name + ": " + expected, "absent");
  }

  std::size_t size(const json& obj, const std::string& name, std::size_t hi) const {
    const json* v = get(obj, name);
    if (!v) missing(name, "a whole number 1.." + std::to_string(hi));
    return size_value(*v, name, hi);
  }
  std::size_t size(const std::string& name, std::size_t hi) const { return size(doc, name, hi); }
  std::size_t size_value(const json& v, const std::string& name, std::size_t hi) const {
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() < 1 || v.get<std::uint64_t>() > hi)
      checkpoint_fail("config field " + name + " is not a usable size", path, name + ": a whole number 1.." + std::to_string(hi), shown(v));
    return static_cast<std::size_t>(v.get<std::uint64_t>());
  }
  std::size_t size_or(const std::string& name, std::size_t hi, std::size_t fallback) const {
    const json* v = get(name);
    return v ? size_value(*v, name, hi) : fallback;
  }

  double positive(const json& obj, const std::string& name, std::optional<double> fallback) const {
    const json* v = get(obj, name);
    if (!v) {
      if (!fallback) missing(name, "a number > 0");
      return *fallback;
    }
    if (!v->is_number() || !(v->get<double>() > 0) || !std::isfinite(v->get<double>()))
      checkpoint_fail("config field " + name + " is not a positive number", path, name + ": a number > 0", shown(*v));
    return v->get<double>();
  }
  double probability(const std::string& name) const {
    const json* v = get(name);
    if (!v) return 0.1;  // GPT2Config's default
    if (!v->is_number() || v->get<double>() < 0 || v->get<double>() > 1)
      checkpoint_fail("config field " + name + " is not a probability", path, name + ": a number in 0..1", shown(*v));
    return v->get<double>();
  }
  bool flag(const std::string& name, bool fallback) const {
    const json* v = get(name);
    if (!v) return fallback;
    if (!v->is_boolean()) checkpoint_fail("config field " + name + " is not true or false", path, name + ": true or false", shown(*v));
    return v->get<bool>();
  }
  std::string text(const json& obj, const std::string& name, const std::string& fallback) const {
    const json* v = get(obj, name);
    if (!v) return fallback;
    if (!v->is_string()) checkpoint_fail("config field " + name + " is not a string", path, name + ": a string", shown(*v));
    return v->get<std::string>();
  }
  std::string text(const std::string& name, const std::string& fallback) const { return text(doc, name, fallback); }
};

std::string q(const std::string& s) { return "'" + escaped_for_message(s, 40, true) + "'"; }

void read_gpt2(const Fields& f, ModelConfig& c) {
  c.hidden = f.size("n_embd", kConfigMaxWidth);
  c.layers = f.size("n_layer", kConfigMaxLayers);
  c.heads = f.size("n_head", kConfigMaxHeads);
  c.kv_heads = c.heads;
  c.vocab = f.size("vocab_size", kConfigMaxVocab);
  c.context = f.size("n_positions", kConfigMaxContext);
  c.intermediate = f.size_or("n_inner", kConfigMaxWidth, 4 * c.hidden);  // null: 4 * n_embd
  c.norm_eps = f.positive(f.doc, "layer_norm_epsilon", 1e-5);
  c.tie_word_embeddings = f.flag("tie_word_embeddings", true);
  c.qkv_bias = c.o_bias = c.mlp_bias = true;  // Conv1D always has a bias
  const std::string act = f.text("activation_function", "gelu_new");
  if (act != "gelu_new")
    checkpoint_fail("GPT-2 activation function is not supported", f.path, "activation_function: \"gelu_new\"", q(act));
  c.embd_pdrop = f.probability("embd_pdrop");
  c.attn_pdrop = f.probability("attn_pdrop");
  c.resid_pdrop = f.probability("resid_pdrop");
}

// The llama3 scaling fields, from rope_scaling (transformers 4.x) or rope_parameters (5).
RopeScalingConfig read_scaling(const Fields& f, const json& obj, const std::string& field) {
  const std::string a = f.text(obj, "rope_type", ""), b = f.text(obj, "type", "");
  if (!a.empty() && !b.empty() && a != b)
    checkpoint_fail(field + " names two types", f.path, field + ".rope_type and .type agreeing", q(a) + " vs " + q(b));
  const std::string type = a.empty() ? b : a;
  RopeScalingConfig s;
  if (type.empty() || type == "default") return s;
  if (type != "llama3")
    checkpoint_fail("RoPE scaling type is not supported", f.path, field + ".rope_type: \"llama3\" or \"default\"", q(type));
  s.llama3 = true;
  s.factor = f.positive(obj, "factor", std::nullopt);
  s.low_freq_factor = f.positive(obj, "low_freq_factor", std::nullopt);
  s.high_freq_factor = f.positive(obj, "high_freq_factor", std::nullopt);
  s.original_max_position_embeddings = f.size(obj, "original_max_position_embeddings", kConfigMaxContext);
  if (!(s.high_freq_factor > s.low_freq_factor))
    checkpoint_fail("RoPE scaling needs high_freq_factor above low_freq_factor", f.path,
                    "high_freq_factor > low_freq_factor", std::to_string(s.high_freq_factor) + " vs " + std::to_string(s.low_freq_factor));
  return s;
}

bool same_scaling(const RopeScalingConfig& x, const RopeScalingConfig& y) {
  return x.llama3 == y.llama3 && x.factor == y.factor && x.low_freq_factor == y.low_freq_factor &&
         x.high_freq_factor == y.high_freq_factor && x.original_max_position_embeddings == y.original_max_position_embeddings;
}

void read_rope(const Fields& f, ModelConfig& c) {
  const json* params = f.get("rope_parameters");  // transformers 5
  if (params && !params->is_object())
    checkpoint_fail("config field rope_parameters is not an object", f.path, "rope_parameters: an object", f.shown(*params));
  const json* scaling = f.get("rope_scaling");     // transformers 4.x
  if (scaling && !scaling->is_object())
    checkpoint_fail("config field rope_scaling is not an object", f.path, "rope_scaling: an object or null", f.shown(*scaling));
  const double old_theta = f.positive(f.doc, "rope_theta", 10000.0);
  c.rope_theta = old_theta;
  if (params) {
    c.rope_theta = f.positive(*params, "rope_theta", old_theta);
    if (f.get("rope_theta") && c.rope_theta != old_theta)
      checkpoint_fail("rope_theta and rope_parameters.rope_theta disagree", f.path, "one value",
                      f.shown(*f.get("rope_theta")) + " vs " + f.shown((*params)["rope_theta"]));
    c.rope_scaling = read_scaling(f, *params, "rope_parameters");
  }
  if (scaling) {
    const RopeScalingConfig old = read_scaling(f, *scaling, "rope_scaling");
    if (params && !same_scaling(old, c.rope_scaling))
      checkpoint_fail("rope_scaling and rope_parameters disagree", f.path, "the same scaling", f.shown(*scaling) + " vs " + f.shown(*params));
    c.rope_scaling = old;
  }
}

void read_llama_like(const Fields& f, ModelConfig& c) {
  c.hidden = f.size("hidden_size", kConfigMaxWidth);
  c.layers = f.size("num_hidden_layers", kConfigMaxLayers);
  c.heads = f.size("num_attention_heads", kConfigMaxHeads);
  // LlamaConfig: absent means as many as query heads; Qwen2Config would default it to 32, so
  // for Qwen2 it is required rather than guessed.
  c.kv_heads = c.family == ModelFamily::Qwen2 ? f.size("num_key_value_heads", kConfigMaxHeads)
                                              : f.size_or("num_key_value_heads", kConfigMaxHeads, c.heads);
  c.intermediate = f.size("intermediate_size", kConfigMaxWidth);
  c.vocab = f.size("vocab_size", kConfigMaxVocab);
  c.context = f.size("max_position_embeddings", kConfigMaxContext);
  c.norm_eps = f.positive(f.doc, "rms_norm_eps", 1e-6);
  c.tie_word_embeddings = f.flag("tie_word_embeddings", false);
  const bool attention_bias = f.flag("attention_bias", false);
  c.qkv_bias = c.family == ModelFamily::Qwen2 || attention_bias;  // Qwen2: always on q, k, v
  c.o_bias = c.family == ModelFamily::Llama && attention_bias;
  c.mlp_bias = c.family == ModelFamily::Llama && f.flag("mlp_bias", false);
  const std::string act = f.text("hidden_act", "silu");
  if (act != "silu") checkpoint_fail("activation function is not supported", f.path, "hidden_act: \"silu\"", q(act));
  if (const json* p = f.get("pad_token_id")) {
    if (!p->is_number_unsigned() || p->get<std::uint64_t>() >= c.vocab)
      checkpoint_fail("config field pad_token_id is not a token id", f.path, "pad_token_id: 0.." + std::to_string(c.vocab - 1), f.shown(*p));
    c.pad_token_id = p->get<std::uint64_t>();
  }
  read_rope(f, c);
}

void check_heads(const Fields& f, ModelConfig& c) {
  const std::string heads = c.family == ModelFamily::Gpt2 ? "n_head" : "num_attention_heads";
  const std::string width = c.family == ModelFamily::Gpt2 ? "n_embd" : "hidden_size";
  if (const json* hd = c.family == ModelFamily::Gpt2 ? nullptr : f.get("head_dim")) {
    c.head_dim = f.size_value(*hd, "head_dim", kConfigMaxWidth);
    c.head_dim_given = true;
  } else {
    if (c.hidden % c.heads != 0)
      checkpoint_fail(heads + " does not divide " + width, f.path,
                      width + " " + std::to_string(c.hidden) + " a multiple of " + heads + " " + std::to_string(c.heads),
                      "remainder " + std::to_string(c.hidden % c.heads));
    c.head_dim = c.hidden / c.heads;
  }
  if (c.heads % c.kv_heads != 0)
    checkpoint_fail("num_key_value_heads does not divide num_attention_heads", f.path,
                    "num_attention_heads " + std::to_string(c.heads) + " a multiple of num_key_value_heads " + std::to_string(c.kv_heads),
                    "remainder " + std::to_string(c.heads % c.kv_heads));
}

void read_dtype(const Fields& f, ModelConfig& c) {
  const std::string old = f.text("torch_dtype", ""), now = f.text("dtype", "");
  if (!old.empty() && !now.empty() && old != now)
    checkpoint_fail("torch_dtype and dtype disagree", f.path, "one dtype", q(old) + " vs " + q(now));
  c.dtype = now.empty() ? old : now;
}

}  // namespace

const char* family_name(ModelFamily f) {
  switch (f) {
    case ModelFamily::Gpt2: return "gpt2";
    case ModelFamily::Llama: return "llama";
    case ModelFamily::Qwen2: return "qwen2";
  }
  return "?";
}

ModelConfig parse_model_config(const std::string& text, const std::string& path) {
  json doc;
  try {
    doc = parse_json_strict(text, path);
  } catch (const JsonError& e) {
    std::string why = e.what();
    if (why.rfind(path + ": ", 0) == 0) why = why.substr(path.size() + 2);
    checkpoint_fail("config.json is not valid JSON", path, "UTF-8 JSON, each key once", why);
  }
  if (!doc.is_object()) checkpoint_fail("config.json is not a JSON object", path, "an object", doc.type_name());
  const Fields f{doc, path};
  ModelConfig c;
  c.path = path;
  c.model_type = f.text("model_type", "");
  if (c.model_type == "gpt2") c.family = ModelFamily::Gpt2;
  else if (c.model_type == "llama") c.family = ModelFamily::Llama;
  else if (c.model_type == "qwen2") c.family = ModelFamily::Qwen2;
  else if (c.model_type.empty()) f.missing("model_type", "gpt2, llama or qwen2");
  else checkpoint_fail("model_type is not supported", path, "model_type: gpt2, llama or qwen2", q(c.model_type));
  if (const json* a = f.get("architectures"); a && a->is_array() && !a->empty() && (*a)[0].is_string())
    c.architecture = (*a)[0].get<std::string>();
  if (c.family == ModelFamily::Gpt2) read_gpt2(f, c);
  else read_llama_like(f, c);
  check_heads(f, c);
  // Only the induction probe reads it, so a value that is no token id (null, a list) means none.
  if (const json* b = f.get("bos_token_id"); b && b->is_number_unsigned() && b->get<std::uint64_t>() < c.vocab)
    c.bos_token_id = b->get<std::uint64_t>();
  read_dtype(f, c);
  return c;
}

ModelConfig read_model_config(const std::string& path) {
  if (const std::string problem = not_a_file(path); !problem.empty())
    checkpoint_fail("cannot read config.json", path, "a regular file", problem);
  std::ifstream in(path, std::ios::binary);
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0);
  // A config.json is a few kilobytes; a huge one is not a config.
  constexpr std::streamoff kMaxConfig = 1 << 20;
  if (size < 0 || size > kMaxConfig)
    checkpoint_fail("config.json is too large", path, "at most " + std::to_string(kMaxConfig) + " bytes", std::to_string(size) + " bytes");
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), size);
  if (!in) checkpoint_fail("cannot read config.json", path, "its bytes", "a failed read");
  return parse_model_config(text, path);
}

}  // namespace attn
