// Times one training step of the learn-heads model (forward, loss, backward, Adam update) at the
// lesson's sizes, in float64 as the lesson trains and in float32, and the lesson's whole 300-step
// run. bench_train.py times the same step in PyTorch; run_train.sh runs both in one session.
// Prints "step <dtype>  best_ms  median_ms".
//
// Legend: B batch 32, T tokens 24, V vocabulary 32, d width 32, h heads 2, 2 layers.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <malloc.h>

#include "core/tiny_lm.hpp"
#include "lesson_kit/induction.hpp"

using namespace attn;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

template <class T>
void bench(const char* dtype, const TinyLmT<T>& start, int reps) {
  TinyLmT<T> model = start;
  AdamSettings s;
  s.lr = 0.01;
  AdamT<T> adam(s);
  TorchGenerator data(2);
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    const InductionBatch b = make_induction_batch(data, 32);  // drawn outside the timed step
    const double t0 = now();
    const TinyLmForward<T> f = tiny_lm_forward(model, b.inputs);
    const T loss = tiny_lm_loss(f, b.targets);
    adam.step(tiny_lm_params(model, tiny_lm_backward(model, f, b.targets).params));
    ms.push_back((now() - t0) * 1e3);
    if (!(loss == loss)) std::abort();
  }
  std::sort(ms.begin(), ms.end());
  std::printf("step %-8s %8.3f %8.3f\n", dtype, ms.front(), ms[ms.size() / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  mallopt(M_MMAP_THRESHOLD, 64 << 20);  // as attn's main() does
  mallopt(M_TRIM_THRESHOLD, 128 << 20);
  const int reps = argc > 1 ? std::atoi(argv[1]) : 100;
  TorchGenerator gen(1);
  const TinyLm model = make_tiny_lm(gen, 32, 24, 32, 2, 2);
  std::printf("# attn, one training step of learn-heads (B 32, T 24, d 32, 2 x 2 heads), %d reps, ms\n", reps);
  bench<double>("float64", to_double(model), reps);
  bench<float>("float32", model, reps);
  // The lesson's training loop, whole: 300 steps with their data.
  TinyLmT<double> m = to_double(model);
  AdamSettings s;
  s.lr = 0.01;
  AdamT<double> adam(s);
  TorchGenerator data(2);
  const double t0 = now();
  for (int k = 0; k < 300; ++k) {
    const InductionBatch b = make_induction_batch(data, 32);
    const TinyLmForward<double> f = tiny_lm_forward(m, b.inputs);
    adam.step(tiny_lm_params(m, tiny_lm_backward(m, f, b.targets).params));
  }
  std::printf("run300 float64 %8.1f\n", (now() - t0) * 1e3);
}
