#include "core/softmax.hpp"

#include <cmath>
#include <limits>

namespace attn {

void softmax_rows_inplace(float* data, std::size_t rows, std::size_t n) {
  // A plain loop over contiguous rows: ~4x faster than the same thing as xtensor expressions,
  // and it sidesteps the lazy-reduction broadcasting trap of xtensor 0.24.
  for (std::size_t r = 0; r < rows; ++r) {
    float* row = data + r * n;
    float max = -std::numeric_limits<float>::infinity();
    for (std::size_t j = 0; j < n; ++j) max = std::fmax(max, row[j]);
    if (std::isnan(max) || max == -std::numeric_limits<float>::infinity()) {
      // Nothing to attend to (or NaN in): PyTorch returns NaN for the whole row.
      for (std::size_t j = 0; j < n; ++j) row[j] = std::numeric_limits<float>::quiet_NaN();
      continue;
    }
    float sum = 0.0f;
    for (std::size_t j = 0; j < n; ++j) {
      row[j] = std::exp(row[j] - max);
      sum += row[j];
    }
    // Multiply by the reciprocal, as PyTorch's CPU kernel does.
    const float inv = 1.0f / sum;
    for (std::size_t j = 0; j < n; ++j) row[j] *= inv;
  }
}

}  // namespace attn
