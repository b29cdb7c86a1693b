// Padding: sequences of different lengths share one (B, S, d) tensor, and the positions past each
// sequence's valid length hold padding that no query may attend to.
//
//   key padding:  key s of sequence b is padding when s >= valid_lens[b]     (B, S)
//   cross-attention: decoder queries (B, T, d) over padded encoder keys/values (B, S, d):
//                 mask[b, t, s] = key_pad[b, s]
//   self-attention over a padded batch: padded queries are masked too:
//                 mask[b, t, s] = query_pad[b, t] | key_pad[b, s]
//
// Masks follow mask.hpp's convention: 1 where the score is hidden, 0 where it is seen. The fill
// decides what a fully masked row becomes: with -inf its softmax is NaN (PyTorch, every entry
// exp(-inf - -inf)); with a large finite fill such as d2l's -1e6 or -1e9 every entry equals the
// fill, and the row becomes uniform 1/S: it quietly averages the padding's values.
//
// Legend: B batch, T query tokens, S key tokens (S = T in self-attention), d query/key width,
// d_v value width.
#pragma once

#include <cstddef>
#include <vector>

#include "core/tensor.hpp"

namespace attn {

// d2l's masked_softmax fill, and the -1e9 common in other articles.
constexpr float kD2lFill = -1e6f;
constexpr float kLargeFill = -1e9f;

// Valid lengths as whole numbers, from a float tensor such as the fixture's (B,) valid_lens.
// Refuses negative, fractional and non-finite lengths.
std::vector<std::size_t> to_valid_lens(const Vec& lens);

// (B, S): 1 where key s of sequence b is padding (s >= valid_lens[b]). Refuses a length > S.
Mat key_padding_mask(const std::vector<std::size_t>& valid_lens, std::size_t S);

// (B, S) -> (B, T, S): every query of sequence b hides the same keys (cross-attention).
Ten3 cross_padding_mask(const Mat& key_mask, std::size_t T);

// (B, T, T): query t or key s of sequence b is padding (self-attention over a padded batch).
Ten3 self_padding_mask(const std::vector<std::size_t>& valid_lens, std::size_t T);

// scores.masked_fill(mask, fill) with one mask per sequence: scores and mask (B, T, S).
Ten3 masked_fill_each(const Ten3& scores, const Ten3& mask, float fill);

// softmax(scores.masked_fill(mask, fill)) by rows: (B, T, S) -> (B, T, S).
Ten3 masked_softmax(const Ten3& scores, const Ten3& mask, float fill);

// A query row whose every key is masked.
struct MaskedRow {
  std::size_t batch, row;
};
// Every fully masked row of a (B, T, S) mask, in row-major order. Their weights are NaN with
// fill -inf and uniform with a finite fill.
std::vector<MaskedRow> fully_masked_rows(const Ten3& mask);

// Attention under a padding mask, every intermediate kept for lessons and tests.
struct PaddedAttention {
  Ten3 mask;          // (B, T, S) 1 where hidden
  Ten3 attn_scores;   // (B, T, S) q @ k^T
  Ten3 scaled;        // (B, T, S) attn_scores / sqrt(d), `fill` where masked
  Ten3 attn_weights;  // (B, T, S) softmax(scaled) by rows
  Ten3 context;       // (B, T, d_v) attn_weights @ v
  std::vector<MaskedRow> fully_masked;  // rows with no visible key
};

// Cross-attention: q (B, T, d) from the decoder, k (B, S, d) and v (B, S, d_v) from the padded
// encoder, valid_lens (B,) the encoder lengths. Throws std::invalid_argument naming the shapes
// when they do not fit, when valid_lens has not B entries, or when a length exceeds S.
PaddedAttention padded_cross_attention(const Ten3& q, const Ten3& k, const Ten3& v,
                                       const std::vector<std::size_t>& valid_lens, float fill);

// Self-attention over one padded batch: q, k (B, T, d) and v (B, T, d_v) all come from the same
// sequences (the fixture passes xs three times); padded queries are masked as well as padded
// keys, so with fill -inf their rows are NaN. Throws like padded_cross_attention.
PaddedAttention padded_self_attention(const Ten3& q, const Ten3& k, const Ten3& v,
                                      const std::vector<std::size_t>& valid_lens, float fill);

}  // namespace attn
