// Exercise online-softmax (lesson: flash). Check it with: attn check online-softmax
//
// PyTorch -> xtensor 0.24, for this exercise:
//   for chunk in chunks      for (const Vec& chunk : chunks)
//   chunk.max()              a loop over chunk(i) (or xt::amax(chunk)(), <xtensor/xmath.hpp>)
//   float('-inf')            -std::numeric_limits<float>::infinity()   (<limits>)
//   torch.exp(x), max(a, b)  std::exp(x), std::max(a, b)
//   torch.zeros(N)           Vec w = xt::zeros<float>({N});   (N a std::size_t)
//
// A softmax needs the row's max and the sum of exp(s - max) before it can give a single weight.
// FlashAttention gets both in one pass over key tiles that arrive one after another: it keeps a
// running max m and a running sum l, and when a new chunk raises the max, the old sum was taken
// against a smaller max, so it is rescaled by exp(m_old - m_new) before the chunk's own terms are
// added. `attn lesson flash` prints m, m_new, alpha and l for every key tile at stages 4-6. Here
// you write that update for one row, then the softmax it gives.
//
// Shape legend: n scores in one chunk, N scores in the whole row (all chunks, in order).
//
// Contract
//   absorb(state, chunk) -> the state after one more chunk:
//     m_new = max(state.max, max of chunk)
//     sum   = state.sum * exp(state.max - m_new) + sum_j exp(chunk[j] - m_new)
//   - a -inf score adds exp(-inf) = 0: a chunk of -inf only changes nothing;
//   - while every score seen is -inf, m stays -inf and the sum 0 (exp(-inf - -inf) is NaN: do not
//     compute it);
//   - an empty chunk changes nothing.
//   online_softmax(chunks) -> (N,) weights: absorb every chunk, then exp(s - m) / sum for every
//   score, in order. A row of -inf only gives NaN everywhere, as torch.softmax does.
//
// Worked example
//   chunks [1, 2] then [5, 0]:
//     after [1, 2]: m = 2, sum = exp(-1) + exp(0) = 1.3679
//     after [5, 0]: m = 5, sum = 1.3679 * exp(2 - 5) + exp(0) + exp(-5) = 1.0748
//   Forgetting the rescale gives 1.3679 + 1 + exp(-5) = 2.3746: every old term counted
//   exp(3) = 20 times too much.
#include <cmath>
#include <limits>
#include <vector>

#include "core/tensor.hpp"

namespace exercise {

using attn::Vec;

// m and the sum of exp(s - m) over the scores seen so far (nothing seen: -inf and 0).
struct Running {
  float max = -std::numeric_limits<float>::infinity();
  float sum = 0.0f;
};

Running absorb(Running state, const Vec& chunk) {
  // TODO: the chunk's max, the new max, the rescale of the old sum, the chunk's exps.
  return state;  // TODO: return the state after the chunk instead of the state before it.
}

Vec online_softmax(const std::vector<Vec>& chunks) {
  // TODO: absorb every chunk in order, then one weight per score: exp(s - m) / sum.
  return {};  // TODO: return the (N,) weights instead of this empty tensor.
}

}  // namespace exercise
