// Solution to kv-decode-step. The contract and a worked example are in ../kv_decode_step.cpp;
// try it there first (`attn hint kv-decode-step` helps).
//
// Shape legend: t tokens already cached, d_k head width.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;
using attn::Vec;

namespace {

// (t, d_k) -> (t + 1, d_k): the old rows copied, `row` last.
Mat with_row(const Mat& m, const Vec& row) {
  const std::size_t t = m.shape()[0], d_k = row.size();
  Mat out = xt::empty<float>({t + 1, d_k});  // (t + 1, d_k)
  std::copy(m.begin(), m.end(), out.begin());
  std::copy(row.begin(), row.end(), out.begin() + static_cast<std::ptrdiff_t>(t * d_k));
  return out;
}

}  // namespace

Vec kv_decode_step(Mat& K, Mat& V, const Vec& q, const Vec& k, const Vec& v) {
  const std::size_t d_k = q.size();
  if (k.size() != d_k || v.size() != d_k || K.shape()[1] != d_k || V.shape()[1] != d_k ||
      K.shape()[0] != V.shape()[0])
    throw std::invalid_argument("kv_decode_step: q, k, v and the cache's columns must all be d_k = " +
                                std::to_string(d_k) + ", and K and V must hold the same rows");

  // The cache grows by the new token's key and value; nothing already in it changes.
  K = with_row(K, k);  // (t, d_k) -> (t + 1, d_k)
  V = with_row(V, v);  // (t, d_k) -> (t + 1, d_k)
  const std::size_t n = K.shape()[0];  // t + 1 keys

  // One score per cached key: the query is the last position, so every key is in its past.
  const float scale = 1.0f / std::sqrt(static_cast<float>(d_k));
  Vec scores = xt::empty<float>({n});  // (t + 1,)
  for (std::size_t j = 0; j < n; ++j) {
    float s = 0.0f;
    for (std::size_t c = 0; c < d_k; ++c) s += q(c) * K(j, c);
    scores(j) = s * scale;
  }

  // Softmax, shifted by the largest score so that exp never overflows.
  const float top = *std::max_element(scores.begin(), scores.end());
  float sum = 0.0f;
  for (auto& s : scores) sum += (s = std::exp(s - top));

  // The output mixes the rows of V with those weights.
  Vec out = xt::zeros<float>({d_k});  // (d_k,)
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t c = 0; c < d_k; ++c) out(c) += scores(j) / sum * V(j, c);
  return out;
}

}  // namespace exercise
