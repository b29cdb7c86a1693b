// print(AutoModel.from_pretrained(DIR)), rebuilt from the config (module_tree.hpp). The classes'
// reprs are torch's: Module.__repr__ (children as "(name): repr", nested lines indented by two),
// extra_repr of Embedding, Linear, LayerNorm and Dropout, and ModuleList's folding of repeats.
#include "cli/module_tree.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

namespace attn::cli {
namespace {

// torch's _addindent: every line after the first indented by `n` spaces.
std::string add_indent(const std::string& s, int n) {
  std::string out;
  for (char c : s) {
    out += c;
    if (c == '\n') out.append(static_cast<std::size_t>(n), ' ');
  }
  return out;
}

using Children = std::vector<std::pair<std::string, std::string>>;  // (name, repr)

// Module.__repr__: "Name(extra)" for a leaf, else the children one per line.
std::string module(const std::string& name, const Children& children, const std::string& extra = "") {
  if (children.empty()) return name + "(" + extra + ")";
  std::string s = name + "(";
  for (const auto& [key, repr] : children) s += "\n  (" + key + "): " + add_indent(repr, 2);
  return s + "\n)";
}

// ModuleList of `n` identical blocks: torch 2 folds consecutive equal reprs into one line.
std::string module_list(std::size_t n, const std::string& block) {
  const std::string item = n == 1 ? "(0): " + block
                                  : "(0-" + std::to_string(n - 1) + "): " + std::to_string(n) + " x " + block;
  return "ModuleList(\n  " + add_indent(item, 2) + "\n)";
}

std::string embedding(std::size_t num, std::size_t dim, const std::optional<std::uint64_t>& pad = std::nullopt) {
  std::string extra = std::to_string(num) + ", " + std::to_string(dim);
  if (pad) extra += ", padding_idx=" + std::to_string(*pad);
  return "Embedding(" + extra + ")";
}

std::string linear(std::size_t in, std::size_t out, bool bias) {
  return "Linear(in_features=" + std::to_string(in) + ", out_features=" + std::to_string(out) +
         ", bias=" + (bias ? "True" : "False") + ")";
}

std::string dropout(double p) { return "Dropout(p=" + python_float(p) + ", inplace=False)"; }

std::string gpt2(const ModelConfig& c) {
  const std::size_t d = c.hidden;
  const std::string ln = "LayerNorm((" + std::to_string(d) + ",), eps=" + python_float(c.norm_eps) + ", elementwise_affine=True)";
  auto conv1d = [](std::size_t nf, std::size_t nx) { return "Conv1D(nf=" + std::to_string(nf) + ", nx=" + std::to_string(nx) + ")"; };
  const std::string attn = module("GPT2Attention", {{"c_attn", conv1d(3 * d, d)}, {"c_proj", conv1d(d, d)},
                                                    {"attn_dropout", dropout(c.attn_pdrop)}, {"resid_dropout", dropout(c.resid_pdrop)}});
  const std::string mlp = module("GPT2MLP", {{"c_fc", conv1d(c.intermediate, d)}, {"c_proj", conv1d(d, c.intermediate)},
                                             {"act", "NewGELUActivation()"}, {"dropout", dropout(c.resid_pdrop)}});
  const std::string block = module("GPT2Block", {{"ln_1", ln}, {"attn", attn}, {"ln_2", ln}, {"mlp", mlp}});
  return module("GPT2Model", {{"wte", embedding(c.vocab, d)}, {"wpe", embedding(c.context, d)}, {"drop", dropout(c.embd_pdrop)},
                              {"h", module_list(c.layers, block)}, {"ln_f", ln}});
}

std::string llama_like(const ModelConfig& c) {
  const std::string P = c.family == ModelFamily::Qwen2 ? "Qwen2" : "Llama";
  const std::size_t d = c.hidden, q = c.heads * c.head_dim, kv = c.kv_heads * c.head_dim;
  const std::string norm = P + "RMSNorm((" + std::to_string(d) + ",), eps=" + python_float(c.norm_eps) + ")";
  const std::string attn = module(P + "Attention", {{"q_proj", linear(d, q, c.qkv_bias)}, {"k_proj", linear(d, kv, c.qkv_bias)},
                                                    {"v_proj", linear(d, kv, c.qkv_bias)}, {"o_proj", linear(q, d, c.o_bias)}});
  const std::string mlp = module(P + "MLP", {{"gate_proj", linear(d, c.intermediate, c.mlp_bias)},
                                             {"up_proj", linear(d, c.intermediate, c.mlp_bias)},
                                             {"down_proj", linear(c.intermediate, d, c.mlp_bias)}, {"act_fn", "SiLU()"}});
  const std::string layer = module(P + "DecoderLayer", {{"self_attn", attn}, {"mlp", mlp}, {"input_layernorm", norm},
                                                        {"post_attention_layernorm", norm}});
  return module(P + "Model", {{"embed_tokens", embedding(c.vocab, d, c.pad_token_id)}, {"layers", module_list(c.layers, layer)},
                              {"norm", norm}, {"rotary_emb", P + "RotaryEmbedding()"}});
}

}  // namespace

std::string python_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // The shortest %.{p}e that reads back as v: its digits and decimal exponent.
  char buf[40];
  for (int p = 0; p < 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  const auto e = s.find('e');
  const int exp = std::atoi(s.c_str() + e + 1);
  std::string mant = s.substr(0, e), sign;
  if (mant[0] == '-') {
    sign = "-";
    mant.erase(0, 1);
  }
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  if (exp < -4 || exp >= 16) {  // 1e-05, 1.5e+16
    std::string m = digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "");
    char ebuf[16];
    std::snprintf(ebuf, sizeof ebuf, "%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    return sign + m + "e" + ebuf;
  }
  std::string out;
  if (exp < 0) {
    out = "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
  } else {
    const std::size_t point = static_cast<std::size_t>(exp) + 1;
    if (digits.size() <= point) out = digits + std::string(point - digits.size(), '0') + ".0";
    else out = digits.substr(0, point) + "." + digits.substr(point);
  }
  return sign + out;
}

std::string module_tree(const ModelConfig& config) {
  return config.family == ModelFamily::Gpt2 ? gpt2(config) : llama_like(config);
}

}  // namespace attn::cli
