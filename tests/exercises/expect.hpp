// How the exercise tests compare a learner's result with the expected one.
//
//   CHECK(same(actual, expected));          tensors: shapes first, then every value
//   CHECK(near(actual, expected, 1e-4));    numbers
//
// Both return a Verdict. doctest prints a Verdict that failed under "values:", so a learner
// sees the expected and the actual shape and both tensors in PyTorch's print format, plus the
// entry that is furthest off with all its digits, instead of a bare "false".
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace exercise::test {

struct Verdict {
  bool ok = false;
  std::string text;  // empty when ok; otherwise expected vs actual, shapes and values
  explicit operator bool() const { return ok; }
};

// doctest finds this by argument-dependent lookup and prints it when a CHECK fails.
std::ostream& operator<<(std::ostream& out, const Verdict& v);

// The comparison itself, on row-major values. Within `tol` (absolute) counts as equal;
// infinities must match exactly, sign included (a masked score is -inf, not -1e30), and NaN
// matches only NaN (PyTorch's fully masked row).
Verdict compare(const attn::Shape& actual_shape, const std::vector<float>& actual,
                const attn::Shape& expected_shape, const std::vector<float>& expected, double tol);

// Any two xtensor expressions, e.g. a learner's Mat against a literal {{0, 1}, {0, 0}}.
template <class A, class E>
Verdict same(const A& actual, const E& expected, double tol = 1e-5) {
  return compare(attn::to_shape(actual.shape()), std::vector<float>(actual.begin(), actual.end()),
                 attn::to_shape(expected.shape()), std::vector<float>(expected.begin(), expected.end()), tol);
}

// Two numbers, |actual - expected| <= tol.
Verdict near(double actual, double expected, double tol);

}  // namespace exercise::test
