// Scaled dot-product attention's backward pass: four products per (batch, head) and the
// softmax's backward between them (see attention.hpp).
//
// Legend: B batch, h heads, T query tokens, S key tokens, d_k query/key width, d_v value width.
#include "core/grad/attention.hpp"

#include <cmath>
#include <stdexcept>

#include "core/grad/gemm.hpp"
#include "core/grad/softmax.hpp"

namespace attn::grad {

template <class T>
AttentionGrads<T> attention_backward(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k,
                                     const xt::xtensor<T, 4>& v, const xt::xtensor<T, 4>& attn_weights,
                                     const xt::xtensor<T, 4>& d_context) {
  const std::size_t B = q.shape()[0], h = q.shape()[1], Tq = q.shape()[2], d_k = q.shape()[3];
  const std::size_t S = k.shape()[2], d_v = v.shape()[3];
  const bool fits = k.shape()[0] == B && k.shape()[1] == h && k.shape()[3] == d_k && v.shape()[0] == B &&
                    v.shape()[1] == h && v.shape()[2] == S && attn_weights.shape()[0] == B &&
                    attn_weights.shape()[1] == h && attn_weights.shape()[2] == Tq && attn_weights.shape()[3] == S &&
                    d_context.shape()[0] == B && d_context.shape()[1] == h && d_context.shape()[2] == Tq &&
                    d_context.shape()[3] == d_v;
  if (!fits)
    throw std::invalid_argument("attention_backward: shapes do not fit: q " + shape_of(q) + ", k " + shape_of(k) +
                                ", v " + shape_of(v) + ", attn_weights " + shape_of(attn_weights) + ", d_context " +
                                shape_of(d_context));
  AttentionGrads<T> g;
  g.attn_weights = xt::zeros<T>({B, h, Tq, S});  // (B, h, T, S)
  g.scaled = xt::zeros<T>({B, h, Tq, S});        // (B, h, T, S)
  g.attn_scores = xt::zeros<T>({B, h, Tq, S});   // (B, h, T, S)
  g.queries = xt::zeros<T>({B, h, Tq, d_k});     // (B, h, T, d_k)
  g.keys = xt::zeros<T>({B, h, S, d_k});         // (B, h, S, d_k)
  g.values = xt::zeros<T>({B, h, S, d_v});       // (B, h, S, d_v)
  // The forward pass divides by sqrt(d_k) rounded to T (in float as core/attention.hpp's
  // scale_scores does), so the backward pass divides by the same number.
  const T root = std::sqrt(static_cast<T>(d_k));
  for (std::size_t m = 0; m < B * h; ++m) {  // one (batch, head) matrix at a time
    const T* qm = q.data() + m * Tq * d_k;
    const T* km = k.data() + m * S * d_k;
    const T* vm = v.data() + m * S * d_v;
    const T* wm = attn_weights.data() + m * Tq * S;
    const T* dcm = d_context.data() + m * Tq * d_v;
    T* dwm = g.attn_weights.data() + m * Tq * S;
    T* dsm = g.scaled.data() + m * Tq * S;
    T* dam = g.attn_scores.data() + m * Tq * S;
    gemm<T>(false, true, Tq, S, d_v, dcm, vm, T(0), dwm);                             // dC @ V^T
    gemm<T>(true, false, S, d_v, Tq, wm, dcm, T(0), g.values.data() + m * S * d_v);  // W^T @ dC
    softmax_rows_backward(wm, dwm, dsm, Tq, S);
    for (std::size_t i = 0; i < Tq * S; ++i) dam[i] = dsm[i] / root;
    gemm<T>(false, false, Tq, d_k, S, dam, km, T(0), g.queries.data() + m * Tq * d_k);  // dA @ K
    gemm<T>(true, false, S, d_k, Tq, dam, qm, T(0), g.keys.data() + m * S * d_k);       // dA^T @ Q
  }
  return g;
}

template AttentionGrads<float> attention_backward(const xt::xtensor<float, 4>&, const xt::xtensor<float, 4>&,
                                                  const xt::xtensor<float, 4>&, const xt::xtensor<float, 4>&,
                                                  const xt::xtensor<float, 4>&);
template AttentionGrads<double> attention_backward(const xt::xtensor<double, 4>&, const xt::xtensor<double, 4>&,
                                                   const xt::xtensor<double, 4>&, const xt::xtensor<double, 4>&,
                                                   const xt::xtensor<double, 4>&);

}  // namespace attn::grad
