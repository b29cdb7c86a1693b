// Reading a checkpoint's weights piece by piece (model_weights.hpp).
//
// Legend: T tokens, d hidden size, V vocabulary size, f the MLP's width.
#include "io/model_weights.hpp"

#include <algorithm>

#include "core/matmul.hpp"

namespace attn {

ModelWeights::ModelWeights(const Checkpoint& checkpoint) : ck_(checkpoint) {
  for (std::size_t i = 0; i < ck_.tensors.size(); ++i) index_[ck_.tensors[i].expected.name] = i;
}

std::string ModelWeights::name(const std::string& short_name) const {
  return ck_.config.family == ModelFamily::Gpt2 ? ck_.prefix + short_name : short_name;
}

const CheckpointTensor& ModelWeights::find(const std::string& full_name) const {
  const auto it = index_.find(full_name);
  if (it == index_.end())
    checkpoint_fail("a tensor the model needs is missing", ck_.dir, full_name, "no such tensor");
  return ck_.tensors[it->second];
}

void ModelWeights::mat(const std::string& full_name, Mat& into) const {
  const CheckpointTensor& t = find(full_name);
  const Shape& s = t.expected.shape;
  if (s.size() != 2) checkpoint_fail("a weight matrix has the wrong rank", ck_.dir, full_name + " 2-D", shape_str(s));
  if (into.shape()[0] != s[0] || into.shape()[1] != s[1]) into = xt::empty<float>({s[0], s[1]});  // as stored
  ck_.file(t).read_f32(ck_.info(t), 0, into.size(), into.data());
}

void ModelWeights::vec_full(const std::string& full_name, Vec& into) const {
  const CheckpointTensor& t = find(full_name);
  const Shape& s = t.expected.shape;
  if (s.size() != 1) checkpoint_fail("a vector has the wrong rank", ck_.dir, full_name + " 1-D", shape_str(s));
  if (into.size() != s[0]) into = xt::empty<float>({s[0]});  // (n,)
  ck_.file(t).read_f32(ck_.info(t), 0, into.size(), into.data());
}

Vec ModelWeights::vec_full(const std::string& full_name) const {
  Vec v;
  vec_full(full_name, v);
  return v;
}

Vec ModelWeights::vec(const std::string& tensor) const { return vec_full(name(tensor)); }

void ModelWeights::gpt2_layer(std::size_t n, Gpt2Layer& l) const {
  const ModelConfig& c = ck_.config;
  const std::string h = name("h." + std::to_string(n) + ".");
  const float eps = static_cast<float>(c.norm_eps);
  vec_full(h + "ln_1.weight", l.ln_1.weight);            // (d,)
  vec_full(h + "ln_1.bias", l.ln_1.bias);                // (d,)
  mat(h + "attn.c_attn.weight", l.c_attn.weight);        // (d, 3d): q, k, v side by side
  vec_full(h + "attn.c_attn.bias", l.c_attn.bias);       // (3d,)
  mat(h + "attn.c_proj.weight", l.c_proj.weight);        // (d, d)
  vec_full(h + "attn.c_proj.bias", l.c_proj.bias);       // (d,)
  vec_full(h + "ln_2.weight", l.ln_2.weight);            // (d,)
  vec_full(h + "ln_2.bias", l.ln_2.bias);                // (d,)
  mat(h + "mlp.c_fc.weight", l.mlp.c_fc.weight);         // (d, f)
  vec_full(h + "mlp.c_fc.bias", l.mlp.c_fc.bias);        // (f,)
  mat(h + "mlp.c_proj.weight", l.mlp.c_proj.weight);     // (f, d)
  vec_full(h + "mlp.c_proj.bias", l.mlp.c_proj.bias);    // (d,)
  l.ln_1.eps = l.ln_2.eps = eps;
  l.heads = c.heads;
}

void ModelWeights::llama_layer(std::size_t n, LlamaLayer& l) const {
  const ModelConfig& c = ck_.config;
  const std::string m = "model.layers." + std::to_string(n) + ".";
  auto proj = [&](const std::string& p, bool bias, Linear& out) {
    mat(m + p + ".weight", out.weight);  // (out, in)
    if (bias) vec_full(m + p + ".bias", out.bias);  // (out,)
    else out.bias = Vec{};
  };
  vec_full(m + "input_layernorm.weight", l.input_layernorm.weight);                    // (d,)
  proj("self_attn.q_proj", c.qkv_bias, l.q_proj);                                      // (h * hd, d)
  proj("self_attn.k_proj", c.qkv_bias, l.k_proj);                                      // (h_kv * hd, d)
  proj("self_attn.v_proj", c.qkv_bias, l.v_proj);                                      // (h_kv * hd, d)
  proj("self_attn.o_proj", c.o_bias, l.o_proj);                                        // (d, h * hd)
  vec_full(m + "post_attention_layernorm.weight", l.post_attention_layernorm.weight);  // (d,)
  proj("mlp.gate_proj", c.mlp_bias, l.mlp.gate_proj);                                  // (f, d)
  proj("mlp.up_proj", c.mlp_bias, l.mlp.up_proj);                                      // (f, d)
  proj("mlp.down_proj", c.mlp_bias, l.mlp.down_proj);                                  // (d, f)
  l.input_layernorm.eps = l.post_attention_layernorm.eps = static_cast<float>(c.norm_eps);
  l.heads = c.heads;
  l.kv_heads = c.kv_heads;
}

Mat ModelWeights::rows(const std::string& tensor, const std::vector<std::size_t>& ids) const {
  const CheckpointTensor& t = find(name(tensor));
  const Shape& s = t.expected.shape;
  const std::size_t d = s.at(1);
  Mat out = xt::empty<float>({ids.size(), d});  // (T, d)
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] >= s[0]) checkpoint_fail("a row past the end of " + t.expected.name, ck_.dir, "< " + std::to_string(s[0]), std::to_string(ids[i]));
    ck_.file(t).read_f32(ck_.info(t), static_cast<std::uint64_t>(ids[i]) * d, d, out.data() + i * d);
  }
  return out;
}

Mat ModelWeights::token_embeddings(const std::vector<std::size_t>& ids) const {
  return rows(ck_.config.family == ModelFamily::Gpt2 ? "wte.weight" : "model.embed_tokens.weight", ids);
}

Mat ModelWeights::position_embeddings(std::size_t T) const {
  std::vector<std::size_t> positions(T);
  for (std::size_t t = 0; t < T; ++t) positions[t] = t;
  return rows("wpe.weight", positions);  // (T, d)
}

LayerNorm ModelWeights::gpt2_final_norm() const {
  return {vec("ln_f.weight"), vec("ln_f.bias"), static_cast<float>(ck_.config.norm_eps)};
}

RmsNorm ModelWeights::llama_final_norm() const {
  return {vec("model.norm.weight"), static_cast<float>(ck_.config.norm_eps)};
}

std::string ModelWeights::head_name() const {
  if (index_.count("lm_head.weight")) return "lm_head.weight";
  return name(ck_.config.family == ModelFamily::Gpt2 ? "wte.weight" : "model.embed_tokens.weight");
}

Ten3 ModelWeights::logits(const Ten3& x, std::size_t block_rows) const {
  const CheckpointTensor& t = find(head_name());
  const std::size_t V = t.expected.shape.at(0), d = t.expected.shape.at(1);
  const std::size_t rows = x.shape()[0] * x.shape()[1];
  if (x.shape()[2] != d) checkpoint_fail("the head does not fit the hidden states", ck_.dir, "width " + std::to_string(d), shape_of(x));
  block_rows = std::max<std::size_t>(1, std::min(block_rows, V));
  Ten3 out = xt::empty<float>({x.shape()[0], x.shape()[1], V});  // (B, T, V)
  std::vector<float> block(block_rows * d);                       // (block_rows, d) of the head
  for (std::size_t r0 = 0; r0 < V; r0 += block_rows) {
    const std::size_t n = std::min(block_rows, V - r0);
    ck_.file(t).read_f32(ck_.info(t), static_cast<std::uint64_t>(r0) * d, n * d, block.data());
    // (rows, d) @ (n, d)^T -> columns r0 .. r0 + n of (rows, V)
    sgemm(rows, n, d, 1.0f, x.data(), d, block.data(), d, true, 0.0f, out.data() + r0, V);
  }
  return out;
}

void ModelWeights::for_each_logit_block(const Mat& x, const std::function<void(std::size_t, std::size_t, const float*)>& visit,
                                        std::size_t block_rows) const {
  const CheckpointTensor& t = find(head_name());
  const std::size_t V = t.expected.shape.at(0), d = t.expected.shape.at(1), rows = x.shape()[0];
  if (x.shape()[1] != d) checkpoint_fail("the head does not fit the hidden states", ck_.dir, "width " + std::to_string(d), shape_of(x));
  block_rows = std::max<std::size_t>(1, std::min(block_rows, V));
  std::vector<float> block(block_rows * d);  // (block_rows, d) of the head
  std::vector<float> z(rows * block_rows);   // (rows, block_rows) logits
  for (std::size_t r0 = 0; r0 < V; r0 += block_rows) {
    const std::size_t n = std::min(block_rows, V - r0);
    ck_.file(t).read_f32(ck_.info(t), static_cast<std::uint64_t>(r0) * d, n * d, block.data());
    sgemm(rows, n, d, 1.0f, x.data(), d, block.data(), d, true, 0.0f, z.data(), n);  // (rows, d) @ (n, d)^T
    visit(r0, n, z.data());
  }
}

std::size_t ModelWeights::layer_f32_bytes() const {
  std::size_t largest = 0;
  std::map<int, std::size_t> per_layer;
  for (const auto& t : ck_.tensors) {
    if (t.expected.layer < 0) continue;
    std::size_t n = 1;
    for (std::size_t s : t.expected.shape) n *= s;
    largest = std::max(largest, per_layer[t.expected.layer] += n * sizeof(float));
  }
  return largest;
}

}  // namespace attn
