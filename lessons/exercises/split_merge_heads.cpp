// Exercise split-merge-heads (lesson: heads). Check it with: attn check split-merge-heads
//
// PyTorch -> xtensor 0.24, for this exercise:
//   B, T, d_out = x.shape                 x.shape()[0], x.shape()[1], x.shape()[2]
//   torch.zeros(B, h, T, d_k)             Ten4 out = xt::zeros<float>({B, h, T, d_k});
//   out[b, i, t, j] = x[b, t, c]          out(b, i, t, j) = x(b, t, c);
//   x.view(B, T, h, d_k).transpose(1, 2)  what you write: the loops over b, t, i, j
//   raise ValueError(...)                 throw std::invalid_argument("...");
//
// Multi-head attention computes one wide projection and then reads its columns as h narrower
// heads. Splitting is a view plus a transpose, so that each head gets a (T, d_k) matrix of its
// own; merging undoes both. `attn lesson heads` prints the split at stages 5-6
// (queries.view(B, T, h, d_k).transpose(1, 2)), the merge at stages 10-11, and at stage 14 what
// goes wrong when the transpose is left out.
//
// Shape legend: B batch, T tokens, h heads, d_k head width, d_out = h * d_k.
//
// Contract
//   split_heads(x, h) = x.view(B, T, h, d_k).transpose(1, 2)
//     x (B, T, d_out) -> (B, h, T, d_k); throws std::invalid_argument unless h >= 1 divides d_out
//   merge_heads(heads) = heads.transpose(1, 2).contiguous().view(B, T, h * d_k)
//     heads (B, h, T, d_k) -> (B, T, h * d_k)
//   merge_heads(split_heads(x, h)) == x for every h that divides d_out.
//
// Worked example (B 1, T 2, d_out 4, h 2, so d_k 2)
//   x = [[[1, 2, 3, 4],            token 0
//         [5, 6, 7, 8]]]           token 1
//   split_heads(x, 2) = [[[[1, 2], [5, 6]],     head 0: columns 0-1 of both tokens
//                         [[3, 4], [7, 8]]]]    head 1: columns 2-3 of both tokens
//   (without the transpose you would get [[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]]: head 0 would
//   hold both halves of token 0, and token 1 would never meet token 0.)
#include <stdexcept>

#include "core/tensor.hpp"

namespace exercise {

using attn::Ten3;
using attn::Ten4;

Ten4 split_heads(const Ten3& x, std::size_t h) {
  // TODO: refuse an h that does not divide d_out (std::invalid_argument), then copy x into a
  // (B, h, T, d_k) tensor, head by head.
  return {};  // TODO: return the (B, h, T, d_k) heads instead of this empty tensor.
}

Ten3 merge_heads(const Ten4& heads) {
  // TODO: the inverse: put head i's d_k columns back side by side for each token.
  return {};  // TODO: return the (B, T, h * d_k) tensor instead of this empty one.
}

}  // namespace exercise
