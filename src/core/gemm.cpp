// sgemm / dgemm behind one signature (see gemm.hpp).
//
// The training lessons multiply many small matrices, a few hundred thousand multiply-adds each.
// OpenBLAS hands a product above 4 * 65536 multiply-adds to its threads; at these sizes waking
// them costs more than the product, and on a busy machine far more (the learn-heads run spent
// more system time than arithmetic). So a larger product is cut into slices of rows (or, when one
// row is already too large, of the inner dimension, accumulating) that OpenBLAS runs on the
// calling thread. The slicing depends only on the sizes, so the result is the same on every run.
#include "core/gemm.hpp"

#include <algorithm>

#include <cblas.h>

namespace attn {

namespace {

// OpenBLAS 0.3 runs a product of at most this many multiply-adds on one thread.
constexpr double kSerialLimit = 4.0 * 65536.0;

void call(bool a_t, bool b_t, std::size_t m, std::size_t n, std::size_t k, const float* a, std::size_t lda,
          const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc) {
  cblas_sgemm(CblasRowMajor, a_t ? CblasTrans : CblasNoTrans, b_t ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), 1.0f, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta,
              c, static_cast<int>(ldc));
}

void call(bool a_t, bool b_t, std::size_t m, std::size_t n, std::size_t k, const double* a, std::size_t lda,
          const double* b, std::size_t ldb, double beta, double* c, std::size_t ldc) {
  cblas_dgemm(CblasRowMajor, a_t ? CblasTrans : CblasNoTrans, b_t ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), 1.0, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta,
              c, static_cast<int>(ldc));
}

}  // namespace

template <class T>
void gemm(bool a_t, bool b_t, std::size_t m, std::size_t n, std::size_t k, const T* a, const T* b, T beta, T* c) {
  if (m == 0 || n == 0) return;
  const std::size_t lda = a_t ? m : k, ldb = b_t ? k : n;
  const double per_row = static_cast<double>(n) * static_cast<double>(std::max<std::size_t>(k, 1));
  if (per_row * static_cast<double>(m) <= kSerialLimit) {
    call(a_t, b_t, m, n, k, a, lda, b, ldb, beta, c, n);
    return;
  }
  if (per_row <= kSerialLimit) {  // slices of rows of c (and of op(a))
    const std::size_t rows = std::max<std::size_t>(1, static_cast<std::size_t>(kSerialLimit / per_row));
    for (std::size_t i = 0; i < m; i += rows) {
      const std::size_t r = std::min(rows, m - i);
      call(a_t, b_t, r, n, k, a_t ? a + i : a + i * lda, lda, b, ldb, beta, c + i * n, n);
    }
    return;
  }
  // One row of c is already too large: slices of the inner dimension, each added to c, row by row.
  const std::size_t depth = std::max<std::size_t>(1, static_cast<std::size_t>(kSerialLimit / static_cast<double>(n)));
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t p = 0; p < k; p += depth) {
      const std::size_t d = std::min(depth, k - p);
      const T* ai = a_t ? a + p * lda + i : a + i * lda + p;  // op(a)[i, p .. p + d)
      const T* bp = b_t ? b + p : b + p * ldb;                // op(b)[p .. p + d, :]
      call(a_t, b_t, 1, n, d, ai, lda, bp, ldb, p == 0 ? beta : T(1), c + i * n, n);
    }
}

template void gemm<float>(bool, bool, std::size_t, std::size_t, std::size_t, const float*, const float*, float, float*);
template void gemm<double>(bool, bool, std::size_t, std::size_t, std::size_t, const double*, const double*, double,
                           double*);

}  // namespace attn
