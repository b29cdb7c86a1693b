// The induction task the learn-heads lesson trains on, and the measurements that say which head
// learned which job. Kept apart from the lesson so that the tests can draw the same data and
// apply the same measurements.
//
// A sequence is T + 1 letters: uniform random letters, then the last 2L positions overwritten by a
// stretch of L letters written twice. Drawn as PyTorch draws them (docs/learn-heads.md):
//   ids = torch.randint(0, V, (N, T + 1), generator=g); lens = torch.randint(lo, hi + 1, (N,), generator=g)
//   for n: ids[n, T + 1 - L:] = ids[n, T + 1 - 2L : T + 1 - L]
// The model reads the first T letters and predicts the next one at each position; only the
// second copy after its first letter is graded, because only there can the next letter be known.
//
// Legend: N sequences, T tokens read, V vocabulary, h heads, L stretch length.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/embedding.hpp"
#include "core/generator.hpp"
#include "core/tensor.hpp"

namespace attn {

struct InductionTask {
  std::size_t vocab = 32;     // V: letters a..z, A..F
  std::size_t context = 24;   // T: letters the model reads
  std::size_t min_repeat = 6;  // L is drawn from min_repeat..max_repeat
  std::size_t max_repeat = 11;
};

struct InductionBatch {
  Ids ids;                        // (N, T + 1)
  std::vector<std::size_t> lens;  // (N,) the L of each sequence
  Ids inputs;                     // (N, T)  ids[:, :T]
  Ids targets;                    // (N, T)  ids[:, 1:] on the second copy, kIgnoreTarget elsewhere
};

InductionBatch make_induction_batch(TorchGenerator& g, std::size_t n, const InductionTask& task = {});

// 0 -> 'a', 25 -> 'z', 26 -> 'A'.
char induction_letter(std::size_t id);

// What one head does on a batch, as the mean weight it puts on the key its job names, with the
// definitions of core/head_roles.hpp (attn model scores a checkpoint's heads with the same code):
//   previous:  key t - 1, over every query t >= 1;
//   induction: key j + 1, where j is the one earlier position holding the query's own letter,
//              over the queries on the second copies whose letter occurs exactly once before them
//              (0 when there is none);
//   self:      key t itself.
struct HeadScores {
  double previous = 0, induction = 0, self = 0;
};
// attn_weights (N, h, T, T) of one layer, for head `head`.
HeadScores head_scores(const xt::xtensor<double, 4>& attn_weights, std::size_t head, const InductionBatch& batch);

// The cells the induction score averages over in sequence n: (query t, key j + 1) for each
// induction query t, in order of t. The lesson marks them on its heatmaps.
std::vector<std::pair<std::size_t, std::size_t>> induction_cells(const InductionBatch& batch, std::size_t n);

// The same scores for a head that spreads its weight evenly over every key it may see.
HeadScores uniform_head_scores(const InductionBatch& batch);

// The share of graded positions whose largest logit is the right letter; logits (N, T, V).
double next_letter_accuracy(const xt::xtensor<double, 3>& logits, const Ids& targets);

}  // namespace attn
