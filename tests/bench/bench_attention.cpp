// attn's side of the benchmark against PyTorch (run.sh runs both and puts them side by side).
//
//   bench_attention --list             the case ids, one a line, in table order
//   bench_attention --about            the machine line: OpenBLAS's build, kernel and threads
//   bench_attention CASE [reps]        runs one case, prints one line:
//                                      CASE <tab> best wall ms <tab> best CPU ms (all threads)
//                                      <tab> peak bytes allocated by the call <tab> peak RSS of
//                                      the process in KB
//
// One case per process, so that the process's peak RSS (getrusage) belongs to that case alone.
// Every heap allocation goes through the counting operator new below, which gives the exact
// peak the timed call allocated on top of what was already held (its inputs); OpenBLAS's own
// buffers (mmap'd once) show only in the RSS. bench_torch.py runs the same cases by the same ids.
//
// Cases (every one causal):
//   core-T      the attention core at Llama-3.2-3B's head sizes, B 1, h 24, d_k 128: q, k, v in,
//               context out (attention_context)
//   core1w-T    the same with one worker thread and OpenBLAS threading each sgemm instead
//   corem-T     the same through the materialised path (scaled_dot_product_attention)
//   gqa-T       grouped-query core: 24 query heads read 8 key/value heads in place
//   mha-B-T-d-h the whole multi-head forward pass: three projections, the core on the merged
//               (B, T, d) layout, out_proj with bias
//   llama-T     the same at Llama-3.2-3B's attention sizes: d 3072, 24 heads, 8 key/value heads,
//               no bias
//   tiled-T, mat-T, fast-T   B 1, h 4, d_k 64 at large T: flash_attention (64 x 64 tiles), the
//               materialised path, and attention_context
//
// Legend: B batch, T tokens, d model width, h query heads, h_kv key/value heads, d_k head width.
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <malloc.h>

#include "core/attention.hpp"
#include "core/fast_attention.hpp"
#include "core/flash.hpp"
#include "core/generator.hpp"
#include "core/linear.hpp"
#include "core/matmul.hpp"

// The counting allocator: current and peak bytes held through operator new.
namespace {
std::atomic<std::size_t> g_held{0}, g_peak{0};

void* counted_alloc(std::size_t n) {
  // A size header in front of each block, so that delete knows what it frees.
  void* p = std::malloc(n + 16);
  if (!p) throw std::bad_alloc();
  *static_cast<std::size_t*>(p) = n;
  const std::size_t now = g_held += n;
  std::size_t peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
  return static_cast<char*>(p) + 16;
}

void counted_free(void* q) {
  if (!q) return;
  void* p = static_cast<char*>(q) - 16;
  g_held -= *static_cast<std::size_t*>(p);
  std::free(p);
}
}  // namespace

void* operator new(std::size_t n) { return counted_alloc(n); }
void* operator new[](std::size_t n) { return counted_alloc(n); }
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_free(p); }

using namespace attn;

namespace {

// torch.randn(B, h, T, d), drawn row-major.
Ten4 randn4(TorchGenerator& gen, std::size_t B, std::size_t h, std::size_t T, std::size_t d) {
  const Mat flat = gen.randn(B * h * T, d);  // (B*h*T, d)
  Ten4 t = xt::empty<float>({B, h, T, d});   // (B, h, T, d)
  std::copy(flat.begin(), flat.end(), t.begin());
  return t;
}

// The timed call of a case; its result is read so that nothing is optimised away.
using Call = std::function<float()>;

struct Case {
  std::string id;
  std::function<Call()> setup;  // builds the inputs (not timed), returns the timed call
  int reps;                     // at most this many repetitions (large cases take seconds)
};

// The attention core at (B, h, h_kv, T, d_k): fast, fast with one worker, or materialised.
enum class Core { Fast, OneWorker, Materialised, Tiled };
Call core_case(std::size_t B, std::size_t h, std::size_t h_kv, std::size_t T, std::size_t d_k, Core how) {
  TorchGenerator gen(0);
  auto q = std::make_shared<Ten4>(randn4(gen, B, h, T, d_k));     // (B, h, T, d_k)
  auto k = std::make_shared<Ten4>(randn4(gen, B, h_kv, T, d_k));  // (B, h_kv, T, d_k)
  auto v = std::make_shared<Ten4>(randn4(gen, B, h_kv, T, d_k));  // (B, h_kv, T, d_k)
  return [=]() -> float {
    switch (how) {
      case Core::Fast: {
        FastAttentionOptions o;
        if (const char* b = std::getenv("ATTN_BENCH_BLOCK")) o.block = std::atoi(b);
        return attention_context(*q, *k, *v, true, o)(0, 0, T - 1, 0);
      }
      case Core::OneWorker: {
        FastAttentionOptions one;
        one.threads = 1;
        return attention_context(*q, *k, *v, true, one)(0, 0, T - 1, 0);
      }
      case Core::Materialised:
        return scaled_dot_product_attention(*q, *k, *v, true).context(0, 0, T - 1, 0);
      case Core::Tiled:
        return flash_attention(*q, *k, *v, true, 64, 64).context(0, 0, T - 1, 0);
    }
    return 0.0f;
  };
}

// The whole causal forward pass: projections, the core on the merged layout, out_proj.
Call forward_case(std::size_t B, std::size_t T, std::size_t d, std::size_t h, std::size_t h_kv, bool bias) {
  TorchGenerator gen(0);
  const std::size_t d_kv = d / h * h_kv;
  auto x = std::make_shared<Ten3>(gen.rand(B, T, d));  // (B, T, d)
  auto wq = std::make_shared<Linear>(make_linear(gen, d, d, false));
  auto wk = std::make_shared<Linear>(make_linear(gen, d, d_kv, false));
  auto wv = std::make_shared<Linear>(make_linear(gen, d, d_kv, false));
  auto wo = std::make_shared<Linear>(make_linear(gen, d, d, bias));
  return [=]() -> float {
    const Ten3 queries = linear(*wq, *x);  // (B, T, d)
    const Ten3 keys = linear(*wk, *x);     // (B, T, d_kv)
    const Ten3 values = linear(*wv, *x);   // (B, T, d_kv)
    const Ten3 context = attention_context_merged(queries, keys, values, h, h_kv, true);  // (B, T, d)
    return linear(*wo, context)(0, T - 1, 0);  // (B, T, d)
  };
}

// CPU time of the whole process (every thread), in ms: on a shared machine it moves less than
// the wall clock, since time spent waiting for a core is not counted.
double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

std::vector<Case> cases() {
  std::vector<Case> all;
  for (std::size_t T : {512, 1024, 2048})
    all.push_back({"core-" + std::to_string(T), [T] { return core_case(1, 24, 24, T, 128, Core::Fast); }, 5});
  for (std::size_t T : {512, 1024, 2048})
    all.push_back({"core1w-" + std::to_string(T), [T] { return core_case(1, 24, 24, T, 128, Core::OneWorker); }, 5});
  for (std::size_t T : {512, 1024, 2048})
    all.push_back({"corem-" + std::to_string(T), [T] { return core_case(1, 24, 24, T, 128, Core::Materialised); }, 3});
  for (std::size_t T : {512, 1024, 2048})
    all.push_back({"gqa-" + std::to_string(T), [T] { return core_case(1, 24, 8, T, 128, Core::Fast); }, 5});
  struct Mha {
    std::size_t B, T, d, h;
  };
  for (const Mha& m : {Mha{1, 128, 512, 8}, Mha{1, 512, 1024, 16}, Mha{1, 1024, 1024, 16}, Mha{4, 512, 768, 12}})
    all.push_back({"mha-" + std::to_string(m.B) + "-" + std::to_string(m.T) + "-" + std::to_string(m.d) + "-" +
                       std::to_string(m.h),
                   [m] { return forward_case(m.B, m.T, m.d, m.h, m.h, true); }, 5});
  for (std::size_t T : {512, 1024, 2048})
    all.push_back({"llama-" + std::to_string(T), [T] { return forward_case(1, T, 3072, 24, 8, false); }, 3});
  for (std::size_t T : {4096, 8192}) {
    all.push_back({"tiled-" + std::to_string(T), [T] { return core_case(1, 4, 4, T, 64, Core::Tiled); }, 2});
    all.push_back({"mat-" + std::to_string(T), [T] { return core_case(1, 4, 4, T, 64, Core::Materialised); }, 2});
    all.push_back({"fast-" + std::to_string(T), [T] { return core_case(1, 4, 4, T, 64, Core::Fast); }, 2});
  }
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  // Keep freed buffers in the heap instead of returning them to the OS: this VM page-faults
  // slowly. attn's main does the same (core/heap.hpp); run.sh gives PyTorch this policy too, through
  // glibc's MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_ (its CPU allocator is plain malloc).
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  const std::vector<Case> all = cases();
  const std::string what = argc > 1 ? argv[1] : "--list";
  if (what == "--list") {
    for (const Case& c : all) std::printf("%s\n", c.id.c_str());
    return 0;
  }
  if (what == "--about") {
    std::printf("%s; attention_context's row softmax compiled for %s\n", blas_description().c_str(),
                fast_attention_isa_name(FastAttentionIsa::best));
    return 0;
  }
  const auto found = std::find_if(all.begin(), all.end(), [&](const Case& c) { return c.id == what; });
  if (found == all.end()) {
    std::fprintf(stderr, "bench_attention: unknown case '%s' (--list names them)\n", what.c_str());
    return 2;
  }
  const int reps = std::min(found->reps, argc > 2 ? std::max(1, std::atoi(argv[2])) : found->reps);
  const Call call = found->setup();
  double best = 1e30, best_cpu = 1e30;
  std::size_t peak = 0;
  float sink = 0.0f;
  for (int r = 0; r < reps; ++r) {
    const std::size_t before = g_held.load();
    g_peak = before;
    const double c0 = cpu_ms();
    const auto t0 = std::chrono::steady_clock::now();
    sink += call();
    const auto t1 = std::chrono::steady_clock::now();
    best_cpu = std::min(best_cpu, cpu_ms() - c0);
    best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
    peak = std::max(peak, g_peak.load() - before);
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("%s\t%.2f\t%.2f\t%zu\t%ld%s\n", found->id.c_str(), best, best_cpu, peak, usage.ru_maxrss,
              sink != sink ? "\tNaN in the output" : "");
  return 0;
}
