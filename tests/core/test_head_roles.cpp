// Head role scores (core/head_roles.hpp) on weights small enough to score by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/head_roles.hpp"

using attn::HeadRoleScores;
using attn::HeadRoleSums;
using attn::InductionPair;

TEST_CASE("induction pairs: a token seen exactly once before, not just before") {
  // 7 8 7: position 2 saw 7 at 0, so its key is 1. 5 5: the token before is not an induction pair.
  const auto pairs = attn::induction_pairs({7, 8, 7, 5, 5, 7});
  REQUIRE(pairs.size() == 1);
  CHECK(pairs[0].query == 2);
  CHECK(pairs[0].key == 1);  // position 5's 7 was seen twice: no pair
  CHECK(attn::induction_pairs({1, 2, 3}).empty());
  // A token written twice: every position of the second copy, key = query - n + 1.
  const auto twice = attn::induction_pairs({9, 1, 2, 3, 1, 2, 3});
  REQUIRE(twice.size() == 3);
  for (const InductionPair& p : twice) CHECK(p.key == p.query - 3 + 1);
}

TEST_CASE("head role scores of a 3 x 3 causal head, by hand") {
  const std::vector<double> w = {1.0, 0.0, 0.0,  //
                                 0.5, 0.5, 0.0,  //
                                 0.2, 0.3, 0.5};
  const HeadRoleScores s = attn::head_role_scores(w.data(), 3, {{2, 1}});
  CHECK(s.previous == doctest::Approx((0.5 + 0.3) / 2));
  CHECK(s.first == doctest::Approx((0.5 + 0.2) / 2));
  CHECK(s.self == doctest::Approx((1.0 + 0.5 + 0.5) / 3));
  const double e2 = -(0.2 * std::log(0.2) + 0.3 * std::log(0.3) + 0.5 * std::log(0.5));
  CHECK(s.entropy == doctest::Approx((0.0 + std::log(2.0) + e2) / 3));
  CHECK(s.induction == doctest::Approx(0.3));
  // Without pairs, and with one token, the undefined scores are NaN.
  CHECK(std::isnan(attn::head_role_scores(w.data(), 3, {}).induction));
  const std::vector<float> one = {1.0f};
  const HeadRoleScores single = attn::head_role_scores(one.data(), 1, {});
  CHECK(std::isnan(single.previous));
  CHECK(std::isnan(single.first));
  CHECK(single.self == 1.0);
  CHECK(single.entropy == 0.0);
}

TEST_CASE("a batch's scores average over every query, not over sequences") {
  // Sequence A has one induction pair with weight 1, sequence B three with weight 0: the pooled
  // mean is 1/4, the mean of the two sequences' means would be 1/2.
  std::vector<double> a(16, 0.0), b(16, 0.0);  // (4, 4) each
  for (int t = 0; t < 4; ++t) a[t * 4] = b[t * 4] = 1.0;  // every query on key 0
  a[3 * 4 + 0] = 0.0, a[3 * 4 + 2] = 1.0;                 // A's query 3 on key 2
  HeadRoleSums sums;
  sums.add(a.data(), 4, {{3, 2}});
  sums.add(b.data(), 4, {{2, 1}, {3, 1}, {3, 2}});
  CHECK(sums.scores().induction == doctest::Approx(0.25));
  CHECK(sums.scores().first == doctest::Approx(5.0 / 6.0));  // 5 of the 6 queries t >= 1 on key 0
}
