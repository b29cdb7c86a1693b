// Softmax's backward pass, row by row over contiguous rows (see softmax.hpp).
#include "core/grad/softmax.hpp"

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
