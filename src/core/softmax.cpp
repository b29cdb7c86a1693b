// Softmax by rows, forward and backward, over contiguous rows (see softmax.hpp).
#include "core/softmax.hpp"

#include <cmath>
#include <limits>

namespace attn {

template <class T>
void softmax_rows_inplace(T* data, std::size_t rows, std::size_t n) {
  // A plain loop over contiguous rows: ~4x faster than the same thing as xtensor expressions,
  // and it sidesteps the lazy-reduction broadcasting trap of xtensor 0.24.
  for (std::size_t r = 0; r < rows; ++r) {
    T* row = data + r * n;
    T max = -std::numeric_limits<T>::infinity();
    for (std::size_t j = 0; j < n; ++j) max = std::fmax(max, row[j]);
    if (std::isnan(max) || max == -std::numeric_limits<T>::infinity()) {
      // Nothing to attend to (or NaN in): PyTorch returns NaN for the whole row.
      for (std::size_t j = 0; j < n; ++j) row[j] = std::numeric_limits<T>::quiet_NaN();
      continue;
    }
    T sum = T(0);
    for (std::size_t j = 0; j < n; ++j) {
      row[j] = std::exp(row[j] - max);
      sum += row[j];
    }
    // Multiply by the reciprocal, as PyTorch's CPU kernel does.
    const T inv = T(1) / sum;
    for (std::size_t j = 0; j < n; ++j) row[j] *= inv;
  }
}

template void softmax_rows_inplace(float*, std::size_t, std::size_t);
template void softmax_rows_inplace(double*, std::size_t, std::size_t);

}  // namespace attn

namespace attn::grad {

template <class T>
void softmax_rows_backward(const T* y, const T* dy, T* dx, std::size_t rows, std::size_t n) {
  for (std::size_t r = 0; r < rows; ++r) {
    const T* yr = y + r * n;
    const T* dyr = dy + r * n;
    T* dxr = dx + r * n;
    T dot = 0;  // sum_i dL/dy_i y_i: how much the row's output moves on average
    for (std::size_t i = 0; i < n; ++i) dot += dyr[i] * yr[i];
    for (std::size_t j = 0; j < n; ++j) dxr[j] = yr[j] * (dyr[j] - dot);
  }
}

template void softmax_rows_backward(const float*, const float*, float*, std::size_t, std::size_t);
template void softmax_rows_backward(const double*, const double*, double*, std::size_t, std::size_t);

}  // namespace attn::grad
