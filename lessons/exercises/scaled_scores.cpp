// Exercise scaled-scores (lesson: self-attention). Check it with: attn check scaled-scores
//
// PyTorch -> xtensor 0.24, for this exercise:
//   keys.shape[1]          keys.shape()[1]   (a std::size_t)
//   torch.zeros(T, S)      Mat s = xt::zeros<float>({T, S});
//   queries @ keys.T       no @ or .T: s(i, j) = the loop over c of queries(i, c) * keys(j, c)
//   math.sqrt(d_k)         std::sqrt(static_cast<float>(d_k))
//   raise ValueError(...)  throw std::invalid_argument("...");
//
// Every query meets every key in a dot product, and the result is divided by sqrt(d_k) so the
// scores keep the same spread whatever the head width. `attn lesson self-attention` prints the
// two steps at stages 7 and 8 (attn_scores = queries @ keys^T; scaled = attn_scores /
// sqrt(d_k)); `attn lesson scaling` measures why the division is there.
//
// Shape legend: T query tokens, S key tokens, d_k query/key width.
//
// Contract
//   scaled_scores(queries, keys)[i, j] = (queries[i] . keys[j]) / sqrt(d_k)
//   queries (T, d_k), keys (S, d_k) -> (T, S): row i is what query i sees, one column per key
//   d_k = keys.shape()[1]; throws std::invalid_argument when queries and keys differ in width.
//
// Worked example (T 2, S 3, d_k 2)
//   queries = [[1, 0], [1, 1]], keys = [[2, 0], [0, 2], [1, 1]]
//   queries @ keys^T = [[2, 0, 1], [2, 2, 2]]
//   / sqrt(2)        = [[1.4142, 0, 0.7071], [1.4142, 1.4142, 1.4142]]
#include <cmath>
#include <stdexcept>

#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;

Mat scaled_scores(const Mat& queries, const Mat& keys) {
  // TODO: check that the widths match (throw std::invalid_argument if not), then compute
  // queries @ keys^T / sqrt(d_k).
  return {};  // TODO: return the (T, S) scores instead of this empty (0, 0) tensor.
}

}  // namespace exercise
