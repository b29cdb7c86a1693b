// Solution to masked-fill. The contract and a worked example are in ../masked_fill.cpp; try it
// there first (`attn hint masked-fill` helps).
//
// Shape legend: T query tokens, S key tokens.
#include <stdexcept>

#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;

Mat masked_fill(const Mat& scores, const Mat& mask, float fill) {
  // A mask of another shape would hide the wrong cells without any error: refuse it, naming both.
  if (scores.shape() != mask.shape())
    throw std::invalid_argument("masked_fill: mask " + attn::shape_of(mask) + " does not fit scores " +
                                attn::shape_of(scores));
  Mat out = scores;  // (T, S): every score kept as it is...
  for (std::size_t i = 0; i < out.shape()[0]; ++i)
    for (std::size_t j = 0; j < out.shape()[1]; ++j)
      if (mask(i, j) != 0.0f) out(i, j) = fill;  // ...except the hidden ones
  return out;
}

}  // namespace exercise
