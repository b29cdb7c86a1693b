// sgemm / dgemm behind one signature (see gemm.hpp).
#include "core/grad/gemm.hpp"

#include <cblas.h>

namespace attn::grad {

template <>
void gemm<float>(bool a_t, bool b_t, std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b,
                 float beta, float* c) {
  if (m == 0 || n == 0) return;
  cblas_sgemm(CblasRowMajor, a_t ? CblasTrans : CblasNoTrans, b_t ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), 1.0f, a, static_cast<int>(a_t ? m : k), b,
              static_cast<int>(b_t ? k : n), beta, c, static_cast<int>(n));
}

template <>
void gemm<double>(bool a_t, bool b_t, std::size_t m, std::size_t n, std::size_t k, const double* a, const double* b,
                  double beta, double* c) {
  if (m == 0 || n == 0) return;
  cblas_dgemm(CblasRowMajor, a_t ? CblasTrans : CblasNoTrans, b_t ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), 1.0, a, static_cast<int>(a_t ? m : k), b,
              static_cast<int>(b_t ? k : n), beta, c, static_cast<int>(n));
}

}  // namespace attn::grad
