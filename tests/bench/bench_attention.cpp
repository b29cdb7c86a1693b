// Times attn's core multi-head attention forward pass at sizes where BLAS matters.
// Prints one line per size: "mha B T d h  best_ms  gflops". run.sh runs PyTorch on the same
// sizes in the same session and puts the two side by side.
//
// Legend: B batch, T tokens, d = d_in = d_out, h heads, d_k = d / h.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <malloc.h>

#include "core/attention.hpp"
#include "core/generator.hpp"
#include "core/heads.hpp"
#include "core/linear.hpp"

using namespace attn;

namespace {

// The fused forward pass the heads lesson narrates, without the printing.
Ten3 forward(const Ten3& x, const Linear& wq, const Linear& wk, const Linear& wv, const Linear& wo,
             std::size_t h, bool causal) {
  const Ten4 q = swap_token_head_axes(split_heads(linear(wq, x), h));  // (B, h, T, d_k)
  const Ten4 k = swap_token_head_axes(split_heads(linear(wk, x), h));  // (B, h, T, d_k)
  const Ten4 v = swap_token_head_axes(split_heads(linear(wv, x), h));  // (B, h, T, d_k)
  const Attention a = scaled_dot_product_attention(q, k, v, causal);
  return linear(wo, merge_heads(swap_token_head_axes(a.context)));     // (B, T, d)
}

}  // namespace

int main(int argc, char** argv) {
  // Keep freed buffers in the heap instead of returning them to the OS: this VM page-faults
  // slowly, and PyTorch's allocator caches its buffers the same way.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  const int reps = argc > 1 ? std::atoi(argv[1]) : 5;
  struct Size {
    std::size_t B, T, d, h;
  };
  const Size sizes[] = {{1, 128, 512, 8}, {1, 512, 1024, 16}, {1, 1024, 1024, 16}, {4, 512, 768, 12}};
  std::printf("# attn core, best of %d; flops = 4 projections + 2 attention matmuls\n", reps);
  for (const Size& s : sizes) {
    TorchGenerator gen(0);
    const Ten3 x = gen.rand(s.B, s.T, s.d);  // (B, T, d)
    const Linear wq = make_linear(gen, s.d, s.d, false), wk = make_linear(gen, s.d, s.d, false),
                 wv = make_linear(gen, s.d, s.d, false), wo = make_linear(gen, s.d, s.d, true);
    double best = 1e30;
    float sink = 0.0f;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      const Ten3 y = forward(x, wq, wk, wv, wo, s.h, true);
      const auto t1 = std::chrono::steady_clock::now();
      sink += y(0, 0, 0);
      best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    const double flops = 2.0 * s.B * s.T * s.d * s.d * 4 + 2.0 * 2.0 * s.B * s.T * s.T * s.d;
    std::printf("mha B=%zu T=%zu d=%zu h=%zu  %9.2f ms  %7.1f GFLOP/s\n", s.B, s.T, s.d, s.h, best,
                flops / (best * 1e6));
    if (sink != sink) std::printf("(NaN in output)\n");  // keeps the result observable
  }
  return 0;
}
