// Few rows times a large weight: OpenBLAS sgemm against core/small_gemm's kernels (float32 and
// bf16 weights), at Llama-3.2-3B's projection shapes, 1 and 2 threads. This is what a short
// prompt through a real model spends its time on (small_gemm.hpp says why).
//
//   build (-DATTN_BENCH=ON)/tests/bench/bench_small_gemm [reps [M ...]]   (default: 7 reps, M 1 9 16 64)
//
// Every repetition reads its weight from a different place in a 640 MB pool (1.3 GB with the bf16
// pool), more than the last-level cache reported here (512 MB), so each weight comes from memory
// as it does in a real forward pass, where every layer has its own. Times are medians of `reps`
// repetitions after one warm-up; GFLOP/s = 2 m n k / time; GB/s = weight bytes / time (the
// weight dominates what is read: a and c are at most 64 rows). The first lines measure a plain
// streaming read of the pool (the memory floor on this machine). The machine may be shared:
// rerun and compare rather than trusting one figure.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/heap.hpp"
#include "core/matmul.hpp"
#include "core/small_gemm.hpp"

namespace {

struct Shape {
  const char* name;
  std::size_t n, k;  // weight (n, k), as nn.Linear stores it: out, in
};

// Llama-3.2-3B: hidden 3072, intermediate 8192, 24 heads and 8 kv heads of 128.
const Shape kShapes[] = {{"q_proj/o_proj", 3072, 3072},
                         {"k_proj/v_proj", 1024, 3072},
                         {"gate/up_proj", 8192, 3072},
                         {"down_proj", 3072, 8192}};
// Per layer: q, k, v, o, gate, up, down; 28 layers.
const int kPerLayer[] = {2, 2, 2, 1};
constexpr int kLayers = 28;

constexpr std::size_t kPool = std::size_t{160} << 20;  // float32 values: 640 MB (the bf16 pool holds twice as many)

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// Median seconds of f(rep) over reps repetitions, after one warm-up call.
double time_median(int reps, const std::function<void(int)>& f) {
  f(reps);
  std::vector<double> s;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f(r);
    s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(s);
}

std::uint32_t next(std::uint64_t& state) {
  state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  return static_cast<std::uint32_t>(state >> 33);
}

}  // namespace

int main(int argc, char** argv) {
  attn::keep_freed_memory();
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
  std::vector<std::size_t> ms;
  for (int i = 2; i < argc; ++i) ms.push_back(static_cast<std::size_t>(std::atoll(argv[i])));
  if (ms.empty()) ms = {1, 9, 16, 64};

  // The bf16 pool holds twice as many values, so that it too is larger than the 512 MB cache.
  std::vector<float> pool(kPool);
  std::vector<std::uint16_t> pool16(2 * kPool);
  std::uint64_t state = 42;
  for (std::size_t i = 0; i < pool16.size(); ++i) {
    const float x = static_cast<float>(next(state) >> 8) * (2.0f / 16777216.0f) - 1.0f;  // U(-1, 1)
    if (i < pool.size()) pool[i] = x;
    std::uint32_t bits;
    std::memcpy(&bits, &x, 4);
    pool16[i] = static_cast<std::uint16_t>(bits >> 16);
  }
  std::printf("bench_small_gemm: %s; small_gemm runs %s; median of %d; machine shared with other builds\n",
              attn::blas_description().c_str(), attn::small_gemm_isa_name(attn::SmallGemmIsa::best), reps);

  // The floor: summing the pool (each thread its half), as bytes per second.
  for (std::size_t threads : {1, 2}) {
    const std::size_t chunk = 64 << 20;  // 256 MB of float32 per repetition
    volatile float sink = 0.0f;
    const double s = time_median(reps, [&](int r) {
      const float* base = pool.data() + (static_cast<std::size_t>(r) * chunk) % (pool.size() - chunk);
      std::vector<float> part(threads, 0.0f);
      auto sum = [&](std::size_t t) {
        float acc[16] = {};
        const std::size_t lo = chunk * t / threads, hi = chunk * (t + 1) / threads;
        for (std::size_t i = lo; i + 16 <= hi; i += 16)
          for (int l = 0; l < 16; ++l) acc[l] += base[i + l];
        for (float x : acc) part[t] += x;
      };
      std::vector<std::thread> pool_threads;
      for (std::size_t t = 1; t < threads; ++t) pool_threads.emplace_back(sum, t);
      sum(0);
      for (auto& th : pool_threads) th.join();
      for (float x : part) sink = sink + x;
    });
    std::printf("memory read (sum of 256 MB), %zu thread%s: %.1f GB/s\n", threads, threads > 1 ? "s" : "",
                4.0 * chunk / s / 1e9);
  }

  std::printf("\n| shape (n x k) | M | threads | sgemm ms | GFLOP/s | GB/s | small f32 ms | GFLOP/s | GB/s | small bf16 ms | GFLOP/s | GB/s |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  // Per (M, threads): one Llama-3.2-3B layer's projections, summed, for the 28-layer projection.
  std::vector<double> layer(ms.size() * 2 * 3, 0.0);
  for (std::size_t si = 0; si < std::size(kShapes); ++si) {
    const Shape& sh = kShapes[si];
    const std::size_t nk = sh.n * sh.k;
    // Where repetition r finds its weight: about 128 MB (256 MB in bf16) after the last one's.
    auto weight = [&](int r) { return (static_cast<std::size_t>(r) * 7919 * 4096 % (pool.size() - nk)) & ~std::size_t{15}; };
    auto weight16 = [&](int r) { return (static_cast<std::size_t>(r) * 2 * 7919 * 4096 % (pool16.size() - nk)) & ~std::size_t{15}; };
    for (std::size_t mi = 0; mi < ms.size(); ++mi) {
      const std::size_t m = ms[mi];
      std::vector<float> a(m * sh.k), c(m * sh.n);
      for (float& x : a) x = static_cast<float>(next(state) >> 8) * (2.0f / 16777216.0f) - 1.0f;
      for (std::size_t threads : {1, 2}) {
        attn::BlasThreadsScope scope(threads);
        attn::SmallGemmOptions opt;
        opt.threads = threads;
        const double t_blas = time_median(reps, [&](int r) {
          attn::sgemm(m, sh.n, sh.k, 1.0f, a.data(), sh.k, pool.data() + weight(r), sh.k, true, 0.0f, c.data(), sh.n);
        });
        const double t_f32 = time_median(
            reps, [&](int r) { attn::small_gemm_bt(m, sh.n, sh.k, a.data(), pool.data() + weight(r), c.data(), opt); });
        const double t_bf16 = time_median(reps, [&](int r) {
          attn::small_gemm_bt_bf16(m, sh.n, sh.k, a.data(), pool16.data() + weight16(r), c.data(), opt);
        });
        const double flop = 2.0 * m * nk;
        std::printf("| %s (%zu x %zu) | %zu | %zu | %.2f | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f | %.1f | %.1f |\n", sh.name,
                    sh.n, sh.k, m, threads, t_blas * 1e3, flop / t_blas / 1e9, 4.0 * nk / t_blas / 1e9, t_f32 * 1e3,
                    flop / t_f32 / 1e9, 4.0 * nk / t_f32 / 1e9, t_bf16 * 1e3, flop / t_bf16 / 1e9,
                    2.0 * nk / t_bf16 / 1e9);
        std::fflush(stdout);
        double* row = &layer[(mi * 2 + (threads - 1)) * 3];
        row[0] += kPerLayer[si] * t_blas;
        row[1] += kPerLayer[si] * t_f32;
        row[2] += kPerLayer[si] * t_bf16;
      }
    }
  }
  std::printf("\nLlama-3.2-3B's projections, 28 layers (the sum of the medians above x 28):\n\n");
  std::printf("| M | threads | sgemm s | small f32 s | small bf16 s |\n|---|---|---|---|---|\n");
  for (std::size_t mi = 0; mi < ms.size(); ++mi)
    for (std::size_t threads : {1, 2}) {
      const double* row = &layer[(mi * 2 + (threads - 1)) * 3];
      std::printf("| %zu | %zu | %.2f | %.2f | %.2f |\n", ms[mi], threads, kLayers * row[0], kLayers * row[1],
                  kLayers * row[2]);
    }
  return 0;
}
