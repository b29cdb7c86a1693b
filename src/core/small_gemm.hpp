// Products with few rows on the left: c (m, n) = a (m, k) @ W, W a large weight, m small (1..16).
//
// Why this exists: a short prompt through a real model (9 tokens through Llama-3.2-3B) multiplies
// a handful of rows by every weight matrix once. That is memory-bound: each weight value is read
// once and used m times, so the time is the time to stream the weights (6.4 GB of bf16 for 3B at
// ~11 GB/s), not the arithmetic. OpenBLAS 0.3.21's sgemm is built for the opposite case: with 9
// rows it packs panels and runs at 10-13 GFLOP/s here, one thread as fast as two, ~5 s for 3B.
// These kernels read each row (or column strip) of the weight once, straight from where it lies,
// and do all m rows' multiply-adds on it while it is in registers; the bf16 variant reads the
// checkpoint's 2-byte values and widens them in registers (bf16 -> f32 is exact: the bits << 16),
// halving the bytes streamed without a float32 copy of the model.
//
// Layouts (all row-major, contiguous):
//   small_gemm_bt:       c (m, n) = a (m, k) @ b^T, b stored (n, k)  (nn.Linear's weight (out, in))
//   small_gemm_bt_bf16:  the same, b as bfloat16 bits (the high half of each float32)
//   small_gemm_b:        c (m, n) = a (m, k) @ b,   b stored (k, n)  (GPT-2's Conv1D weight (in, out))
// Any m works (rows are taken 16 at a time); the kernels pay off for m up to about 16, see
// matmul.hpp for when matmul/matmul_bt take them.
//
// Threads: n is split into contiguous chunks, one per thread (blas_threads() of them, the same
// number OpenBLAS's sgemm would use, fewer when the product is too small to be worth a thread);
// the calling thread computes the first chunk. Each output element is computed by one thread in
// one fixed order, so the result does not depend on the thread count.
//
// Numbers: equal to sgemm's to float32 rounding, not bit for bit. bt sums each dot product in
// `lanes` interleaved partial sums (8 for AVX2, 16 for AVX-512, 4 for the baseline) added up at the
// end, with fused multiply-adds where the CPU has them; b sums in k order, one fused (or, on the
// baseline, unfused) multiply-add per term. Different instruction sets therefore differ in the last
// bits; tests/core/test_small_gemm.cpp bounds the difference by a tolerance that grows with sqrt(k).
//
// Instruction sets: one body, written with GCC's vector extensions, is compiled three times
// (AVX-512, AVX2+FMA, plain x86-64 SSE2) and the widest the CPU runs is chosen at run time, so the
// binary runs on any x86-64 CPU without -march=native (which would change other files' last
// digits: docs/architecture.md, trap 10).
//
// Legend: m rows of a and c (B * T tokens), k inner width (in), n output width (out).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attn {

// c (m, n) = a (m, k) @ b^T, b stored (n, k) row-major (ldb = k), m small.
void small_gemm_bt(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c);
// The same with b stored as bfloat16 bits (uint16_t, the high half of a float32), converted in registers.
void small_gemm_bt_bf16(std::size_t m, std::size_t n, std::size_t k, const float* a, const std::uint16_t* b,
                        float* c);
// c (m, n) = a (m, k) @ b, b stored (k, n) row-major (Conv1D), m small.
void small_gemm_b(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c);

// Which compiled copy of the kernels runs.
enum class SmallGemmIsa {
  best,      // the widest this CPU has: the first of small_gemm_isas()
  avx512,    // 16 floats at a time (AVX-512F)
  avx2,      // 8 floats at a time, fused multiply-adds (AVX2 with FMA)
  baseline,  // plain x86-64 (SSE2): every x86-64 CPU runs it
};

// The instruction sets this CPU runs, widest first; baseline is always last.
std::vector<SmallGemmIsa> small_gemm_isas();
// "AVX-512", "AVX2", "x86-64 (SSE2)"; for best, the name of the one it picks.
const char* small_gemm_isa_name(SmallGemmIsa isa);

// For tests and benchmarks: force an instruction set or a thread count. The three functions
// above are these with the defaults.
struct SmallGemmOptions {
  SmallGemmIsa isa = SmallGemmIsa::best;  // one this CPU lacks is refused (std::invalid_argument)
  std::size_t threads = 0;  // 0: blas_threads(), fewer for small products (under ~2^18 multiply-adds
                            // a thread); > 0: exactly that many, as long as n has a chunk for each
};
void small_gemm_bt(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c,
                   const SmallGemmOptions& options);
void small_gemm_bt_bf16(std::size_t m, std::size_t n, std::size_t k, const float* a, const std::uint16_t* b,
                        float* c, const SmallGemmOptions& options);
void small_gemm_b(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c,
                  const SmallGemmOptions& options);

}  // namespace attn
