// Matrix products, plain and batched, on contiguous buffers through OpenBLAS sgemm.
//
// Why not xt::linalg::dot: on 3-D/4-D arrays it is NumPy's dot, not a batched matmul
// ((2,3,4)·(2,4,3) gives (2,3,2,3)), and on strided views it throws. Every product here
// runs one sgemm per leading index over row-major buffers instead.
//
// Legend: m, k, n matrix sizes; B and h leading (batch, head) dimensions.
#pragma once

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

}  // namespace attn
