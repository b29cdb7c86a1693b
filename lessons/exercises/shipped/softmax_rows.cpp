// Exercise softmax-rows (lesson: self-attention). Check it with: attn check softmax-rows
//
// PyTorch -> xtensor 0.24, for this exercise:
//   scores.shape[0]              scores.shape()[0]   (a std::size_t)
//   w = scores.clone()           Mat w = scores;   (a copy)
//   scores[i, j]                 scores(i, j)
//   scores.max(dim=-1).values    loop over j per row (or xt::amax(scores, {1}), <xtensor/xmath.hpp>)
//   torch.exp(x), x.sum(dim=-1)  std::exp(x(i, j)); a loop adding the row
//   torch.softmax(x, dim=-1)     what you write here; later lessons call attn::softmax_rows
//
// Softmax turns each row of attention scores into weights: positive, summing to 1, the largest
// score getting the largest share. `attn lesson self-attention` prints it at stage 3
// (attn_weights = softmax(attn_scores, dim=-1)) and again at stage 9. Written naively,
// exp(10000) overflows to inf and the row becomes NaN; yours must survive scores of +-1e4.
//
// Shape legend: T query tokens (rows), S key tokens (columns).
//
// Contract
//   softmax_rows(scores)[i, j] = exp(scores[i, j]) / sum_k exp(scores[i, k])
//   scores (T, S) -> weights (T, S), the same shape
//   - finite for any finite scores, however large (+-1e4 included);
//   - a -inf score gets weight exactly 0 (that is how the causal mask works);
//   - a row whose entries are all equal gives 1/S everywhere.
//
// Worked example
//   softmax_rows([[1, 1], [0, ln 3]]) -> [[0.5, 0.5], [0.25, 0.75]]
//   softmax_rows([[1e4, 0, -1e4]])   -> [[1, 0, 0]]        (not [[nan, 0, 0]])
#include <cmath>

#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;

Mat softmax_rows(const Mat& scores) {
  // TODO: a stable softmax of each row of scores.
  return {};  // TODO: return the (T, S) weights instead of this empty (0, 0) tensor.
}

}  // namespace exercise
