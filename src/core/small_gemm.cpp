// Small-m products against large weights (see small_gemm.hpp for why and what).
//
// Legend: m rows of a and c, k inner width, n output width; L lanes of a vector (4, 8 or 16
// floats); NB rows of b one bt tile reads together; MR rows of a one tile updates; NV vectors of
// columns one b tile covers; KC the stretch of k one pass keeps in the first-level cache.
//
// How the work is laid out:
//  - bt (b stored (n, k)): for each group of NB = 4 rows of b, every row of a is multiplied by all
//    four while they are in cache: a tile holds MR x NB vector accumulators (MR rows of a x 4 rows
//    of b, L partial sums each), loads 4 vectors of b and MR vectors of a per step of L values of
//    k, and does MR x 4 multiply-adds. k is walked in stretches of KC so that the 4 rows of b and
//    the m rows of a being read stay in L1 while all row groups of a pass over them; the
//    accumulators live in a small array between stretches. The last k % L values of k make one
//    more, zero-padded, vector step; then each accumulator's L lanes are added up.
//  - b (b stored (k, n)): vectors run along n. A tile covers NV vectors of columns and MR rows of
//    a; per step of k it loads NV vectors of b's row, broadcasts one value of each of its MR rows
//    of a, and does MR x NV multiply-adds. Partial sums of a KC stretch are kept in c itself.
//  - Every output is computed by one thread, in an order that does not depend on the thread count.
//
// The bodies are templates written with GCC's vector extensions (a * b + c on whole vectors,
// fused into one FMA instruction where the target has it: C++ contracts by default), always
// inlined into three wrappers compiled for AVX-512, AVX2+FMA and plain x86-64 by
// __attribute__((target)); small_gemm_isas() says which of them this CPU runs.
#include "core/small_gemm.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

#include "core/matmul.hpp"

// The bodies below pass vectors wider than 16 bytes between always-inlined functions; GCC warns
// that such functions would have another calling convention on a CPU without AVX. They never
// exist as functions of their own (always_inline), so there is no calling convention to differ.
#pragma GCC diagnostic ignored "-Wpsabi"

#define ATTN_INLINE __attribute__((always_inline)) inline

namespace attn {
namespace {

// One instruction set's vector types and tile sizes. H and W are the bf16 bits and their 32-bit
// widening, as many lanes as V.
typedef float f4 __attribute__((vector_size(16)));
typedef float f8 __attribute__((vector_size(32)));
typedef float f16 __attribute__((vector_size(64)));
typedef std::uint16_t h4 __attribute__((vector_size(8)));
typedef std::uint16_t h8 __attribute__((vector_size(16)));
typedef std::uint16_t h16 __attribute__((vector_size(32)));
typedef std::uint32_t w4 __attribute__((vector_size(16)));
typedef std::uint32_t w8 __attribute__((vector_size(32)));
typedef std::uint32_t w16 __attribute__((vector_size(64)));

// Tile sizes follow the register files: a bt tile holds MR * 4 accumulators, 4 vectors of b and
// one of a; a b tile MR * NV accumulators, NV vectors of b and one broadcast. SSE2 and AVX2 have
// 16 vector registers, AVX-512 32.
struct Sse2 {
  using V = f4; using H = h4; using W = w4;
  static constexpr int bt_mr = 2, b_nv = 2, b_mr = 4;
};
struct Avx2 {
  using V = f8; using H = h8; using W = w8;
  static constexpr int bt_mr = 3, b_nv = 2, b_mr = 6;
};
struct Avx512 {
  using V = f16; using H = h16; using W = w16;
  static constexpr int bt_mr = 6, b_nv = 4, b_mr = 6;
};

constexpr std::size_t kNB = 4;     // rows of b per bt tile
constexpr std::size_t kKC = 256;   // values of k per stretch: 4 KB of a row; 16 rows of a + 4 of b = 20 KB
constexpr std::size_t kRows = 16;  // rows of a per bt pass (its accumulators: 16 x 4 vectors)
constexpr std::size_t kPrefetch = 2048;  // bytes ahead a bt tile prefetches its rows of b (1024 and
                                        // 4096 measured about the same, all well above none)

// One stored value of b as a float (for the last k % L values of a bt row).
ATTN_INLINE float to_float(float x) { return x; }
ATTN_INLINE float to_float(std::uint16_t bits) {
  const std::uint32_t w = static_cast<std::uint32_t>(bits) << 16;  // bf16 -> f32 bits, exact
  float f;
  std::memcpy(&f, &w, sizeof f);
  return f;
}

// L consecutive values as a vector of floats (no alignment needed).
template <class I>
ATTN_INLINE typename I::V load(const float* p) {
  typename I::V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class I>
ATTN_INLINE typename I::V load(const std::uint16_t* p) {
  typename I::H h;
  std::memcpy(&h, p, sizeof h);
  const typename I::W w = __builtin_convertvector(h, typename I::W) << 16;  // bf16 -> f32 bits, exact
  typename I::V v;
  std::memcpy(&v, &w, sizeof v);
  return v;
}

template <class V>
ATTN_INLINE float lane_sum(const V& v) {
  float s = 0.0f;
  for (std::size_t l = 0; l < sizeof(V) / sizeof(float); ++l) s += v[l];
  return s;
}

// ---- bt: c (m, n) = a (m, k) @ b^T, b (n, k) ----

// acc[i * NB + r] += the lanes of a row i . b row r over k in [p0, p1), a multiple of L long.
// a points at the tile's first row of a, b at its first row of b; both have row length k.
template <class I, std::size_t NB, int MR, class T>
ATTN_INLINE void bt_tile(const float* a, const T* b, std::size_t k, std::size_t p0, std::size_t p1,
                         typename I::V* acc) {
  using V = typename I::V;
  constexpr std::size_t L = sizeof(V) / sizeof(float);
  V s[MR][NB];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (std::size_t r = 0; r < NB; ++r) s[i][r] = acc[i * NB + r];
  for (std::size_t p = p0; p < p1; p += L) {
    // Ask for each row's bytes kPrefetch ahead of use: the hardware prefetcher alone kept four
    // interleaved rows at about half the memory's read rate here (bench_small_gemm, 1 thread:
    // 4-6 GB/s without, 7-10 GB/s with).
#pragma GCC unroll 4
    for (std::size_t r = 0; r < NB; ++r) __builtin_prefetch(b + r * k + p + kPrefetch / sizeof(T));
    V w[NB];
#pragma GCC unroll 4
    for (std::size_t r = 0; r < NB; ++r) w[r] = load<I>(b + r * k + p);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const V x = load<I>(a + i * k + p);
#pragma GCC unroll 4
      for (std::size_t r = 0; r < NB; ++r) s[i][r] += x * w[r];
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (std::size_t r = 0; r < NB; ++r) acc[i * NB + r] = s[i][r];
}

// `rows` rows of a against the tile's NB rows of b: tiles of MR rows, then of fewer for the rest.
template <class I, std::size_t NB, int MR, class T>
ATTN_INLINE void bt_tiles(std::size_t rows, const float* a, const T* b, std::size_t k, std::size_t p0, std::size_t p1,
                          typename I::V* acc) {
  std::size_t i = 0;
  for (; i + MR <= rows; i += MR) bt_tile<I, NB, MR>(a + i * k, b, k, p0, p1, acc + i * NB);
  if constexpr (MR > 1)
    if (i < rows) bt_tiles<I, NB, MR - 1>(rows - i, a + i * k, b, k, p0, p1, acc + i * NB);
}

// c[i][j .. j + NB) for rows i of a in [0, rows) (rows <= kRows): a at row 0, b at row j, c at (0, j).
template <class I, std::size_t NB, class T>
ATTN_INLINE void bt_block(std::size_t rows, std::size_t n, std::size_t k, const float* a, const T* b, float* c) {
  using V = typename I::V;
  constexpr std::size_t L = sizeof(V) / sizeof(float);
  const std::size_t kv = k - k % L;  // the part of k whole vectors cover
  V acc[kRows * NB];
  for (std::size_t q = 0; q < rows * NB; ++q) acc[q] = V{};
  for (std::size_t p0 = 0; p0 < kv; p0 += kKC)
    bt_tiles<I, NB, I::bt_mr>(rows, a, b, k, p0, std::min(p0 + kKC, kv), acc);
  if (kv < k) {
    // The last k % L values, zero-padded to one more vector step: the same vector arithmetic as
    // the rest (a scalar loop here would be compiled differently for float and bf16 b, and the
    // bf16 kernel would no longer give exactly the float kernel's bits on the same values).
    V a_tail[kRows], b_tail[NB];
    for (std::size_t i = 0; i < rows; ++i) {
      float t[L] = {};
      for (std::size_t p = kv; p < k; ++p) t[p - kv] = a[i * k + p];
      std::memcpy(&a_tail[i], t, sizeof(V));
    }
    for (std::size_t r = 0; r < NB; ++r) {
      float t[L] = {};
      for (std::size_t p = kv; p < k; ++p) t[p - kv] = to_float(b[r * k + p]);
      std::memcpy(&b_tail[r], t, sizeof(V));
    }
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t r = 0; r < NB; ++r) acc[i * NB + r] += a_tail[i] * b_tail[r];
  }
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t r = 0; r < NB; ++r) c[i * n + r] = lane_sum(acc[i * NB + r]);
}

// Columns [j0, j1) of c, all m rows.
template <class I, class T>
ATTN_INLINE void bt_columns(std::size_t m, std::size_t n, std::size_t k, const float* a, const T* b, float* c,
                            std::size_t j0, std::size_t j1) {
  for (std::size_t i0 = 0; i0 < m; i0 += kRows) {
    const std::size_t rows = std::min(kRows, m - i0);
    std::size_t j = j0;
    for (; j + kNB <= j1; j += kNB) bt_block<I, kNB>(rows, n, k, a + i0 * k, b + j * k, c + i0 * n + j);
    for (; j < j1; ++j) bt_block<I, 1>(rows, n, k, a + i0 * k, b + j * k, c + i0 * n + j);
  }
}

// ---- b: c (m, n) = a (m, k) @ b, b (k, n) ----

// Scalar columns use the same tile with V = float.
struct Scalar {
  using V = float;
};
template <>
ATTN_INLINE float load<Scalar>(const float* p) {
  return *p;
}

// c[i][j .. j + NV * L) for MR rows i, over k in [p0, p0 + np): a at (row 0, p0), b at (p0, j),
// c at (0, j). The first stretch (first) starts from 0, later ones from what c holds.
template <class I, int NV, int MR>
ATTN_INLINE void b_tile(const float* a, std::size_t k, const float* b, std::size_t n, std::size_t np, float* c,
                        bool first) {
  using V = typename I::V;
  constexpr std::size_t L = sizeof(V) / sizeof(float);
  V s[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) s[i][v] = first ? V{} : load<I>(c + i * n + v * L);
  for (std::size_t p = 0; p < np; ++p) {
    V w[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) w[v] = load<I>(b + p * n + v * L);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const V x = V{} + a[i * k + p];  // a[i][p] in every lane
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) s[i][v] += x * w[v];
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) std::memcpy(c + i * n + v * L, &s[i][v], sizeof(V));
}

template <class I, int NV, int MR>
ATTN_INLINE void b_tiles(std::size_t rows, const float* a, std::size_t k, const float* b, std::size_t n,
                         std::size_t np, float* c, bool first) {
  std::size_t i = 0;
  for (; i + MR <= rows; i += MR) b_tile<I, NV, MR>(a + i * k, k, b, n, np, c + i * n, first);
  if constexpr (MR > 1)
    if (i < rows) b_tiles<I, NV, MR - 1>(rows - i, a + i * k, k, b, n, np, c + i * n, first);
}

template <class I>
ATTN_INLINE void b_columns(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c,
                           std::size_t j0, std::size_t j1) {
  constexpr std::size_t L = sizeof(typename I::V) / sizeof(float);
  constexpr std::size_t strip = I::b_nv * L;
  for (std::size_t p0 = 0; p0 < k; p0 += kKC) {
    const std::size_t np = std::min(kKC, k - p0);
    const float* ap = a + p0;
    const float* bp = b + p0 * n;
    const bool first = p0 == 0;
    std::size_t j = j0;
    for (; j + strip <= j1; j += strip) b_tiles<I, I::b_nv, I::b_mr>(m, ap, k, bp + j, n, np, c + j, first);
    for (; j + L <= j1; j += L) b_tiles<I, 1, I::b_mr>(m, ap, k, bp + j, n, np, c + j, first);
    for (; j < j1; ++j) b_tiles<Scalar, 1, I::b_mr>(m, ap, k, bp + j, n, np, c + j, first);
  }
}

// ---- the three compiled copies ----

struct Kernels {
  void (*bt)(std::size_t, std::size_t, std::size_t, const float*, const float*, float*, std::size_t, std::size_t);
  void (*bt_bf16)(std::size_t, std::size_t, std::size_t, const float*, const std::uint16_t*, float*, std::size_t,
                  std::size_t);
  void (*b)(std::size_t, std::size_t, std::size_t, const float*, const float*, float*, std::size_t, std::size_t);
  std::size_t b_strip;  // columns of one b tile: threads split n at multiples of it
};

#define ATTN_SMALL_GEMM_COPY(name, target_attr, I)                                                              \
  target_attr void name##_bt(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b,      \
                             float* c, std::size_t j0, std::size_t j1) {                                       \
    bt_columns<I>(m, n, k, a, b, c, j0, j1);                                                                   \
  }                                                                                                            \
  target_attr void name##_bt_bf16(std::size_t m, std::size_t n, std::size_t k, const float* a,                 \
                                  const std::uint16_t* b, float* c, std::size_t j0, std::size_t j1) {          \
    bt_columns<I>(m, n, k, a, b, c, j0, j1);                                                                   \
  }                                                                                                            \
  target_attr void name##_b(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b,       \
                            float* c, std::size_t j0, std::size_t j1) {                                        \
    b_columns<I>(m, n, k, a, b, c, j0, j1);                                                                    \
  }                                                                                                            \
  const Kernels name##_kernels{name##_bt, name##_bt_bf16, name##_b, I::b_nv * sizeof(I::V) / sizeof(float)};

ATTN_SMALL_GEMM_COPY(avx512, __attribute__((target("avx512f,avx2,fma"))), Avx512)
ATTN_SMALL_GEMM_COPY(avx2, __attribute__((target("avx2,fma"))), Avx2)
ATTN_SMALL_GEMM_COPY(sse2, , Sse2)
#undef ATTN_SMALL_GEMM_COPY

const Kernels& kernels_for(SmallGemmIsa isa) {
  static const std::vector<SmallGemmIsa> here = small_gemm_isas();
  if (isa == SmallGemmIsa::best) isa = here.front();
  if (std::find(here.begin(), here.end(), isa) == here.end())
    throw std::invalid_argument(std::string("small_gemm: this CPU does not run the ") + small_gemm_isa_name(isa) +
                                " code");
  switch (isa) {
    case SmallGemmIsa::avx512: return avx512_kernels;
    case SmallGemmIsa::avx2: return avx2_kernels;
    default: return sse2_kernels;
  }
}

// Threads for a product of m * n * k multiply-adds whose n splits at multiples of `align`.
// Starting a thread costs some tens of microseconds; below ~2^18 multiply-adds a thread (about as
// long) the automatic count gives fewer threads.
std::size_t thread_count(const SmallGemmOptions& options, std::size_t m, std::size_t n, std::size_t k,
                         std::size_t align) {
  const std::size_t chunks = (n + align - 1) / align;
  std::size_t t = options.threads;
  if (t == 0) t = std::min(blas_threads(), std::max<std::size_t>(1, (m * n * k) >> 18));
  return std::max<std::size_t>(1, std::min(t, chunks));
}

// Runs work(j0, j1) over contiguous chunks of [0, n) (cut at multiples of align), the first on the
// calling thread. work must not throw. A thread that cannot be started has its chunk computed
// here instead, so the result never depends on whether the system had a thread to spare.
template <class Work>
void over_columns(std::size_t threads, std::size_t n, std::size_t align, const Work& work) {
  const std::size_t blocks = (n + align - 1) / align;
  auto bound = [&](std::size_t t) { return std::min(n, blocks * t / threads * align); };
  if (threads == 1) {
    work(0, n);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);  // everything allocated before the first thread starts
  for (std::size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(std::cref(work), bound(t), bound(t + 1));
    } catch (const std::system_error&) {
      work(bound(t), bound(t + 1));
    }
  }
  work(bound(0), bound(1));
  for (std::thread& th : pool) th.join();
}

template <class T, class Fn>
void run_bt(std::size_t m, std::size_t n, std::size_t k, const float* a, const T* b, float* c,
            const SmallGemmOptions& options, Fn kernel) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    std::fill(c, c + m * n, 0.0f);
    return;
  }
  over_columns(thread_count(options, m, n, k, kNB), n, kNB,
               [&](std::size_t j0, std::size_t j1) { kernel(m, n, k, a, b, c, j0, j1); });
}

}  // namespace

std::vector<SmallGemmIsa> small_gemm_isas() {
  std::vector<SmallGemmIsa> isas;
  __builtin_cpu_init();
  const bool fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (fma && __builtin_cpu_supports("avx512f")) isas.push_back(SmallGemmIsa::avx512);
  if (fma) isas.push_back(SmallGemmIsa::avx2);
  isas.push_back(SmallGemmIsa::baseline);
  return isas;
}

const char* small_gemm_isa_name(SmallGemmIsa isa) {
  switch (isa) {
    case SmallGemmIsa::best: return small_gemm_isa_name(small_gemm_isas().front());
    case SmallGemmIsa::avx512: return "AVX-512";
    case SmallGemmIsa::avx2: return "AVX2";
    case SmallGemmIsa::baseline: return "x86-64 (SSE2)";
  }
  return "?";
}

void small_gemm_bt(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c,
                   const SmallGemmOptions& options) {
  run_bt(m, n, k, a, b, c, options, kernels_for(options.isa).bt);
}

void small_gemm_bt_bf16(std::size_t m, std::size_t n, std::size_t k, const float* a, const std::uint16_t* b,
                        float* c, const SmallGemmOptions& options) {
  run_bt(m, n, k, a, b, c, options, kernels_for(options.isa).bt_bf16);
}

void small_gemm_b(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c,
                  const SmallGemmOptions& options) {
  const Kernels& kern = kernels_for(options.isa);
  if (m == 0 || n == 0) return;
  if (k == 0) {
    std::fill(c, c + m * n, 0.0f);
    return;
  }
  over_columns(thread_count(options, m, n, k, kern.b_strip), n, kern.b_strip,
               [&](std::size_t j0, std::size_t j1) { kern.b(m, n, k, a, b, c, j0, j1); });
}

void small_gemm_bt(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c) {
  small_gemm_bt(m, n, k, a, b, c, SmallGemmOptions{});
}
void small_gemm_bt_bf16(std::size_t m, std::size_t n, std::size_t k, const float* a, const std::uint16_t* b,
                        float* c) {
  small_gemm_bt_bf16(m, n, k, a, b, c, SmallGemmOptions{});
}
void small_gemm_b(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b, float* c) {
  small_gemm_b(m, n, k, a, b, c, SmallGemmOptions{});
}

}  // namespace attn
