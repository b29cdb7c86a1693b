// The tiny language model's forward and backward passes (see tiny_lm.hpp). The backward pass
// walks the forward pass in reverse, one call to a core/grad function per forward step.
//
// Legend: B batch, T tokens, V vocabulary, d model width, h heads, d_k = d / h, L blocks.
#include "core/tiny_lm.hpp"

#include <stdexcept>
#include <string>

#include "core/cross_entropy.hpp"
#include "core/grad/cross_entropy.hpp"
#include "core/grad/embedding.hpp"
#include "core/grad/heads.hpp"
#include "core/grad/linear.hpp"
#include "core/grad/residual.hpp"
#include "core/heads.hpp"

namespace attn {

namespace {

std::vector<std::size_t> flat(const Ids& ids) { return std::vector<std::size_t>(ids.begin(), ids.end()); }

Mat as_rows(const Ten3& t) {  // (B, T, n) -> (B * T, n), the same memory
  Mat m = xt::empty<float>({t.shape()[0] * t.shape()[1], t.shape()[2]});  // (B * T, n)
  std::copy(t.begin(), t.end(), m.begin());
  return m;
}

Linear zeros_like(const Linear& l) {
  Linear z;
  z.weight = xt::zeros<float>(l.weight.shape());  // (out, in)
  if (l.has_bias()) z.bias = xt::zeros<float>(l.bias.shape());  // (out,)
  return z;
}

}  // namespace

std::size_t TinyLm::parameters() const {
  std::size_t n = tok.size() + pos.size() + unembed.weight.size();
  for (const auto& b : blocks)
    n += b.W_query.weight.size() + b.W_key.weight.size() + b.W_value.weight.size() + b.out_proj.weight.size() +
         b.out_proj.bias.size();
  return n;
}

TinyLm make_tiny_lm(TorchGenerator& gen, std::size_t vocab, std::size_t context, std::size_t d, std::size_t heads,
                    std::size_t layers) {
  if (vocab == 0 || context == 0 || d == 0 || layers == 0 || heads == 0 || d % heads != 0)
    throw std::invalid_argument("make_tiny_lm: needs positive sizes and heads dividing d, got vocab " +
                                std::to_string(vocab) + ", context " + std::to_string(context) + ", d " +
                                std::to_string(d) + ", heads " + std::to_string(heads) + ", layers " +
                                std::to_string(layers));
  TinyLm m;
  m.heads = heads;
  m.tok = gen.randn(vocab, d);    // (V, d)
  m.pos = gen.randn(context, d);  // (context, d)
  for (std::size_t l = 0; l < layers; ++l) {
    TinyLmBlock b;
    b.W_query = make_linear(gen, d, d, false);  // (d, d)
    b.W_key = make_linear(gen, d, d, false);    // (d, d)
    b.W_value = make_linear(gen, d, d, false);  // (d, d)
    b.out_proj = make_linear(gen, d, d, true);  // (d, d), (d,)
    m.blocks.push_back(std::move(b));
  }
  m.unembed = make_linear(gen, d, vocab, false);  // (V, d)
  return m;
}

TinyLm zeros_like(const TinyLm& model) {
  TinyLm z;
  z.heads = model.heads;
  z.tok = xt::zeros<float>(model.tok.shape());  // (V, d)
  z.pos = xt::zeros<float>(model.pos.shape());  // (context, d)
  for (const auto& b : model.blocks)
    z.blocks.push_back({zeros_like(b.W_query), zeros_like(b.W_key), zeros_like(b.W_value), zeros_like(b.out_proj)});
  z.unembed = zeros_like(model.unembed);
  return z;
}

TinyLmForward tiny_lm_forward(const TinyLm& model, const Ids& ids) {
  const std::size_t B = ids.shape()[0], T = ids.shape()[1];
  if (T == 0 || T > model.context())
    throw std::invalid_argument("tiny_lm_forward: " + std::to_string(T) + " tokens, the model has positions for " +
                                std::to_string(model.context()));
  TinyLmForward f;
  f.ids = ids;
  f.x = embedding_lookup(model.tok, ids);                             // (B, T, d)
  const Ten3 positions = embedding_lookup(model.pos, position_ids(B, T));  // (B, T, d)
  grad::accumulate(f.x, positions);                                  // (B, T, d)  tok + pos
  Ten3 stream = f.x;                                                 // (B, T, d)
  for (const TinyLmBlock& block : model.blocks) {
    TinyLmBlockForward bf;
    bf.x = stream;                                                                      // (B, T, d)
    bf.queries = swap_token_head_axes(split_heads(linear(block.W_query, stream), model.heads));  // (B, h, T, d_k)
    bf.keys = swap_token_head_axes(split_heads(linear(block.W_key, stream), model.heads));      // (B, h, T, d_k)
    bf.values = swap_token_head_axes(split_heads(linear(block.W_value, stream), model.heads));  // (B, h, T, d_k)
    bf.attention = scaled_dot_product_attention(bf.queries, bf.keys, bf.values, true);
    bf.merged = merge_heads(swap_token_head_axes(bf.attention.context));  // (B, h, T, d_k) -> (B, T, d)
    bf.projected = linear(block.out_proj, bf.merged);                     // (B, T, d)
    grad::accumulate(stream, bf.projected);                               // (B, T, d)  x + out_proj(...)
    f.blocks.push_back(std::move(bf));
  }
  f.y = stream;                               // (B, T, d)
  f.logits = linear(model.unembed, f.y);      // (B, T, V)
  return f;
}

float tiny_lm_loss(const TinyLmForward& forward, const Ids& targets) {
  return cross_entropy(as_rows(forward.logits), flat(targets));  // (B * T, V)
}

TinyLmGrads tiny_lm_backward(const TinyLm& model, const TinyLmForward& f, const Ids& targets) {
  const std::size_t B = f.ids.shape()[0], T = f.ids.shape()[1], V = model.vocab();
  if (targets.shape() != f.ids.shape())
    throw std::invalid_argument("tiny_lm_backward: targets " + shape_of(targets) + " do not fit ids " +
                                shape_of(f.ids));
  TinyLmGrads g;
  g.params = zeros_like(model);
  const Mat d_rows = grad::cross_entropy_backward(as_rows(f.logits), flat(targets));  // (B * T, V)
  g.logits = xt::empty<float>({B, T, V});                                              // (B, T, V)
  std::copy(d_rows.begin(), d_rows.end(), g.logits.begin());

  const auto unembed = grad::linear_backward(f.y, model.unembed.weight, g.logits, false);
  g.params.unembed.weight = unembed.weight;  // (V, d)
  Ten3 d_stream = unembed.x;                 // (B, T, d)  dL/dy

  g.blocks.resize(model.blocks.size());
  for (std::size_t l = model.blocks.size(); l-- > 0;) {
    const TinyLmBlock& block = model.blocks[l];
    const TinyLmBlockForward& bf = f.blocks[l];
    TinyLmBlock& gb = g.params.blocks[l];
    // x_out = x + out_proj(merged): the skip path hands d_stream straight to x (kept in d_stream).
    const auto proj = grad::linear_backward(bf.merged, block.out_proj.weight, d_stream, true);
    gb.out_proj.weight = proj.weight;  // (d, d)
    gb.out_proj.bias = proj.bias;      // (d,)
    const Ten4 d_context = grad::merge_heads_backward(proj.x, model.heads);  // (B, T, d) -> (B, h, T, d_k)
    g.blocks[l] = grad::attention_backward(bf.queries, bf.keys, bf.values, bf.attention.attn_weights, d_context);
    const grad::AttentionGrads<float>& ag = g.blocks[l];
    const auto q = grad::linear_backward(bf.x, block.W_query.weight, grad::split_heads_backward(ag.queries), false);
    const auto k = grad::linear_backward(bf.x, block.W_key.weight, grad::split_heads_backward(ag.keys), false);
    const auto v = grad::linear_backward(bf.x, block.W_value.weight, grad::split_heads_backward(ag.values), false);
    gb.W_query.weight = q.weight;  // (d, d)
    gb.W_key.weight = k.weight;    // (d, d)
    gb.W_value.weight = v.weight;  // (d, d)
    grad::accumulate(d_stream, q.x);  // (B, T, d): the three projections read the same x
    grad::accumulate(d_stream, k.x);
    grad::accumulate(d_stream, v.x);
  }
  g.x = d_stream;                                                                 // (B, T, d)
  g.params.tok = grad::embedding_backward(f.ids, g.x, model.vocab());             // (V, d)
  g.params.pos = grad::embedding_backward(position_ids(B, T), g.x, model.context());  // (context, d)
  return g;
}

std::vector<Param> tiny_lm_params(TinyLm& model, const TinyLm& grads) {
  std::vector<Param> out;
  auto add = [&](const std::string& name, auto& value, const auto& grad) {
    if (value.size() != grad.size())
      throw std::invalid_argument("tiny_lm_params: " + name + " " + shape_of(value) + " but its gradient " +
                                  shape_of(grad));
    out.push_back({name, value.data(), grad.data(), value.size()});
  };
  add("tok.weight", model.tok, grads.tok);
  add("pos.weight", model.pos, grads.pos);
  const bool many = model.blocks.size() > 1;
  if (grads.blocks.size() != model.blocks.size())
    throw std::invalid_argument("tiny_lm_params: the gradients have another number of blocks");
  for (std::size_t l = 0; l < model.blocks.size(); ++l) {
    const std::string p = many ? "blocks." + std::to_string(l) + "." : "";
    TinyLmBlock& b = model.blocks[l];
    const TinyLmBlock& gb = grads.blocks[l];
    add(p + "W_query.weight", b.W_query.weight, gb.W_query.weight);
    add(p + "W_key.weight", b.W_key.weight, gb.W_key.weight);
    add(p + "W_value.weight", b.W_value.weight, gb.W_value.weight);
    add(p + "out_proj.weight", b.out_proj.weight, gb.out_proj.weight);
    add(p + "out_proj.bias", b.out_proj.bias, gb.out_proj.bias);
  }
  add("unembed.weight", model.unembed.weight, grads.unembed.weight);
  return out;
}

}  // namespace attn
