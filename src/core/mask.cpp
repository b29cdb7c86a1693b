#include "core/mask.hpp"

namespace attn {

Mat causal_mask(std::size_t T) {
  Mat mask = xt::zeros<float>({T, T});  // (T, T)
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t j = i + 1; j < T; ++j) mask(i, j) = 1.0f;
  return mask;
}

Mat lower_triangle(std::size_t T) {
  Mat tril = xt::zeros<float>({T, T});  // (T, T)
  for (std::size_t i = 0; i < T; ++i)
    for (std::size_t j = 0; j <= i; ++j) tril(i, j) = 1.0f;
  return tril;
}

namespace {

template <class T>
void fill_where(T* scores, std::size_t matrices, const Mat& mask, T fill) {
  const std::size_t cells = mask.size();
  for (std::size_t m = 0; m < matrices; ++m)
    for (std::size_t c = 0; c < cells; ++c)
      if (mask.data()[c] != 0.0f) scores[m * cells + c] = fill;
}

}  // namespace

void masked_fill_inplace(float* scores, std::size_t matrices, const Mat& mask, float fill) {
  fill_where(scores, matrices, mask, fill);
}

void masked_fill_inplace(double* scores, std::size_t matrices, const Mat& mask, double fill) {
  fill_where(scores, matrices, mask, fill);
}

}  // namespace attn
