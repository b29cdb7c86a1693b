// Matrix products, plain and batched, on contiguous buffers through OpenBLAS sgemm.
//
// Why not xt::linalg::dot: on 3-D/4-D arrays it is NumPy's dot, not a batched matmul
// ((2,3,4)·(2,4,3) gives (2,3,2,3)), and on strided views it throws. Every product here
// runs one sgemm per leading index over row-major buffers instead.
//
// Legend: m, k, n matrix sizes; B and h leading (batch, head) dimensions.
#pragma once

#include <string>

#include "core/tensor.hpp"

namespace attn {

// a @ b: (m, k) @ (k, n) -> (m, n)
Mat matmul(const Mat& a, const Mat& b);
// a @ b^T: (m, k) @ (n, k)^T -> (m, n)
Mat matmul_bt(const Mat& a, const Mat& b);
// a @ b^T: (B, m, k) @ (B, n, k)^T -> (B, m, n)
Ten3 matmul_bt(const Ten3& a, const Ten3& b);
// a @ b: (B, m, k) @ (B, k, n) -> (B, m, n)
Ten3 matmul(const Ten3& a, const Ten3& b);
// (B, h, m, k) @ (B, h, n, k)^T -> (B, h, m, n)
Ten4 matmul_bt(const Ten4& a, const Ten4& b);
// (B, h, m, k) @ (B, h, k, n) -> (B, h, m, n)
Ten4 matmul(const Ten4& a, const Ten4& b);
// x @ w for every row of x: (B, T, k) @ (k, n) -> (B, T, n), one sgemm over all B*T rows.
Ten3 matmul(const Ten3& x, const Mat& w);
// x @ w^T for every row of x: (B, T, k) @ (n, k)^T -> (B, T, n), one sgemm over all B*T rows.
Ten3 matmul_bt(const Ten3& x, const Mat& w);

// The one sgemm behind everything above, on raw row-major buffers with explicit row strides, for
// code that reads sub-blocks in place (a group of heads, a KV cache, one head inside a (B, T,
// h * d_k) projection) or accumulates into its output:
//   c (m, n) = alpha * a (m, k) @ op(b) + beta * c,   op(b) = b (k, n), or b^T with b stored (n, k).
// lda, ldb, ldc are the distances between consecutive rows of a, b (as stored) and c. With k = 0
// it only scales c by beta. Declared here so that no caller needs <cblas.h> (DESIGN.md, trap 8).
void sgemm(std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a, std::size_t lda,
           const float* b, std::size_t ldb, bool b_transposed, float beta, float* c, std::size_t ldc);

// OpenBLAS's own threads: how many each sgemm may use (OPENBLAS_NUM_THREADS, else the cores), and
// a scope that sets that number and restores it on exit. The setting is process-wide; code that
// runs sgemm from several threads of its own sets it to 1 for the duration (fast_attention.cpp).
std::size_t blas_threads();
class BlasThreadsScope {
 public:
  explicit BlasThreadsScope(std::size_t threads);
  ~BlasThreadsScope();
  BlasThreadsScope(const BlasThreadsScope&) = delete;
  BlasThreadsScope& operator=(const BlasThreadsScope&) = delete;

 private:
  std::size_t saved_;
};

// What OpenBLAS reports about itself: "OpenBLAS 0.3.21 ... Haswell MAX_THREADS=64, kernel
// Haswell, 2 threads". Benchmarks print it beside their timings.
std::string blas_description();

}  // namespace attn
