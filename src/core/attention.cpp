// Scaled dot-product attention's forward pass, and its backward pass as four products per
// (batch, head) with the softmax's backward between them (see attention.hpp).
//
// Legend: B batch, h heads, T query tokens, S key tokens, d_k query/key width, d_v value width.
#include "core/attention.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "core/gemm.hpp"
#include "core/mask.hpp"
#include "core/matmul.hpp"
#include "core/softmax.hpp"

namespace attn {

namespace {

// One (batch, head) matrix product, c (m, n) = a (m, k) @ op(b), op(b) = b (k, n) or b^T with b
// stored (n, k). Float: core/matmul's sgemm, the very call matmul and matmul_bt make, so the
// lessons' digits stay. Double: core/gemm's dgemm on the calling thread, as training needs.
void product(bool b_t, std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c) {
  sgemm(m, n, k, 1.0f, a, k, b, b_t ? k : n, b_t, 0.0f, c, n);
}
void product(bool b_t, std::size_t m, std::size_t n, std::size_t k, const double* a, const double* b, double* c) {
  gemm(false, b_t, m, n, k, a, b, 0.0, c);
}

}  // namespace

template <class T>
void scaled_dot_product_attention(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k, const xt::xtensor<T, 4>& v,
                                  bool causal, xt::xtensor<T, 4>& attn_scores, xt::xtensor<T, 4>& scaled,
                                  xt::xtensor<T, 4>& attn_weights, xt::xtensor<T, 4>& context) {
  if (q.shape() != k.shape() || k.shape() != v.shape())
    throw std::invalid_argument("scaled_dot_product_attention: q " + shape_of(q) + ", k " +
                                shape_of(k) + ", v " + shape_of(v) + " must share one shape");
  const std::size_t B = q.shape()[0], h = q.shape()[1], Tn = q.shape()[2], d_k = q.shape()[3];
  const std::size_t M = B * h;  // (batch, head) matrices
  attn_scores.resize({B, h, Tn, Tn});  // (B, h, T, T)
  for (std::size_t m = 0; m < M; ++m)  // Q @ K^T: (T, d_k) @ (d_k, T) -> (T, T)
    product(true, Tn, Tn, d_k, q.data() + m * Tn * d_k, k.data() + m * Tn * d_k, attn_scores.data() + m * Tn * Tn);
  const T root = std::sqrt(static_cast<T>(d_k));  // as scale_scores: in the scores' type
  scaled.resize({B, h, Tn, Tn});  // (B, h, T, T)
  std::transform(attn_scores.begin(), attn_scores.end(), scaled.begin(), [root](T s) { return s / root; });
  if (causal)  // in place: at large T each (B, h, T, T) copy costs as much as a GEMM
    masked_fill_inplace(scaled.data(), M, causal_mask(Tn), -std::numeric_limits<T>::infinity());
  attn_weights.resize({B, h, Tn, Tn});  // (B, h, T, T)
  std::copy(scaled.begin(), scaled.end(), attn_weights.begin());
  softmax_rows_inplace(attn_weights.data(), Tn ? attn_weights.size() / Tn : 0, Tn);
  context.resize({B, h, Tn, d_k});  // (B, h, T, d_k)
  for (std::size_t m = 0; m < M; ++m)  // weights @ V: (T, T) @ (T, d_k) -> (T, d_k)
    product(false, Tn, d_k, Tn, attn_weights.data() + m * Tn * Tn, v.data() + m * Tn * d_k,
            context.data() + m * Tn * d_k);
}

template <class T>
AttentionT<T> scaled_dot_product_attention(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k,
                                           const xt::xtensor<T, 4>& v, bool causal) {
  AttentionT<T> a;
  scaled_dot_product_attention(q, k, v, causal, a.attn_scores, a.scaled, a.attn_weights, a.context);
  return a;
}

template AttentionT<float> scaled_dot_product_attention(const Ten4&, const Ten4&, const Ten4&, bool);
template AttentionT<double> scaled_dot_product_attention(const xt::xtensor<double, 4>&, const xt::xtensor<double, 4>&,
                                                         const xt::xtensor<double, 4>&, bool);
template void scaled_dot_product_attention(const Ten4&, const Ten4&, const Ten4&, bool, Ten4&, Ten4&, Ten4&, Ten4&);
template void scaled_dot_product_attention(const xt::xtensor<double, 4>&, const xt::xtensor<double, 4>&,
                                           const xt::xtensor<double, 4>&, bool, xt::xtensor<double, 4>&,
                                           xt::xtensor<double, 4>&, xt::xtensor<double, 4>&, xt::xtensor<double, 4>&);

}  // namespace attn

namespace attn::grad {

template <class T>
void attention_backward(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k, const xt::xtensor<T, 4>& v,
                        const xt::xtensor<T, 4>& attn_weights, const xt::xtensor<T, 4>& d_context,
                        AttentionGrads<T>& g) {
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
  // Every entry of the six is written below (products with beta 0, then row by row).
  g.attn_weights.resize({B, h, Tq, S});  // (B, h, T, S)
  g.scaled.resize({B, h, Tq, S});        // (B, h, T, S)
  g.attn_scores.resize({B, h, Tq, S});   // (B, h, T, S)
  g.queries.resize({B, h, Tq, d_k});     // (B, h, T, d_k)
  g.keys.resize({B, h, S, d_k});         // (B, h, S, d_k)
  g.values.resize({B, h, S, d_v});       // (B, h, S, d_v)
  // The forward pass divides by sqrt(d_k) rounded to T (in float as scale_scores does), so the
  // backward pass divides by the same number.
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
}

template <class T>
AttentionGrads<T> attention_backward(const xt::xtensor<T, 4>& q, const xt::xtensor<T, 4>& k,
                                     const xt::xtensor<T, 4>& v, const xt::xtensor<T, 4>& attn_weights,
                                     const xt::xtensor<T, 4>& d_context) {
  AttentionGrads<T> g;
  attention_backward(q, k, v, attn_weights, d_context, g);
  return g;
}

template void attention_backward(const xt::xtensor<float, 4>&, const xt::xtensor<float, 4>&,
                                 const xt::xtensor<float, 4>&, const xt::xtensor<float, 4>&,
                                 const xt::xtensor<float, 4>&, AttentionGrads<float>&);
template void attention_backward(const xt::xtensor<double, 4>&, const xt::xtensor<double, 4>&,
                                 const xt::xtensor<double, 4>&, const xt::xtensor<double, 4>&,
                                 const xt::xtensor<double, 4>&, AttentionGrads<double>&);
template AttentionGrads<float> attention_backward(const xt::xtensor<float, 4>&, const xt::xtensor<float, 4>&,
                                                  const xt::xtensor<float, 4>&, const xt::xtensor<float, 4>&,
                                                  const xt::xtensor<float, 4>&);
template AttentionGrads<double> attention_backward(const xt::xtensor<double, 4>&, const xt::xtensor<double, 4>&,
                                                   const xt::xtensor<double, 4>&, const xt::xtensor<double, 4>&,
                                                   const xt::xtensor<double, 4>&);

}  // namespace attn::grad
