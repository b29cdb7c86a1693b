// The tiny language model's forward and backward passes (see tiny_lm.hpp). The backward pass
// walks the forward pass in reverse, one call to a core/grad function per forward step.
//
// Legend: B batch, T tokens, V vocabulary, d model width, h heads, d_k = d / h, L blocks.
#include "core/tiny_lm.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/cross_entropy.hpp"
#include "core/grad/cross_entropy.hpp"
#include "core/grad/embedding.hpp"
#include "core/grad/gemm.hpp"
#include "core/grad/heads.hpp"
#include "core/grad/linear.hpp"
#include "core/grad/residual.hpp"
#include "core/linear.hpp"

namespace attn {

namespace {

template <class T>
using Ten3T = xt::xtensor<T, 3>;
template <class T>
using Ten4T = xt::xtensor<T, 4>;

std::vector<std::size_t> flat(const Ids& ids) { return std::vector<std::size_t>(ids.begin(), ids.end()); }

template <class T>
xt::xtensor<T, 2> as_rows(const Ten3T<T>& t) {  // (B, T, n) -> (B * T, n), the same memory
  xt::xtensor<T, 2> m = xt::empty<T>({t.shape()[0] * t.shape()[1], t.shape()[2]});  // (B * T, n)
  std::copy(t.begin(), t.end(), m.begin());
  return m;
}

template <class T>
LinearT<T> zeros_like(const LinearT<T>& l) {
  LinearT<T> z;
  z.weight = xt::zeros<T>(l.weight.shape());                 // (out, in)
  if (l.has_bias()) z.bias = xt::zeros<T>(l.bias.shape());  // (out,)
  return z;
}

// y = x @ W^T + b, as core/linear.hpp: (B, T, in) -> (B, T, out)
template <class T>
Ten3T<T> linear_t(const LinearT<T>& layer, const Ten3T<T>& x) {
  const std::size_t B = x.shape()[0], Tn = x.shape()[1], in = x.shape()[2], out = layer.weight.shape()[0];
  Ten3T<T> y = xt::empty<T>({B, Tn, out});  // (B, T, out)
  grad::gemm<T>(false, true, B * Tn, out, in, x.data(), layer.weight.data(), T(0), y.data());
  if (layer.has_bias())
    for (std::size_t r = 0; r < B * Tn; ++r)
      for (std::size_t o = 0; o < out; ++o) y.data()[r * out + o] += layer.bias(o);
  return y;
}

// The head moves are pure rearrangements, and each one's backward pass is the other's forward
// pass (core/grad/heads.hpp), so the forward pass uses them directly:
//   split + transpose (B, T, d) -> (B, h, T, d_k)  =  merge_heads_backward
//   transpose + merge (B, h, T, d_k) -> (B, T, d)  =  split_heads_backward
template <class T>
Ten4T<T> to_heads(const Ten3T<T>& x, std::size_t h) {
  return grad::merge_heads_backward(x, h);
}
template <class T>
Ten3T<T> from_heads(const Ten4T<T>& x) {
  return grad::split_heads_backward(x);
}

// Causal scaled dot-product attention per (batch, head), as core/attention.hpp computes it:
// scores Q K^T, divided by sqrt(d_k), -inf above the diagonal, softmax by rows (stable), @ V.
template <class T>
void attention_t(const Ten4T<T>& q, const Ten4T<T>& k, const Ten4T<T>& v, Ten4T<T>& weights, Ten4T<T>& context) {
  const std::size_t B = q.shape()[0], h = q.shape()[1], Tn = q.shape()[2], d_k = q.shape()[3];
  weights = xt::empty<T>({B, h, Tn, Tn});   // (B, h, T, T)
  context = xt::empty<T>({B, h, Tn, d_k});  // (B, h, T, d_k)
  const T root = std::sqrt(static_cast<T>(d_k));
  for (std::size_t m = 0; m < B * h; ++m) {
    T* w = weights.data() + m * Tn * Tn;
    grad::gemm<T>(false, true, Tn, Tn, d_k, q.data() + m * Tn * d_k, k.data() + m * Tn * d_k, T(0), w);
    for (std::size_t t = 0; t < Tn; ++t) {
      T* row = w + t * Tn;
      T top = -std::numeric_limits<T>::infinity();
      for (std::size_t s = 0; s <= t; ++s) {
        row[s] /= root;
        top = std::max(top, row[s]);
      }
      T sum = 0;
      for (std::size_t s = 0; s <= t; ++s) sum += (row[s] = std::exp(row[s] - top));
      const T inv = T(1) / sum;
      for (std::size_t s = 0; s <= t; ++s) row[s] *= inv;
      for (std::size_t s = t + 1; s < Tn; ++s) row[s] = T(0);  // the future: exp(-inf) = 0
    }
    grad::gemm<T>(false, false, Tn, d_k, Tn, w, v.data() + m * Tn * d_k, T(0), context.data() + m * Tn * d_k);
  }
}

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
  auto linear_of = [&](std::size_t in, std::size_t out, bool bias) {
    const Linear l = make_linear(gen, in, out, bias);  // weight (out, in), bias (out,)
    return LinearT<float>{l.weight, l.bias};
  };
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
  auto cast = [](const LinearT<float>& l) { return LinearT<double>{xt::cast<double>(l.weight), xt::cast<double>(l.bias)}; };
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
TinyLmForward<T> tiny_lm_forward(const TinyLmT<T>& model, const Ids& ids) {
  const std::size_t B = ids.shape()[0], Tn = ids.shape()[1];
  if (Tn == 0 || Tn > model.context())
    throw std::invalid_argument("tiny_lm_forward: " + std::to_string(Tn) + " tokens, the model has positions for " +
                                std::to_string(model.context()));
  TinyLmForward<T> f;
  f.ids = ids;
  f.x = embedding_lookup(model.tok, ids);                                   // (B, T, d)
  const Ten3T<T> positions = embedding_lookup(model.pos, position_ids(B, Tn));  // (B, T, d)
  grad::accumulate(f.x, positions);                                         // (B, T, d)  tok + pos
  Ten3T<T> stream = f.x;                                                    // (B, T, d)
  for (const TinyLmBlockT<T>& block : model.blocks) {
    TinyLmBlockForward<T> bf;
    bf.x = stream;                                                    // (B, T, d)
    bf.queries = to_heads(linear_t(block.W_query, stream), model.heads);  // (B, T, d) -> (B, h, T, d_k)
    bf.keys = to_heads(linear_t(block.W_key, stream), model.heads);       // (B, h, T, d_k)
    bf.values = to_heads(linear_t(block.W_value, stream), model.heads);   // (B, h, T, d_k)
    attention_t(bf.queries, bf.keys, bf.values, bf.attn_weights, bf.context);  // (B, h, T, T), (B, h, T, d_k)
    bf.merged = from_heads(bf.context);                  // (B, h, T, d_k) -> (B, T, d)
    bf.projected = linear_t(block.out_proj, bf.merged);  // (B, T, d)
    grad::accumulate(stream, bf.projected);              // (B, T, d)  x + out_proj(...)
    f.blocks.push_back(std::move(bf));
  }
  f.y = stream;                             // (B, T, d)
  f.logits = linear_t(model.unembed, f.y);  // (B, T, V)
  return f;
}

template <class T>
T tiny_lm_loss(const TinyLmForward<T>& forward, const Ids& targets) {
  return cross_entropy(as_rows(forward.logits), flat(targets));  // (B * T, V)
}

template <class T>
TinyLmGrads<T> tiny_lm_backward(const TinyLmT<T>& model, const TinyLmForward<T>& f, const Ids& targets) {
  const std::size_t B = f.ids.shape()[0], Tn = f.ids.shape()[1], V = model.vocab();
  if (targets.shape() != f.ids.shape())
    throw std::invalid_argument("tiny_lm_backward: targets " + shape_of(targets) + " do not fit ids " +
                                shape_of(f.ids));
  TinyLmGrads<T> g;
  g.params = zeros_like(model);
  const xt::xtensor<T, 2> d_rows = grad::cross_entropy_backward(as_rows(f.logits), flat(targets));  // (B * T, V)
  g.logits = xt::empty<T>({B, Tn, V});                                                                // (B, T, V)
  std::copy(d_rows.begin(), d_rows.end(), g.logits.begin());

  const auto unembed = grad::linear_backward(f.y, model.unembed.weight, g.logits, false);
  g.params.unembed.weight = unembed.weight;  // (V, d)
  Ten3T<T> d_stream = unembed.x;             // (B, T, d)  dL/dy

  g.blocks.resize(model.blocks.size());
  for (std::size_t l = model.blocks.size(); l-- > 0;) {
    const TinyLmBlockT<T>& block = model.blocks[l];
    const TinyLmBlockForward<T>& bf = f.blocks[l];
    TinyLmBlockT<T>& gb = g.params.blocks[l];
    // x_out = x + out_proj(merged): the skip path hands d_stream straight to x (kept in d_stream).
    const auto proj = grad::linear_backward(bf.merged, block.out_proj.weight, d_stream, true);
    gb.out_proj.weight = proj.weight;  // (d, d)
    gb.out_proj.bias = proj.bias;      // (d,)
    const Ten4T<T> d_context = grad::merge_heads_backward(proj.x, model.heads);  // (B, T, d) -> (B, h, T, d_k)
    g.blocks[l] = grad::attention_backward(bf.queries, bf.keys, bf.values, bf.attn_weights, d_context);
    const grad::AttentionGrads<T>& ag = g.blocks[l];
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
  g.x = d_stream;                                                                     // (B, T, d)
  g.params.tok = grad::embedding_backward(f.ids, g.x, model.vocab());                 // (V, d)
  g.params.pos = grad::embedding_backward(position_ids(B, Tn), g.x, model.context());  // (context, d)
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
  template T tiny_lm_loss(const TinyLmForward<T>&, const Ids&);                                            \
  template TinyLmGrads<T> tiny_lm_backward(const TinyLmT<T>&, const TinyLmForward<T>&, const Ids&);        \
  template std::vector<ParamT<T>> tiny_lm_params(TinyLmT<T>&, const TinyLmT<T>&);
ATTN_TINY_LM_INSTANTIATE(float)
ATTN_TINY_LM_INSTANTIATE(double)
#undef ATTN_TINY_LM_INSTANTIATE

}  // namespace attn
