// Exercise causal-mask (lesson: causal). Check it with: attn check causal-mask
//
// PyTorch -> xtensor 0.24, for this exercise:
//   torch.zeros(T, T)             Mat m = xt::zeros<float>({T, T});   (T is a std::size_t)
//   m[i, j] = 1                   m(i, j) = 1.0f;
//   torch.triu(ones, diagonal=1)  what you write: the loops over i and j > i
//
// A language model predicts the next word, so token t must not look at tokens after t. The
// causal mask marks those positions: 1 for the future, 0 for what may be seen. `attn lesson
// causal` prints it at stage 4 (mask = torch.triu(torch.ones(T, T), diagonal=1)).
//
// Shape legend: T tokens.
//
// Contract
//   causal_mask(T) -> (T, T) of 0.0f and 1.0f, with mask[i, j] = 1 exactly when j > i
//   row i is token i; the diagonal is 0 (a token sees itself); T = 0 gives a (0, 0) tensor.
//
// Worked example
//   causal_mask(3) -> [[0, 1, 1],
//                      [0, 0, 1],
//                      [0, 0, 0]]
#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;

Mat causal_mask(std::size_t T) {
  // TODO: a (T, T) tensor of zeros with 1 above the diagonal (column > row).
  return {};  // TODO: return your mask instead of this empty (0, 0) tensor.
}

}  // namespace exercise
