// The scoring functions of the encoder-decoder era. Each turns one decoder state and the S
// encoder states into S scores e; softmax(e) gives the alignment weights alpha, and
// c = sum_j alpha_j h_j the context vector.
//
//   additive (Bahdanau):  e_j = v_a^T tanh(W_a s + U_a h_j)
//   dot (Luong):          e_s = h_t^T h_s
//   general (Luong):      e_s = h_t^T W_a h_s
//   concat (Luong):       e_s = v_a^T tanh(W_a [h_t ; h_s])
//
// Legend: S source length, d_h encoder state width, d_s decoder state width, d_a alignment width.
#pragma once

#include "core/tensor.hpp"

namespace attn {

// U_a h_j for every j: (S, d_h) -> (S, d_a). It does not depend on the decoder step, so a
// decoder computes it once per sentence.
Mat additive_keys(const Mat& H, const Mat& U_a);

// e_j = v_a^T tanh(W_a s + U_a h_j) given W_a s (d_a,) and U_a H (S, d_a): -> (S,)
Vec additive_scores_from(const Vec& Ws, const Mat& UH, const Vec& v_a);

// Everything in one call: s (d_s,), H (S, d_h), W_a (d_a, d_s), U_a (d_a, d_h), v_a (d_a,) -> (S,)
Vec additive_scores(const Vec& s, const Mat& H, const Mat& W_a, const Mat& U_a, const Vec& v_a);

// h_t (d,), H (S, d) -> (S,)
Vec dot_scores(const Vec& h_t, const Mat& H);

// h_t (d_t,), W_a (d_t, d_h), H (S, d_h) -> (S,)
Vec general_scores(const Vec& h_t, const Mat& W_a, const Mat& H);

// h_t (d_t,), H (S, d_h), W_a (d_a, d_t + d_h), v_a (d_a,) -> (S,)
Vec concat_scores(const Vec& h_t, const Mat& H, const Mat& W_a, const Vec& v_a);

// c = sum_j alpha_j h_j: alpha (S,), H (S, d) -> (d,)
Vec weighted_sum(const Vec& alpha, const Mat& H);

// W v: (m, n) @ (n,) -> (m,)
Vec matvec(const Mat& W, const Vec& v);

// ---- Additive attention for training: one decoder step with what its gradient needs.
//
// Forward (s the decoder state that asks, UH = U_a H computed once per sentence):
//   Ws = W_a s,  act_j = tanh(Ws + UH_j),  e_j = v_a . act_j,  alpha = softmax(e),  c = alpha @ H
// Backward, from g = dL/dc:
//   dL/dalpha_j = g . h_j                      (and dL/dh_j += alpha_j g through c)
//   dL/de = alpha * (dL/dalpha - alpha . dL/dalpha)      the softmax Jacobian, row form
//   dL/dv_a = sum_j dL/de_j act_j,   dL/dpre_j = dL/de_j v_a * (1 - act_j^2)
//   dL/dUH_j = dL/dpre_j,   dL/dWs = sum_j dL/dpre_j,   dL/dW_a = dL/dWs s^T,   dL/ds = W_a^T dL/dWs
// and, once per sentence, UH = H U_a^T gives dL/dU_a = dL/dUH^T H and dL/dH += dL/dUH U_a.

struct AdditiveStep {
  Vec Ws;     // W_a s                    (d_a,)
  Mat act;    // tanh(W_a s + U_a h_j)    (S, d_a)
  Vec e;      // scores                   (S,)
  Vec alpha;  // softmax(e)               (S,)
  Vec c;      // alpha @ H                (d_h,)
};

// s (d_s,), H (S, d_h), UH (S, d_a), W_a (d_a, d_s), v_a (d_a,) -> every intermediate
AdditiveStep additive_step(const Vec& s, const Mat& H, const Mat& UH, const Mat& W_a, const Vec& v_a);

// Where additive_step_grad adds its gradients (each zeroed by the caller, then accumulated over
// the decoder steps, as PyTorch's .grad is).
struct AdditiveGrads {
  Mat W_a;  // (d_a, d_s)
  Vec v_a;  // (d_a,)
  Mat H;    // (S, d_h): through the contexts c only; the keys' share comes from additive_keys_grad
  Mat UH;   // (S, d_a)
};
AdditiveGrads additive_grads_like(const Mat& H, const Mat& UH, const Mat& W_a);  // zeros

// One step back from d_c = dL/dc (d_h,): adds into g.W_a, g.v_a, g.H, g.UH and returns dL/ds (d_s,).
Vec additive_step_grad(const AdditiveStep& st, const Vec& s, const Mat& H, const Mat& W_a, const Vec& v_a,
                       const Vec& d_c, AdditiveGrads& g);

// UH = H U_a^T: adds dL/dU_a = d_UH^T H (d_a, d_h) into d_U_a and d_UH U_a (S, d_h) into d_H.
void additive_keys_grad(const Mat& H, const Mat& U_a, const Mat& d_UH, Mat& d_U_a, Mat& d_H);

}  // namespace attn
