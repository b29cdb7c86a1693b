// Matrix products, plain and batched, on contiguous buffers through OpenBLAS sgemm (and, for a few
// rows against a large weight, through core/small_gemm's kernels: see takes_small_gemm below).
//
// Why not xt::linalg::dot: on 3-D/4-D arrays it is NumPy's dot, not a batched matmul
// ((2,3,4)·(2,4,3) gives (2,3,2,3)), and on strided views it throws. Every product here
// runs one sgemm per leading index over row-major buffers instead.
//
// Legend: m, k, n matrix sizes; B and h leading (batch, head) dimensions.
#pragma once

#include <cstddef>
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
// x @ w for every row of x: (B, T, k) @ (k, n) -> (B, T, n), one product over all B*T rows
// (Conv1D's weight (in, out)).
Ten3 matmul(const Ten3& x, const Mat& w);
// x @ w^T for every row of x: (B, T, k) @ (n, k)^T -> (B, T, n), one product over all B*T rows
// (nn.Linear's weight (out, in)).
Ten3 matmul_bt(const Ten3& x, const Mat& w);
// The product behind the one above, on raw row-major buffers: y (rows, n) = x (rows, k) @ w (n, k)^T,
// every entry of y written (core/linear.hpp's forward pass writes into a buffer it keeps).
void matmul_bt_rows(std::size_t rows, std::size_t n, std::size_t k, const float* x, const float* w, float* y);

// Which kernel those two run. A few rows against a large weight is a memory-bound product that
// sgemm handles badly (core/small_gemm.hpp): with B*T <= kSmallGemmMaxRows rows and a weight of
// n * k >= kSmallGemmMinWeight values they call small_gemm_b / small_gemm_bt, otherwise one sgemm.
//  - 16 rows: measured on Llama-3.2-3B's shapes (tests/bench/bench_small_gemm.cpp; figures in
//    docs/architecture.md, "Performance"), the float32 kernel took 0.4-0.6 of sgemm's time at 9
//    rows, 0.6-1.0 at 16, 0.8-0.9 at 32, and 1.1 at 64, where sgemm is ahead. Past 16 rows the
//    kernel streams the weight once per 16-row pass, so 16 is where its design stops paying.
//  - 2^20 values (4 MB of float32): every lesson's weights are far smaller, so lessons keep going
//    through sgemm and their golden outputs keep their exact digits (the small kernel adds in
//    another order: equal to float32 rounding, not bit for bit). Llama's projections and lm_head,
//    and GPT-2's c_attn, c_fc and MLP c_proj, are above it; GPT-2 small's attention c_proj (768 x
//    768) is not and stays on sgemm.
// Every other product in this file (the batched ones, sgemm itself) is always sgemm.
constexpr std::size_t kSmallGemmMaxRows = 16;
constexpr std::size_t kSmallGemmMinWeight = std::size_t{1} << 20;
bool takes_small_gemm(std::size_t rows, std::size_t n, std::size_t k);

// The one sgemm behind everything above, on raw row-major buffers with explicit row strides, for
// code that reads sub-blocks in place (a group of heads, a KV cache, one head inside a (B, T,
// h * d_k) projection) or accumulates into its output:
//   c (m, n) = alpha * a (m, k) @ op(b) + beta * c,   op(b) = b (k, n), or b^T with b stored (n, k).
// lda, ldb, ldc are the distances between consecutive rows of a, b (as stored) and c. With k = 0
// it only scales c by beta. Declared here so that no caller needs <cblas.h> (docs/architecture.md,
// trap 8).
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
