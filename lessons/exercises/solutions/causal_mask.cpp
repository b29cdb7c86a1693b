// Solution to causal-mask. The contract and a worked example are in ../causal_mask.cpp; try it
// there first (`attn hint causal-mask` helps).
//
// Shape legend: T tokens.
#include "core/tensor.hpp"

namespace exercise {

using attn::Mat;

Mat causal_mask(std::size_t T) {
  Mat mask = xt::zeros<float>({T, T});  // (T, T): nothing hidden yet
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t j = i + 1; j < T; ++j) mask(i, j) = 1.0f;  // token i must not see the later token j
  return mask;
}

}  // namespace exercise
