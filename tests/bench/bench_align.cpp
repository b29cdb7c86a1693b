// Times one training step of `attn lesson align` at the lesson's sizes: a batch of 16
// sentences forward, the mean cross-entropy, the backward pass and one Adam update. run.sh
// times the same step in PyTorch (bench_align_torch.py, the model of docs/align_torch.py) in
// the same session. Prints "align-step  best_ms  median_ms".
//
// Legend: N target words of a batch, V target vocabulary.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/adam.hpp"
#include "core/bahdanau_model.hpp"
#include "core/cross_entropy.hpp"
#include "lesson_kit/align_task.hpp"

using namespace attn;

namespace {

std::vector<std::size_t> decoder_inputs(const AlignPair& p) {
  std::vector<std::size_t> in = {align_start_id()};
  in.insert(in.end(), p.tgt.begin(), p.tgt.end() - 1);
  return in;
}

// The lesson's step: forward, loss, backward, update.
float train_step(BahdanauModel& m, Adam& adam, const AlignData& data, std::size_t t) {
  BahdanauModel grads = zeros_like(m);
  std::vector<BahdanauPass> passes;
  std::vector<std::size_t> targets;
  std::vector<const AlignPair*> batch;
  for (std::size_t k = 0; k < 16; ++k) {
    batch.push_back(&data.train[(16 * t + k) % data.train.size()]);
    passes.push_back(bahdanau_forward(m, batch.back()->src, decoder_inputs(*batch.back())));
    targets.insert(targets.end(), batch.back()->tgt.begin(), batch.back()->tgt.end());
  }
  const std::size_t V = m.vocab_out();
  Mat logits = xt::empty<float>({targets.size(), V});  // (N, V)
  std::size_t row = 0;
  for (const auto& p : passes) {
    std::copy(p.logits.begin(), p.logits.end(), logits.data() + row * V);
    row += p.logits.shape()[0];
  }
  const float loss = cross_entropy(logits, targets);
  const Mat d = grad::cross_entropy_backward(logits, targets);  // (N, V)
  row = 0;
  for (std::size_t b = 0; b < batch.size(); ++b) {
    const std::size_t T = batch[b]->tgt.size();
    Mat rows = xt::empty<float>({T, V});  // (T, V)
    std::copy(d.data() + row * V, d.data() + (row + T) * V, rows.data());
    bahdanau_backward(m, passes[b], batch[b]->src, decoder_inputs(*batch[b]), rows, grads);
    row += T;
  }
  std::vector<Param> params;
  const auto p = named_parameters(m), g = named_parameters(grads);
  for (std::size_t k = 0; k < p.size(); ++k) params.push_back({p[k].name, p[k].data, g[k].data, p[k].size});
  adam.step(params);
  return loss;
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 50;
  TorchGenerator gen(2014);
  const AlignData data = align_make_data(gen, 64, 1024);
  BahdanauModel m = make_bahdanau_model(gen, align_source_words().size(), align_target_words().size(), 16, 16, 16);
  Adam adam(AdamSettings{0.01});
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    train_step(m, adam, data, static_cast<std::size_t>(r));
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("# attn, one training step of lesson align (batch 16, d 16), %d steps\n", reps);
  std::printf("align-step  best %7.3f ms  median %7.3f ms\n", ms.front(), ms[ms.size() / 2]);
}
