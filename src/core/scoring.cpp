#include "core/scoring.hpp"

#include <cmath>
#include <stdexcept>

#include "core/matmul.hpp"
#include "core/softmax.hpp"

namespace attn {
namespace {

[[noreturn]] void mismatch(const char* op, const std::string& shapes) {
  throw std::invalid_argument(std::string(op) + ": shapes do not fit: " + shapes);
}

}  // namespace

Vec matvec(const Mat& W, const Vec& v) {
  if (W.shape()[1] != v.size()) mismatch("matvec", shape_of(W) + " and " + shape_of(v));
  Vec out = xt::zeros<float>({W.shape()[0]});  // (m,)
  for (std::size_t i = 0; i < W.shape()[0]; ++i) {
    float s = 0.0f;
    for (std::size_t k = 0; k < v.size(); ++k) s += W(i, k) * v(k);
    out(i) = s;
  }
  return out;
}

Mat additive_keys(const Mat& H, const Mat& U_a) {
  if (H.shape()[1] != U_a.shape()[1]) mismatch("additive_keys", "H " + shape_of(H) + ", U_a " + shape_of(U_a));
  return matmul_bt(H, U_a);  // (S, d_h) @ (d_h, d_a) -> (S, d_a)
}

Vec additive_scores_from(const Vec& Ws, const Mat& UH, const Vec& v_a) {
  const std::size_t S = UH.shape()[0], d_a = UH.shape()[1];
  if (Ws.size() != d_a || v_a.size() != d_a)
    mismatch("additive_scores", "W_a s " + shape_of(Ws) + ", U_a H " + shape_of(UH) + ", v_a " + shape_of(v_a));
  Vec e = xt::zeros<float>({S});  // (S,)
  for (std::size_t j = 0; j < S; ++j) {
    float sum = 0.0f;
    for (std::size_t a = 0; a < d_a; ++a) sum += v_a(a) * std::tanh(Ws(a) + UH(j, a));
    e(j) = sum;
  }
  return e;
}

Vec additive_scores(const Vec& s, const Mat& H, const Mat& W_a, const Mat& U_a, const Vec& v_a) {
  return additive_scores_from(matvec(W_a, s), additive_keys(H, U_a), v_a);
}

Vec dot_scores(const Vec& h_t, const Mat& H) {
  if (H.shape()[1] != h_t.size()) mismatch("dot_scores", "h_t " + shape_of(h_t) + ", H " + shape_of(H));
  return matvec(H, h_t);  // (S, d) @ (d,) -> (S,)
}

Vec general_scores(const Vec& h_t, const Mat& W_a, const Mat& H) {
  if (W_a.shape()[0] != h_t.size() || W_a.shape()[1] != H.shape()[1])
    mismatch("general_scores", "h_t " + shape_of(h_t) + ", W_a " + shape_of(W_a) + ", H " + shape_of(H));
  Vec hW = xt::zeros<float>({W_a.shape()[1]});  // h_t^T W_a: (d_h,)
  for (std::size_t k = 0; k < W_a.shape()[1]; ++k)
    for (std::size_t i = 0; i < h_t.size(); ++i) hW(k) += h_t(i) * W_a(i, k);
  return matvec(H, hW);  // (S, d_h) @ (d_h,) -> (S,)
}

Vec concat_scores(const Vec& h_t, const Mat& H, const Mat& W_a, const Vec& v_a) {
  const std::size_t S = H.shape()[0], d_t = h_t.size(), d_h = H.shape()[1], d_a = W_a.shape()[0];
  if (W_a.shape()[1] != d_t + d_h || v_a.size() != d_a)
    mismatch("concat_scores", "h_t " + shape_of(h_t) + ", H " + shape_of(H) + ", W_a " + shape_of(W_a) +
                                  ", v_a " + shape_of(v_a));
  Vec e = xt::zeros<float>({S});  // (S,)
  for (std::size_t j = 0; j < S; ++j) {
    float sum = 0.0f;
    for (std::size_t a = 0; a < d_a; ++a) {
      float pre = 0.0f;  // W_a [h_t ; h_j]: the first d_t columns meet h_t, the last d_h meet h_j
      for (std::size_t k = 0; k < d_t; ++k) pre += W_a(a, k) * h_t(k);
      for (std::size_t k = 0; k < d_h; ++k) pre += W_a(a, d_t + k) * H(j, k);
      sum += v_a(a) * std::tanh(pre);
    }
    e(j) = sum;
  }
  return e;
}

Vec weighted_sum(const Vec& alpha, const Mat& H) {
  if (alpha.size() != H.shape()[0]) mismatch("weighted_sum", "alpha " + shape_of(alpha) + ", H " + shape_of(H));
  Vec c = xt::zeros<float>({H.shape()[1]});  // (d,)
  for (std::size_t j = 0; j < H.shape()[0]; ++j)
    for (std::size_t k = 0; k < H.shape()[1]; ++k) c(k) += alpha(j) * H(j, k);
  return c;
}

AdditiveStep additive_step(const Vec& s, const Mat& H, const Mat& UH, const Mat& W_a, const Vec& v_a) {
  const std::size_t S = H.shape()[0], d_h = H.shape()[1], d_a = W_a.shape()[0];
  if (W_a.shape()[1] != s.size() || UH.shape()[0] != S || UH.shape()[1] != d_a || v_a.size() != d_a)
    mismatch("additive_step", "s " + shape_of(s) + ", H " + shape_of(H) + ", U_a H " + shape_of(UH) + ", W_a " +
                                  shape_of(W_a) + ", v_a " + shape_of(v_a));
  AdditiveStep st;
  st.Ws = matvec(W_a, s);                 // (d_a, d_s) @ (d_s,) -> (d_a,)
  st.act = xt::empty<float>({S, d_a});    // (S, d_a)
  st.e = xt::empty<float>({S});           // (S,)
  for (std::size_t j = 0; j < S; ++j) {
    float sum = 0.0f;  // the same order of sums as additive_scores_from
    for (std::size_t a = 0; a < d_a; ++a) {
      const float t = std::tanh(st.Ws(a) + UH(j, a));
      st.act(j, a) = t;
      sum += v_a(a) * t;
    }
    st.e(j) = sum;
  }
  st.alpha = st.e;                                      // (S,)
  softmax_rows_inplace(st.alpha.data(), 1, S);          // softmax over the S scores
  st.c = xt::zeros<float>({d_h});                       // (d_h,)
  for (std::size_t j = 0; j < S; ++j)
    for (std::size_t k = 0; k < d_h; ++k) st.c(k) += st.alpha(j) * H(j, k);
  return st;
}

AdditiveGrads additive_grads_like(const Mat& H, const Mat& UH, const Mat& W_a) {
  return {xt::zeros<float>(W_a.shape()), xt::zeros<float>({W_a.shape()[0]}), xt::zeros<float>(H.shape()),
          xt::zeros<float>(UH.shape())};
}

Vec additive_step_grad(const AdditiveStep& st, const Vec& s, const Mat& H, const Mat& W_a, const Vec& v_a,
                       const Vec& d_c, AdditiveGrads& g) {
  const std::size_t S = H.shape()[0], d_h = H.shape()[1], d_a = W_a.shape()[0], d_s = W_a.shape()[1];
  if (d_c.size() != d_h || s.size() != d_s || st.act.shape()[0] != S || st.act.shape()[1] != d_a ||
      g.H.shape() != H.shape() || g.UH.shape() != st.act.shape() || g.W_a.shape() != W_a.shape() || g.v_a.size() != d_a)
    mismatch("additive_step_grad", "d_c " + shape_of(d_c) + ", s " + shape_of(s) + ", H " + shape_of(H) +
                                       ", W_a " + shape_of(W_a) + ", grads for H " + shape_of(g.H));
  // Through c = alpha @ H: dL/dalpha_j = d_c . h_j, and dL/dh_j gets alpha_j d_c.
  Vec d_alpha = xt::zeros<float>({S});  // (S,)
  for (std::size_t j = 0; j < S; ++j) {
    float dot = 0.0f;
    for (std::size_t k = 0; k < d_h; ++k) {
      dot += d_c(k) * H(j, k);
      g.H(j, k) += st.alpha(j) * d_c(k);
    }
    d_alpha(j) = dot;
  }
  // Through softmax: dL/de_j = alpha_j (dL/dalpha_j - sum_k alpha_k dL/dalpha_k).
  float mean = 0.0f;
  for (std::size_t j = 0; j < S; ++j) mean += st.alpha(j) * d_alpha(j);
  Vec d_Ws = xt::zeros<float>({d_a});  // (d_a,)
  for (std::size_t j = 0; j < S; ++j) {
    const float d_e = st.alpha(j) * (d_alpha(j) - mean);
    for (std::size_t a = 0; a < d_a; ++a) {
      const float t = st.act(j, a);
      g.v_a(a) += d_e * t;                                 // e_j = v_a . act_j
      const float d_pre = d_e * v_a(a) * (1.0f - t * t);  // through tanh
      g.UH(j, a) += d_pre;
      d_Ws(a) += d_pre;  // W_a s is broadcast over the S rows, so its gradient sums them
    }
  }
  Vec d_state = xt::zeros<float>({d_s});  // (d_s,)
  for (std::size_t a = 0; a < d_a; ++a)
    for (std::size_t k = 0; k < d_s; ++k) {
      g.W_a(a, k) += d_Ws(a) * s(k);
      d_state(k) += W_a(a, k) * d_Ws(a);
    }
  return d_state;
}

void additive_keys_grad(const Mat& H, const Mat& U_a, const Mat& d_UH, Mat& d_U_a, Mat& d_H) {
  const std::size_t S = H.shape()[0], d_h = H.shape()[1], d_a = U_a.shape()[0];
  if (U_a.shape()[1] != d_h || d_UH.shape()[0] != S || d_UH.shape()[1] != d_a || d_U_a.shape() != U_a.shape() ||
      d_H.shape() != H.shape())
    mismatch("additive_keys_grad", "H " + shape_of(H) + ", U_a " + shape_of(U_a) + ", d_UH " + shape_of(d_UH));
  for (std::size_t j = 0; j < S; ++j)
    for (std::size_t a = 0; a < d_a; ++a) {
      const float d = d_UH(j, a);
      for (std::size_t k = 0; k < d_h; ++k) {
        d_U_a(a, k) += d * H(j, k);
        d_H(j, k) += d * U_a(a, k);
      }
    }
}

}  // namespace attn
