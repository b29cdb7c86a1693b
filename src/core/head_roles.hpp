// What one attention head does, measured: the scores that name head roles in interpretability
// work, from a head's (T, T) attention weights. One definition for every caller: the learn-heads
// lesson's trained model and a real checkpoint's heads (attn model) are scored alike.
//
//   previous   mean over queries t = 1..T-1 of w[t, t-1]    the previous-token head
//   first      mean over queries t = 1..T-1 of w[t, 0]      the weight on the first token (the
//                                                            "attention sink", Xiao et al. 2023)
//   self       mean over queries t = 0..T-1 of w[t, t]
//   entropy    mean over queries t = 0..T-1 of -sum_j w[t, j] log w[t, j]   in nats
//   induction  mean over induction pairs (t, j + 1) of w[t, j + 1]   (Olsson et al. 2022)
//
// An induction pair is a query t whose token occurs exactly once before it, at j, with j + 1 < t:
// an induction head looks at the token that came after the earlier occurrence. On a sequence of
// n random tokens written twice, the pairs are the second copy's positions t with key t - n + 1.
// A score with nothing to average (T = 1, no pair) is NaN.
//
// Scores are sums kept apart from their counts, so that a batch of sequences adds up to the mean
// over every query of the batch, not the mean of per-sequence means.
//
// Legend: T tokens (queries = keys, causal), w one head's weights (T, T), row-major.
#pragma once

#include <cstddef>
#include <vector>

namespace attn {

struct InductionPair {
  std::size_t query = 0, key = 0;  // key = the position after the query token's earlier occurrence
};

// The induction pairs of a token sequence, queries in order.
std::vector<InductionPair> induction_pairs(const std::vector<std::size_t>& ids);

struct HeadRoleScores {
  double previous = 0, first = 0, self = 0, entropy = 0, induction = 0;  // NaN when undefined
};

class HeadRoleSums {
 public:
  // Adds one sequence's (T, T) weights for one head, and its induction pairs.
  template <class F>
  void add(const F* w, std::size_t T, const std::vector<InductionPair>& pairs);
  HeadRoleScores scores() const;

 private:
  double previous_ = 0, first_ = 0, self_ = 0, entropy_ = 0, induction_ = 0;
  std::size_t after_first_ = 0, queries_ = 0, pairs_ = 0;  // queries t >= 1, all queries, pairs
};

// One sequence, one head.
template <class F>
HeadRoleScores head_role_scores(const F* w, std::size_t T, const std::vector<InductionPair>& pairs) {
  HeadRoleSums s;
  s.add(w, T, pairs);
  return s.scores();
}

}  // namespace attn
