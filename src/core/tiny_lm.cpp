// The tiny language model's forward and backward passes (see tiny_lm.hpp): one call to a core
// operation per step, and the backward pass walks the forward pass in reverse, one call to that
// operation's backward pass (namespace grad) per forward step.
//
// Legend: B batch, T tokens, V vocabulary, d model width, h heads, d_k = d / h, L blocks.
#include "core/tiny_lm.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/cross_entropy.hpp"
#include "core/heads.hpp"
#include "core/residual.hpp"

namespace attn {

namespace {

std::vector<std::size_t> flat(const Ids& ids) { return std::vector<std::size_t>(ids.begin(), ids.end()); }

}  // namespace

template <class T>
std::size_t TinyLmT<T>::parameters() const {
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
  auto linear_of = [&](std::size_t in, std::size_t out, bool bias) { return make_linear(gen, in, out, bias); };
  TinyLm m;
  m.heads = heads;
  m.tok = gen.randn(vocab, d);    // (V, d)
  m.pos = gen.randn(context, d);  // (context, d)
  for (std::size_t l = 0; l < layers; ++l) {
    TinyLmBlock b;
    b.W_query = linear_of(d, d, false);  // (d, d)
    b.W_key = linear_of(d, d, false);    // (d, d)
    b.W_value = linear_of(d, d, false);  // (d, d)
    b.out_proj = linear_of(d, d, true);  // (d, d), (d,)
    m.blocks.push_back(std::move(b));
  }
  m.unembed = linear_of(d, vocab, false);  // (V, d)
  return m;
}

TinyLmT<double> to_double(const TinyLm& model) {
  auto cast = [](const Linear& l) { return to_double(l); };
  TinyLmT<double> m;
  m.heads = model.heads;
  m.tok = xt::cast<double>(model.tok);  // (V, d)
  m.pos = xt::cast<double>(model.pos);  // (context, d)
  for (const auto& b : model.blocks)
    m.blocks.push_back({cast(b.W_query), cast(b.W_key), cast(b.W_value), cast(b.out_proj)});
  m.unembed = cast(model.unembed);
  return m;
}

template <class T>
TinyLmT<T> zeros_like(const TinyLmT<T>& model) {
  TinyLmT<T> z;
  z.heads = model.heads;
  z.tok = xt::zeros<T>(model.tok.shape());  // (V, d)
  z.pos = xt::zeros<T>(model.pos.shape());  // (context, d)
  for (const auto& b : model.blocks)
    z.blocks.push_back({zeros_like(b.W_query), zeros_like(b.W_key), zeros_like(b.W_value), zeros_like(b.out_proj)});
  z.unembed = zeros_like(model.unembed);
  return z;
}

template <class T>
void tiny_lm_forward(const TinyLmT<T>& model, const Ids& ids, TinyLmForward<T>& f) {
  const std::size_t B = ids.shape()[0], Tn = ids.shape()[1], d = model.width(), L = model.blocks.size();
  if (Tn == 0 || Tn > model.context())
    throw std::invalid_argument("tiny_lm_forward: " + std::to_string(Tn) + " tokens, the model has positions for " +
                                std::to_string(model.context()));
  f.ids = ids;
  embedding_lookup(model.tok, ids, f.x);  // (B, T, d)  tok[ids]
  for (std::size_t r = 0; r < B * Tn; ++r)  // + pos[t]: the position ids are 0..T-1 in every row
    for (std::size_t c = 0; c < d; ++c) f.x.data()[r * d + c] += model.pos(r % Tn, c);
  f.blocks.resize(L);
  if (L == 0) f.y = f.x;  // (B, T, d)
  else f.blocks[0].x = f.x;  // (B, T, d)  the stream entering the first block
  for (std::size_t l = 0; l < L; ++l) {
    const TinyLmBlockT<T>& block = model.blocks[l];
    TinyLmBlockForward<T>& bf = f.blocks[l];
    linear(block.W_query, bf.x, f.projection);        // (B, T, d)
    to_heads(f.projection, model.heads, bf.queries);  // (B, T, d) -> (B, h, T, d_k)
    linear(block.W_key, bf.x, f.projection);
    to_heads(f.projection, model.heads, bf.keys);  // (B, h, T, d_k)
    linear(block.W_value, bf.x, f.projection);
    to_heads(f.projection, model.heads, bf.values);  // (B, h, T, d_k)
    scaled_dot_product_attention(bf.queries, bf.keys, bf.values, true, bf.attn_scores, bf.scaled, bf.attn_weights,
                                 bf.context);             // (B, h, T, T) three times, (B, h, T, d_k)
    from_heads(bf.context, bf.merged);                    // (B, h, T, d_k) -> (B, T, d)
    linear(block.out_proj, bf.merged, bf.projected);      // (B, T, d)
    xt::xtensor<T, 3>& leaving = l + 1 < L ? f.blocks[l + 1].x : f.y;  // the stream leaving this block
    leaving = bf.x;                                                    // (B, T, d)  the skip path
    add_into(leaving, bf.projected);                                   // (B, T, d)  x + out_proj(...)
  }
  linear(model.unembed, f.y, f.logits);  // (B, T, V)
}

template <class T>
TinyLmForward<T> tiny_lm_forward(const TinyLmT<T>& model, const Ids& ids) {
  TinyLmForward<T> f;
  tiny_lm_forward(model, ids, f);
  return f;
}

template <class T>
T tiny_lm_loss(const TinyLmForward<T>& forward, const Ids& targets) {
  const std::size_t N = forward.logits.shape()[0] * forward.logits.shape()[1], V = forward.logits.shape()[2];
  return cross_entropy(forward.logits.data(), N, V, flat(targets));  // the (B * T, V) rows, read in place
}

template <class T>
void tiny_lm_backward(const TinyLmT<T>& model, const TinyLmForward<T>& f, const Ids& targets, TinyLmGrads<T>& g) {
  const std::size_t B = f.ids.shape()[0], Tn = f.ids.shape()[1], V = model.vocab(), L = model.blocks.size();
  if (targets.shape() != f.ids.shape())
    throw std::invalid_argument("tiny_lm_backward: targets " + shape_of(targets) + " do not fit ids " +
                                shape_of(f.ids));
  // Every parameter's gradient below is written whole (no += across steps), so g.params needs
  // only the model's structure; each tensor gets its shape where it is written.
  g.params.heads = model.heads;
  g.params.blocks.resize(L);
  g.logits.resize({B, Tn, V});  // (B, T, V)
  grad::cross_entropy_backward(f.logits.data(), B * Tn, V, flat(targets), g.logits.data());

  // From here on g.x is dL/d(stream): first dL/dy, then, block by block downwards, the gradient
  // of the stream entering each block, and at the end the embeddings' gradient.
  grad::linear_backward(f.y, model.unembed.weight, g.logits, g.x, g.params.unembed.weight,
                        model.unembed.has_bias() ? &g.params.unembed.bias : nullptr);  // (B, T, d), (V, d)

  g.blocks.resize(L);
  for (std::size_t l = L; l-- > 0;) {
    const TinyLmBlockT<T>& block = model.blocks[l];
    const TinyLmBlockForward<T>& bf = f.blocks[l];
    TinyLmBlockT<T>& gb = g.params.blocks[l];
    // x_out = x + out_proj(merged): the skip path hands dL/dx_out straight to x (it stays in g.x).
    grad::linear_backward(bf.merged, block.out_proj.weight, g.x, g.d_rows, gb.out_proj.weight,
                          &gb.out_proj.bias);                      // dL/d merged (B, T, d), (d, d), (d,)
    grad::merge_heads_backward(g.d_rows, model.heads, g.d_context);  // (B, T, d) -> (B, h, T, d_k)
    grad::attention_backward(bf.queries, bf.keys, bf.values, bf.attn_weights, g.d_context, g.blocks[l]);
    const grad::AttentionGrads<T>& ag = g.blocks[l];
    // The three projections read the same x, so their input gradients add up in g.x.
    const std::pair<const LinearT<T>*, const xt::xtensor<T, 4>*> projections[] = {
        {&block.W_query, &ag.queries}, {&block.W_key, &ag.keys}, {&block.W_value, &ag.values}};
    LinearT<T>* grads[] = {&gb.W_query, &gb.W_key, &gb.W_value};
    for (std::size_t p = 0; p < 3; ++p) {
      grad::split_heads_backward(*projections[p].second, g.d_rows);  // (B, h, T, d_k) -> (B, T, d)
      grad::linear_backward<T>(bf.x, projections[p].first->weight, g.d_rows, g.d_input, grads[p]->weight,
                            nullptr);                                 // (B, T, d), (d, d)
      add_into(g.x, g.d_input);                                       // (B, T, d)
    }
  }
  g.params.tok = grad::embedding_backward(f.ids, g.x, model.vocab());                 // (V, d)
  g.params.pos = grad::embedding_backward(position_ids(B, Tn), g.x, model.context());  // (context, d)
}

template <class T>
TinyLmGrads<T> tiny_lm_backward(const TinyLmT<T>& model, const TinyLmForward<T>& f, const Ids& targets) {
  TinyLmGrads<T> g;
  tiny_lm_backward(model, f, targets, g);
  return g;
}

template <class T>
std::vector<ParamT<T>> tiny_lm_params(TinyLmT<T>& model, const TinyLmT<T>& grads) {
  std::vector<ParamT<T>> out;
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
    TinyLmBlockT<T>& b = model.blocks[l];
    const TinyLmBlockT<T>& gb = grads.blocks[l];
    add(p + "W_query.weight", b.W_query.weight, gb.W_query.weight);
    add(p + "W_key.weight", b.W_key.weight, gb.W_key.weight);
    add(p + "W_value.weight", b.W_value.weight, gb.W_value.weight);
    add(p + "out_proj.weight", b.out_proj.weight, gb.out_proj.weight);
    add(p + "out_proj.bias", b.out_proj.bias, gb.out_proj.bias);
  }
  add("unembed.weight", model.unembed.weight, grads.unembed.weight);
  return out;
}

#define ATTN_TINY_LM_INSTANTIATE(T)                                                                        \
  template struct TinyLmT<T>;                                                                              \
  template TinyLmT<T> zeros_like(const TinyLmT<T>&);                                                       \
  template TinyLmForward<T> tiny_lm_forward(const TinyLmT<T>&, const Ids&);                                \
  template void tiny_lm_forward(const TinyLmT<T>&, const Ids&, TinyLmForward<T>&);                         \
  template T tiny_lm_loss(const TinyLmForward<T>&, const Ids&);                                            \
  template TinyLmGrads<T> tiny_lm_backward(const TinyLmT<T>&, const TinyLmForward<T>&, const Ids&);        \
  template void tiny_lm_backward(const TinyLmT<T>&, const TinyLmForward<T>&, const Ids&, TinyLmGrads<T>&);  \
  template std::vector<ParamT<T>> tiny_lm_params(TinyLmT<T>&, const TinyLmT<T>&);
ATTN_TINY_LM_INSTANTIATE(float)
ATTN_TINY_LM_INSTANTIATE(double)
#undef ATTN_TINY_LM_INSTANTIATE

}  // namespace attn
