// Solution to masked-softmax. The contract and a worked example are in ../masked_softmax.cpp; try
// it there first (`attn hint masked-softmax` helps).
//
// Shape legend: B batch, T queries, S key positions.
#include <stdexcept>
#include <string>
#include <vector>

#include "core/softmax.hpp"
#include "core/tensor.hpp"

namespace exercise {

using attn::Ten3;

Ten3 masked_softmax(const Ten3& scores, const std::vector<std::size_t>& valid_lens, float fill) {
  const std::size_t B = scores.shape()[0], T = scores.shape()[1], S = scores.shape()[2];
  // One length per sequence: a missing or extra one would mask the wrong sequence silently.
  if (valid_lens.size() != B)
    throw std::invalid_argument("masked_softmax: " + std::to_string(valid_lens.size()) + " valid lengths for " +
                                std::to_string(B) + " sequences (scores " + attn::shape_of(scores) + ")");
  Ten3 masked = scores;  // (B, T, S)
  for (std::size_t b = 0; b < B; ++b) {
    if (valid_lens[b] > S)
      throw std::invalid_argument("masked_softmax: valid length " + std::to_string(valid_lens[b]) + " of sequence " +
                                  std::to_string(b) + " exceeds the " + std::to_string(S) + " key positions");
    // The mask depends on the key only: the same columns of every query row of sequence b.
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t s = valid_lens[b]; s < S; ++s) masked(b, t, s) = fill;
  }
  return attn::softmax_rows(masked);  // (B, T, S), each row over its S keys
}

}  // namespace exercise
