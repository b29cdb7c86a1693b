// Exercise masked-softmax (lesson: padding). Check it with: attn check masked-softmax
//
// PyTorch -> xtensor 0.24, for this exercise:
//   scores.shape[2], len(valid_lens)  scores.shape()[2], valid_lens.size()
//   out = scores.clone()              Ten3 out = scores;   (a copy)
//   out[b, t, j] = fill               out(b, t, j) = fill;
//   torch.softmax(out, dim=-1)        attn::softmax_rows(out)   (core/softmax.hpp, over the last axis)
//   raise ValueError(...)             throw std::invalid_argument("...");
//
// Sentences of different lengths share one batch: each is padded to S positions, and
// valid_lens[b] says how many of sequence b's keys are real. d2l's masked_softmax hides the rest
// before the softmax: every score at a key position s >= valid_lens[b] is replaced by `fill`,
// for every query of that sequence. `attn lesson padding` does it at stages 2 to 5 (the mask
// key_pad, then softmax with -inf and with d2l's -1e6) and shows at stage 7 what the fill does
// to a row with no real key at all: NaN with -inf, a uniform row with -1e6.
//
// Shape legend: B batch, T queries, S key positions.
//
// Contract
//   masked_softmax(scores, valid_lens, fill)[b, t, :] = softmax(row) where
//     row[s] = fill             for s >= valid_lens[b]   (a padded key)
//            = scores[b, t, s]  for s <  valid_lens[b]   (a real key)
//   scores (B, T, S), valid_lens (B,) -> (B, T, S)
//   throws std::invalid_argument when valid_lens does not have B entries, or a length exceeds S.
//   A length of 0 is allowed: every key of that sequence is padding.
//
// Worked example
//   masked_softmax([[[1, 2, 3], [3, 2, 1]]], {2}, -inf) -> [[[0.2689, 0.7311, 0.0000],
//                                                          [0.7311, 0.2689, 0.0000]]]
#include <stdexcept>
#include <vector>

#include "core/softmax.hpp"
#include "core/tensor.hpp"

namespace exercise {

using attn::Ten3;

Ten3 masked_softmax(const Ten3& scores, const std::vector<std::size_t>& valid_lens, float fill) {
  // TODO: refuse a valid_lens of the wrong size or with a length > S (std::invalid_argument),
  // copy the scores, put `fill` at every padded key of every query, then softmax each row.
  return {};  // TODO: return the (B, T, S) weights instead of this empty tensor.
}

}  // namespace exercise
