// Matrix products in float or double, on the calling thread: the backward passes' products, and the
// forward passes' products in double.
//
// The backward passes run in float for training and in double for the finite-difference tests,
// and the forward passes run in double for training (core/tiny_lm.hpp), so these products
// dispatch on the element type to OpenBLAS's sgemm or dgemm. A forward pass in float keeps
// core/matmul's sgemm, the call the lessons have always made. OpenBLAS's <cblas.h> is included
// only in gemm.cpp, which includes no xtensor-blas header (docs/architecture.md, trap 8). Include this
// header from .cpp files only (no operation's header needs it).
//
// Legend: m, k, n matrix sizes; every buffer row-major and contiguous.
#pragma once

#include <cstddef>

namespace attn {

// c (m, n) = op(a) @ op(b) + beta * c, where op(a) is (m, k) and op(b) is (k, n).
//   a is stored (m, k), or (k, m) when a_t;  b is stored (k, n), or (n, k) when b_t.
// beta 1 accumulates into c (gradients summed over a batch or over layers); beta 0 overwrites.
// Runs on the calling thread: a large product is cut into slices OpenBLAS does not thread (gemm.cpp).
template <class T>
void gemm(bool a_t, bool b_t, std::size_t m, std::size_t n, std::size_t k, const T* a, const T* b, T beta, T* c);

}  // namespace attn
