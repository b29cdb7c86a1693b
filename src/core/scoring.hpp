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

}  // namespace attn
