// Exercise masked-fill (lesson: causal). Check it with: attn check masked-fill
//
// PyTorch -> xtensor 0.24, for this exercise:
//   scores.shape == mask.shape          scores.shape() == mask.shape()
//   out = scores.clone()                Mat out = scores;   (a copy)
//   out[i, j] = fill                    out(i, j) = fill;
//   scores.masked_fill(mask.bool(), f)  no masked_fill: loop, and set out(i, j) = fill where mask(i, j) != 0
//   raise ValueError(...)               throw std::invalid_argument("...");
//
// The mask only says where the future is; masked_fill is what hides it. Each masked score is
// replaced by a fill value, -inf in the book, so that softmax gives it weight exactly 0
// (exp(-inf) = 0). `attn lesson causal` prints it at stage 5 (masked = attn_scores.masked_fill(
// mask.bool(), -inf)) and compares -inf with the -1e9 and -1e10 other articles use at stage 8.
//
// Shape legend: T query tokens, S key tokens (S = T in self-attention).
//
// Contract
//   masked_fill(scores, mask, fill)[i, j] = fill          where mask[i, j] != 0
//                                         = scores[i, j]  elsewhere (unchanged, bit for bit)
//   scores (T, S), mask (T, S) -> (T, S)
//   throws std::invalid_argument when scores and mask differ in shape.
//
// Worked example
//   masked_fill([[0.5, 0.2], [0.1, 0.9]], [[0, 1], [0, 0]], -inf) -> [[0.5, -inf], [0.1, 0.9]]
#include <stdexcept>

#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;

Mat masked_fill(const Mat& scores, const Mat& mask, float fill) {
  // TODO: refuse mismatched shapes (std::invalid_argument), then copy the scores and put
  // `fill` wherever the mask is not 0.
  return {};  // TODO: return the (T, S) filled scores instead of this empty (0, 0) tensor.
}

}  // namespace exercise
