// Exercise kv-decode-step (lesson: kv-cache). Check it with: attn check kv-decode-step
//
// PyTorch -> xtensor 0.24, for this exercise:
//   t, d_k = K.shape              K.shape()[0], K.shape()[1]
//   K = torch.cat([K, k[None]])   Mat grown = xt::zeros<float>({t + 1, d_k}); copy K and k in; K = grown;
//   q @ K[j]  (a dot product)     a loop over c of q(c) * K(j, c)
//   math.sqrt(d_k)                std::sqrt(static_cast<float>(d_k))
//   torch.softmax(s, dim=-1) @ V  std::exp(s - max) / sum per score, then out(c) += w(j) * V(j, c)
//   raise ValueError(...)         throw std::invalid_argument("...");
//
// A decoder keeps every past token's key and value (the KV cache). Each new token adds its own
// key and value as one more row, and its query attends to all rows at once: no mask is needed,
// because nothing later than the token has been cached yet. `attn lesson kv-cache` prints one
// such step per stage ("Decode position t = ..."); this is that step for a single head.
//
// Shape legend: t tokens already cached, d_k head width.
//
// Contract
//   kv_decode_step(K, V, q, k, v):
//     appends k as a new last row of K and v as a new last row of V (the rows already there are
//     left exactly as they were), then returns softmax(q @ K^T / sqrt(d_k)) @ V
//   K, V (t, d_k) on entry, (t + 1, d_k) on return; t may be 0 (an empty cache)
//   q, k, v (d_k,)   the new token's query, key and value
//   returns (d_k,)   the new token's attention output
//   throws std::invalid_argument when the widths disagree (q, k, v and the columns of K and V
//   must all be d_k) or K and V hold different numbers of rows
//
// Worked example (t = 1, d_k = 2)
//   K = [[1, 0]], V = [[1, 2]], q = [0, 2], k = [0, 1], v = [3, 4]
//   K -> [[1, 0], [0, 1]],  V -> [[1, 2], [3, 4]]
//   scores q @ K^T / sqrt(2) = [0, 1.4142]  ->  weights [0.1956, 0.8044]
//   output = 0.1956 * [1, 2] + 0.8044 * [3, 4] = [2.6089, 3.6089]
#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;
using attn::Vec;

Vec kv_decode_step(Mat& K, Mat& V, const Vec& q, const Vec& k, const Vec& v) {
  // TODO: grow K and V by one row holding k and v.
  // TODO: one score per cached row, softmax them (stably), and mix the rows of V.
  return {};  // TODO: return the (d_k,) output instead of this empty vector.
}

}  // namespace exercise
