// The induction task and its head measurements (see induction.hpp).
//
// Legend: N sequences, T tokens read, V vocabulary, h heads, L stretch length.
#include "lesson_kit/induction.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/cross_entropy.hpp"
#include "core/head_roles.hpp"

namespace attn {

InductionBatch make_induction_batch(TorchGenerator& g, std::size_t n, const InductionTask& task) {
  const std::size_t T = task.context, V = task.vocab;
  if (2 * task.max_repeat > T || task.min_repeat < 2 || task.min_repeat > task.max_repeat)
    throw std::invalid_argument("make_induction_batch: two stretches of up to " + std::to_string(task.max_repeat) +
                                " letters do not fit in " + std::to_string(T + 1));
  InductionBatch b;
  b.ids = xt::empty<std::size_t>({n, T + 1});  // (N, T + 1)
  const auto draws = g.randint(0, V, n * (T + 1));
  std::copy(draws.begin(), draws.end(), b.ids.begin());
  b.lens = g.randint(task.min_repeat, task.max_repeat + 1, n);
  b.inputs = xt::empty<std::size_t>({n, T});   // (N, T)
  b.targets = xt::empty<std::size_t>({n, T});  // (N, T)
  for (std::size_t s = 0; s < n; ++s) {
    const std::size_t L = b.lens[s], start = T + 1 - 2 * L, copy = T + 1 - L;
    for (std::size_t i = 0; i < L; ++i) b.ids(s, copy + i) = b.ids(s, start + i);
    for (std::size_t t = 0; t < T; ++t) {
      b.inputs(s, t) = b.ids(s, t);
      b.targets(s, t) = t >= copy ? b.ids(s, t + 1) : kIgnoreTarget;
    }
  }
  return b;
}

char induction_letter(std::size_t id) {
  return id < 26 ? static_cast<char>('a' + id) : static_cast<char>('A' + (id - 26));
}

namespace {

// Calls visit(n, t, j) for every induction query: t on the second copy of sequence n whose letter
// occurs exactly once before t, at j, with j + 1 < t.
template <class F>
void for_each_induction_query(const InductionBatch& b, F visit) {
  const std::size_t N = b.inputs.shape()[0], T = b.inputs.shape()[1];
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t t = T + 1 - b.lens[n]; t < T; ++t) {
      std::size_t seen = 0, j = 0;
      for (std::size_t k = 0; k < t; ++k)
        if (b.inputs(n, k) == b.inputs(n, t)) ++seen, j = k;
      if (seen == 1 && j + 1 < t) visit(n, t, j);
    }
}

}  // namespace

HeadScores head_scores(const xt::xtensor<double, 4>& w, std::size_t head, const InductionBatch& b) {
  const std::size_t N = b.inputs.shape()[0], h = w.shape()[1], T = b.inputs.shape()[1];
  std::vector<std::vector<InductionPair>> pairs(N);  // each sequence's induction queries and keys
  for_each_induction_query(b, [&](std::size_t n, std::size_t t, std::size_t j) { pairs[n].push_back({t, j + 1}); });
  HeadRoleSums sums;  // the definitions every head score uses (core/head_roles.hpp)
  for (std::size_t n = 0; n < N; ++n) sums.add(w.data() + (n * h + head) * T * T, T, pairs[n]);
  const HeadRoleScores r = sums.scores();
  return {r.previous, std::isnan(r.induction) ? 0.0 : r.induction, r.self};
}

std::vector<std::pair<std::size_t, std::size_t>> induction_cells(const InductionBatch& b, std::size_t n) {
  std::vector<std::pair<std::size_t, std::size_t>> cells;
  for_each_induction_query(b, [&](std::size_t m, std::size_t t, std::size_t j) {
    if (m == n) cells.emplace_back(t, j + 1);
  });
  return cells;
}

HeadScores uniform_head_scores(const InductionBatch& b) {
  const std::size_t T = b.inputs.shape()[1];
  double prev = 0, self = 0, ind = 0;
  std::size_t n_ind = 0;
  for (std::size_t t = 0; t < T; ++t) {  // query t sees keys 0..t, each with weight 1 / (t + 1)
    self += 1.0 / static_cast<double>(t + 1);
    if (t >= 1) prev += 1.0 / static_cast<double>(t + 1);
  }
  for_each_induction_query(b, [&](std::size_t, std::size_t t, std::size_t) { ind += 1.0 / static_cast<double>(t + 1), ++n_ind; });
  return {prev / static_cast<double>(T - 1), n_ind ? ind / static_cast<double>(n_ind) : 0.0, self / static_cast<double>(T)};
}

double next_letter_accuracy(const xt::xtensor<double, 3>& logits, const Ids& targets) {
  const std::size_t N = targets.shape()[0], T = targets.shape()[1], V = logits.shape()[2];
  std::size_t right = 0, graded = 0;
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t t = 0; t < T; ++t) {
      if (targets(n, t) == kIgnoreTarget) continue;
      const double* z = logits.data() + (n * T + t) * V;
      right += static_cast<std::size_t>(std::max_element(z, z + V) - z) == targets(n, t);
      ++graded;
    }
  return graded ? static_cast<double>(right) / static_cast<double>(graded) : 0.0;
}

}  // namespace attn
