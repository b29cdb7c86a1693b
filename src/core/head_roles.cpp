// Head role scores (head_roles.hpp).
//
// Legend: T tokens, w one head's weights (T, T), row-major.
#include "core/head_roles.hpp"

#include <cmath>
#include <limits>

namespace attn {

std::vector<InductionPair> induction_pairs(const std::vector<std::size_t>& ids) {
  std::vector<InductionPair> pairs;
  for (std::size_t t = 0; t < ids.size(); ++t) {
    std::size_t seen = 0, j = 0;
    for (std::size_t k = 0; k < t; ++k)
      if (ids[k] == ids[t]) ++seen, j = k;
    if (seen == 1 && j + 1 < t) pairs.push_back({t, j + 1});
  }
  return pairs;
}

template <class F>
void HeadRoleSums::add(const F* w, std::size_t T, const std::vector<InductionPair>& pairs) {
  for (std::size_t t = 0; t < T; ++t) {
    const F* row = w + t * T;
    self_ += row[t];
    if (t >= 1) {
      previous_ += row[t - 1];
      first_ += row[0];
    }
    double e = 0;
    for (std::size_t j = 0; j <= t; ++j)
      if (row[j] > 0) e -= double(row[j]) * std::log(double(row[j]));
    entropy_ += e;
  }
  for (const InductionPair& p : pairs) induction_ += w[p.query * T + p.key];
  after_first_ += T > 0 ? T - 1 : 0;
  queries_ += T;
  pairs_ += pairs.size();
}

HeadRoleScores HeadRoleSums::scores() const {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto mean = [&](double sum, std::size_t n) { return n ? sum / static_cast<double>(n) : nan; };
  return {mean(previous_, after_first_), mean(first_, after_first_), mean(self_, queries_), mean(entropy_, queries_),
          mean(induction_, pairs_)};
}

template void HeadRoleSums::add<float>(const float*, std::size_t, const std::vector<InductionPair>&);
template void HeadRoleSums::add<double>(const double*, std::size_t, const std::vector<InductionPair>&);

}  // namespace attn
