// The only translation unit that includes xtensor-blas (it is slow to compile).
#include "core/matmul.hpp"

#include <algorithm>
#include <stdexcept>

#include <xtensor-blas/xblas.hpp>

#include "core/small_gemm.hpp"

// OpenBLAS's extensions, declared by hand: <cblas.h> would clash with xtensor-blas (trap 8).
extern "C" {
void openblas_set_num_threads(int);
int openblas_get_num_threads(void);
char* openblas_get_corename(void);
char* openblas_get_config(void);
}

namespace attn {
namespace {

// One row-major sgemm: c (m, n) = a (m, k) @ op(b), op(b) = b (k, n) or b^T with b (n, k).
void gemm(const float* a, const float* b, float* c, std::size_t m, std::size_t k, std::size_t n,
          bool b_transposed) {
  sgemm(m, n, k, 1.0f, a, k, b, b_transposed ? k : n, b_transposed, 0.0f, c, n);
}

[[noreturn]] void mismatch(const char* op, const Shape& a, const Shape& b) {
  throw std::invalid_argument(std::string(op) + ": shapes do not fit: " + shape_str(a) + " and " +
                              shape_str(b));
}

// Batched product over `batches` leading matrices, each a (m, k) and b (k, n) or (n, k).
template <class Out, class In>
Out batched(const In& a, const In& b, bool b_transposed, const char* op) {
  constexpr std::size_t N = In::rank;
  for (std::size_t d = 0; d + 2 < N; ++d)
    if (a.shape()[d] != b.shape()[d]) mismatch(op, to_shape(a.shape()), to_shape(b.shape()));
  const std::size_t m = a.shape()[N - 2], k = a.shape()[N - 1];
  const std::size_t kb = b_transposed ? b.shape()[N - 1] : b.shape()[N - 2];
  const std::size_t n = b_transposed ? b.shape()[N - 2] : b.shape()[N - 1];
  if (k != kb) mismatch(op, to_shape(a.shape()), to_shape(b.shape()));
  auto shape = a.shape();
  shape[N - 1] = n;
  Out c = xt::empty<float>(shape);
  std::size_t count = 1;  // number of leading (batch, head) matrices
  for (std::size_t d = 0; d + 2 < N; ++d) count *= a.shape()[d];
  for (std::size_t i = 0; i < count; ++i)
    gemm(a.data() + i * m * k, b.data() + i * k * n, c.data() + i * m * n, m, k, n, b_transposed);
  return c;
}

}  // namespace

void sgemm(std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a, std::size_t lda,
           const float* b, std::size_t ldb, bool b_transposed, float beta, float* c, std::size_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    // BLAS would read nothing of a and b; c = beta * c, with beta 0 meaning "overwrite" as in BLAS.
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, b_transposed ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb),
              beta, c, static_cast<int>(ldc));
}

std::size_t blas_threads() { return static_cast<std::size_t>(std::max(1, openblas_get_num_threads())); }

BlasThreadsScope::BlasThreadsScope(std::size_t threads) : saved_(blas_threads()) {
  if (threads != saved_) openblas_set_num_threads(static_cast<int>(threads));
}

BlasThreadsScope::~BlasThreadsScope() {
  if (blas_threads() != saved_) openblas_set_num_threads(static_cast<int>(saved_));
}

std::string blas_description() {
  std::string config = openblas_get_config();
  while (!config.empty() && config.back() == ' ') config.pop_back();
  return config + ", kernel " + openblas_get_corename() + ", " + std::to_string(blas_threads()) + " threads";
}

bool takes_small_gemm(std::size_t rows, std::size_t n, std::size_t k) {
  return rows >= 1 && rows <= kSmallGemmMaxRows && n * k >= kSmallGemmMinWeight;
}

Mat matmul(const Mat& a, const Mat& b) { return batched<Mat>(a, b, false, "matmul"); }
Mat matmul_bt(const Mat& a, const Mat& b) { return batched<Mat>(a, b, true, "matmul_bt"); }
Ten3 matmul(const Ten3& a, const Ten3& b) { return batched<Ten3>(a, b, false, "matmul"); }
Ten3 matmul_bt(const Ten3& a, const Ten3& b) { return batched<Ten3>(a, b, true, "matmul_bt"); }
Ten4 matmul(const Ten4& a, const Ten4& b) { return batched<Ten4>(a, b, false, "matmul"); }
Ten4 matmul_bt(const Ten4& a, const Ten4& b) { return batched<Ten4>(a, b, true, "matmul_bt"); }

Ten3 matmul(const Ten3& x, const Mat& w) {
  const std::size_t B = x.shape()[0], T = x.shape()[1], k = x.shape()[2];
  if (w.shape()[0] != k) mismatch("matmul", to_shape(x.shape()), to_shape(w.shape()));
  const std::size_t n = w.shape()[1];
  Ten3 y = xt::empty<float>({B, T, n});  // (B, T, n)
  if (takes_small_gemm(B * T, n, k))
    small_gemm_b(B * T, n, k, x.data(), w.data(), y.data());
  else
    gemm(x.data(), w.data(), y.data(), B * T, k, n, false);
  return y;
}

Ten3 matmul_bt(const Ten3& x, const Mat& w) {
  const std::size_t B = x.shape()[0], T = x.shape()[1], k = x.shape()[2];
  if (w.shape()[1] != k) mismatch("linear", to_shape(x.shape()), to_shape(w.shape()));
  const std::size_t n = w.shape()[0];
  Ten3 y = xt::empty<float>({B, T, n});  // (B, T, n)
  matmul_bt_rows(B * T, n, k, x.data(), w.data(), y.data());
  return y;
}

void matmul_bt_rows(std::size_t rows, std::size_t n, std::size_t k, const float* x, const float* w, float* y) {
  if (takes_small_gemm(rows, n, k))
    small_gemm_bt(rows, n, k, x, w, y);
  else
    gemm(x, w, y, rows, k, n, true);
}

}  // namespace attn
