// The only translation unit that includes xtensor-blas (it is slow to compile).
#include "core/matmul.hpp"

#include <stdexcept>

#include <xtensor-blas/xblas.hpp>

namespace attn {
namespace {

// One row-major sgemm: c (m, n) = a (m, k) @ op(b), op(b) = b (k, n) or b^T with b (n, k).
void gemm(const float* a, const float* b, float* c, std::size_t m, std::size_t k, std::size_t n,
          bool b_transposed) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    std::fill(c, c + m * n, 0.0f);
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, b_transposed ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a,
              static_cast<int>(k), b, static_cast<int>(b_transposed ? k : n), 0.0f, c,
              static_cast<int>(n));
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
  gemm(x.data(), w.data(), y.data(), B * T, k, n, false);
  return y;
}

Ten3 matmul_bt(const Ten3& x, const Mat& w) {
  const std::size_t B = x.shape()[0], T = x.shape()[1], k = x.shape()[2];
  if (w.shape()[1] != k) mismatch("linear", to_shape(x.shape()), to_shape(w.shape()));
  const std::size_t n = w.shape()[0];
  Ten3 y = xt::empty<float>({B, T, n});  // (B, T, n)
  gemm(x.data(), w.data(), y.data(), B * T, k, n, true);
  return y;
}

}  // namespace attn
