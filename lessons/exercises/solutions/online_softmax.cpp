// Solution to online-softmax. The contract and a worked example are in ../online_softmax.cpp;
// try it there first (`attn hint online-softmax` helps).
//
// Shape legend: n scores in one chunk, N scores in the whole row (all chunks, in order).
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
  float chunk_max = -std::numeric_limits<float>::infinity();
  for (float s : chunk) chunk_max = std::fmax(chunk_max, s);
  const float m_new = std::fmax(state.max, chunk_max);
  // Nothing but -inf so far: exp(-inf - -inf) would be NaN, and there is nothing to add anyway.
  if (m_new == -std::numeric_limits<float>::infinity()) return state;
  float added = 0.0f;
  for (float s : chunk) added += std::exp(s - m_new);  // a -inf score adds 0
  // The old sum was taken against state.max; against m_new each of its terms is exp(state.max -
  // m_new) smaller (0 when state.max was -inf: there were no terms).
  return {m_new, state.sum * std::exp(state.max - m_new) + added};
}

Vec online_softmax(const std::vector<Vec>& chunks) {
  Running r;
  std::size_t n = 0;
  for (const Vec& c : chunks) {
    r = absorb(r, c);
    n += c.size();
  }
  Vec out = xt::empty<float>({n});  // (N,)
  std::size_t i = 0;
  // A row of -inf only: exp(-inf - -inf) / 0 is NaN, which is what torch.softmax gives.
  for (const Vec& c : chunks)
    for (float s : c) out(i++) = std::exp(s - r.max) / r.sum;
  return out;
}

}  // namespace exercise
