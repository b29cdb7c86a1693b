// Matrix products for the backward passes, in float or double (internal to core/grad).
//
// The backward passes run in float for training and in double for the finite-difference tests,
// so their products dispatch on the element type to OpenBLAS's sgemm or dgemm. OpenBLAS's
// <cblas.h> is included only in the .cpp files of core/grad, which include no xtensor-blas
// header (DESIGN.md, trap 8).
//
// Legend: m, k, n matrix sizes; every buffer row-major and contiguous.
#pragma once

#include <cstddef>

namespace attn::grad {

// c (m, n) = op(a) @ op(b) + beta * c, where op(a) is (m, k) and op(b) is (k, n).
//   a is stored (m, k), or (k, m) when a_t;  b is stored (k, n), or (n, k) when b_t.
// beta 1 accumulates into c (gradients summed over a batch or over layers); beta 0 overwrites.
// Runs on the calling thread: a large product is cut into slices OpenBLAS does not thread (gemm.cpp).
template <class T>
void gemm(bool a_t, bool b_t, std::size_t m, std::size_t n, std::size_t k, const T* a, const T* b, T beta, T* c);

}  // namespace attn::grad
