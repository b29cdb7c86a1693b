// Padding masks and attention under them (see padding.hpp).
//
// Legend: B batch, T query tokens, S key tokens, d query/key width, d_v value width.
#include "core/padding.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/attention.hpp"
#include "core/matmul.hpp"
#include "core/softmax.hpp"

namespace attn {
namespace {

std::string lens_str(const std::vector<std::size_t>& lens) {
  std::string s = "[";
  for (std::size_t i = 0; i < lens.size(); ++i) s += (i ? ", " : "") + std::to_string(lens[i]);
  return s + "]";
}

// q (B, T, d), k (B, S, d), v (B, S, d_v), valid_lens (B,) with every length <= S.
void check_inputs(const Ten3& q, const Ten3& k, const Ten3& v,
                  const std::vector<std::size_t>& valid_lens, const char* fn) {
  const bool fits = k.shape()[0] == q.shape()[0] && v.shape()[0] == q.shape()[0] &&
                    k.shape()[2] == q.shape()[2] && v.shape()[1] == k.shape()[1];
  if (!fits)
    throw std::invalid_argument(std::string(fn) + ": q " + shape_of(q) + ", k " + shape_of(k) +
                                ", v " + shape_of(v) +
                                " do not fit (q (B, T, d), k (B, S, d), v (B, S, d_v))");
  if (valid_lens.size() != q.shape()[0])
    throw std::invalid_argument(std::string(fn) + ": valid_lens " + lens_str(valid_lens) + " has " +
                                std::to_string(valid_lens.size()) + " lengths for a batch of " +
                                std::to_string(q.shape()[0]) + " (q " + shape_of(q) + ")");
}

// The shared tail: scores, scale, fill, softmax, context.
PaddedAttention attend(const Ten3& q, const Ten3& k, const Ten3& v, Ten3 mask, float fill) {
  PaddedAttention a;
  a.attn_scores = matmul_bt(q, k);                        // (B, T, d) @ (B, S, d)^T -> (B, T, S)
  a.scaled = masked_fill_each(scale_scores(a.attn_scores, q.shape()[2]), mask, fill);  // (B, T, S)
  a.attn_weights = softmax_rows(a.scaled);                // (B, T, S)
  a.context = matmul(a.attn_weights, v);                  // (B, T, S) @ (B, S, d_v) -> (B, T, d_v)
  a.fully_masked = fully_masked_rows(mask);
  a.mask = std::move(mask);                               // (B, T, S)
  return a;
}

}  // namespace

std::vector<std::size_t> to_valid_lens(const Vec& lens) {
  std::vector<std::size_t> out;
  for (std::size_t b = 0; b < lens.size(); ++b) {
    const float x = lens(b);
    if (!std::isfinite(x) || x < 0.0f || x != std::floor(x))
      throw std::invalid_argument("to_valid_lens: length " + std::to_string(b) + " is " +
                                  std::to_string(x) + ", expected a whole number >= 0");
    out.push_back(static_cast<std::size_t>(x));
  }
  return out;
}

Mat key_padding_mask(const std::vector<std::size_t>& valid_lens, std::size_t S) {
  Mat mask = xt::zeros<float>({valid_lens.size(), S});  // (B, S)
  for (std::size_t b = 0; b < valid_lens.size(); ++b) {
    if (valid_lens[b] > S)
      throw std::invalid_argument("key_padding_mask: valid_lens " + lens_str(valid_lens) +
                                  ": length " + std::to_string(valid_lens[b]) + " of sequence " +
                                  std::to_string(b) + " exceeds the " + std::to_string(S) +
                                  " positions (S)");
    for (std::size_t s = valid_lens[b]; s < S; ++s) mask(b, s) = 1.0f;
  }
  return mask;
}

Ten3 cross_padding_mask(const Mat& key_mask, std::size_t T) {
  const std::size_t B = key_mask.shape()[0], S = key_mask.shape()[1];
  Ten3 mask = xt::empty<float>({B, T, S});  // (B, T, S)
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t s = 0; s < S; ++s) mask(b, t, s) = key_mask(b, s);
  return mask;
}

Ten3 self_padding_mask(const std::vector<std::size_t>& valid_lens, std::size_t T) {
  const Mat pad = key_padding_mask(valid_lens, T);  // (B, T): the same lengths pad queries and keys
  Ten3 mask = xt::empty<float>({valid_lens.size(), T, T});  // (B, T, T)
  for (std::size_t b = 0; b < valid_lens.size(); ++b)
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t s = 0; s < T; ++s)
        mask(b, t, s) = (pad(b, t) != 0.0f || pad(b, s) != 0.0f) ? 1.0f : 0.0f;
  return mask;
}

Ten3 masked_fill_each(const Ten3& scores, const Ten3& mask, float fill) {
  if (scores.shape() != mask.shape())
    throw std::invalid_argument("masked_fill_each: mask " + shape_of(mask) + " does not fit scores " +
                                shape_of(scores));
  Ten3 out = scores;  // (B, T, S)
  for (std::size_t i = 0; i < out.size(); ++i)
    if (mask.data()[i] != 0.0f) out.data()[i] = fill;
  return out;
}

Ten3 masked_softmax(const Ten3& scores, const Ten3& mask, float fill) {
  return softmax_rows(masked_fill_each(scores, mask, fill));  // (B, T, S)
}

std::vector<MaskedRow> fully_masked_rows(const Ten3& mask) {
  const std::size_t B = mask.shape()[0], T = mask.shape()[1], S = mask.shape()[2];
  std::vector<MaskedRow> rows;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < T; ++t) {
      const float* row = mask.data() + (b * T + t) * S;
      bool all = true;
      for (std::size_t s = 0; s < S && all; ++s) all = row[s] != 0.0f;
      if (all) rows.push_back({b, t});  // S = 0 counts too: no key is visible
    }
  return rows;
}

PaddedAttention padded_cross_attention(const Ten3& q, const Ten3& k, const Ten3& v,
                                       const std::vector<std::size_t>& valid_lens, float fill) {
  check_inputs(q, k, v, valid_lens, "padded_cross_attention");
  const Mat key_mask = key_padding_mask(valid_lens, k.shape()[1]);  // (B, S)
  return attend(q, k, v, cross_padding_mask(key_mask, q.shape()[1]), fill);
}

PaddedAttention padded_self_attention(const Ten3& q, const Ten3& k, const Ten3& v,
                                      const std::vector<std::size_t>& valid_lens, float fill) {
  check_inputs(q, k, v, valid_lens, "padded_self_attention");
  if (k.shape()[1] != q.shape()[1])
    throw std::invalid_argument("padded_self_attention: q " + shape_of(q) + " and k " + shape_of(k) +
                                " must have as many tokens (self-attention: T = S)");
  return attend(q, k, v, self_padding_mask(valid_lens, q.shape()[1]), fill);
}

}  // namespace attn
