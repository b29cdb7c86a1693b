// Helpers shared by the unit tests: loading the PyTorch fixtures in tests/data and comparing
// tensors so that a failure says where and by how much, not just "false".
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <sstream>
#include <stdexcept>
#include <string>

#include <xtensor/xtensor.hpp>

#include "core/generator.hpp"
#include "core/tensor.hpp"
#include "io/npy.hpp"

namespace attn::test {

inline std::string data_path(const std::string& file) { return std::string(ATTN_TEST_DATA) + "/" + file; }

// A fixture as a fixed-rank tensor. The rank is checked so that a fixture regenerated with
// another shape fails loudly instead of being read with the wrong axes.
template <std::size_t N>
xt::xtensor<float, N> load_fixture(const std::string& file) {
  const NpyArray a = read_npy(data_path(file));
  if (a.shape.size() != N)
    throw std::runtime_error(file + ": expected rank " + std::to_string(N) + ", got shape " + shape_str(a.shape));
  std::array<std::size_t, N> shape{};
  for (std::size_t d = 0; d < N; ++d) shape[d] = a.shape[d];
  xt::xtensor<float, N> t = xt::empty<float>(shape);
  std::copy(a.values.begin(), a.values.end(), t.begin());
  return t;
}

// "" when `actual` matches `expected` within `tol`, otherwise what went wrong, so that
// CHECK(differences(a, b) == "") prints the reason. Infinities must match exactly (sign and
// position: a masked score is -inf, never a large negative number); NaN matches only NaN.
template <class A, class E>
std::string differences(const A& actual, const E& expected, double tol = 1e-5) {
  const Shape sa = to_shape(actual.shape()), se = to_shape(expected.shape());
  if (sa != se) return "shape " + shape_str(sa) + " vs expected " + shape_str(se);
  std::size_t i = 0, worst_at = 0;
  double worst = 0.0, worst_a = 0.0, worst_e = 0.0;
  auto ie = expected.begin();
  for (auto ia = actual.begin(); ia != actual.end(); ++ia, ++ie, ++i) {
    const double a = *ia, e = *ie;
    double d;
    if (std::isnan(a) || std::isnan(e)) d = (std::isnan(a) && std::isnan(e)) ? 0.0 : INFINITY;
    else if (std::isinf(a) || std::isinf(e)) d = (a == e) ? 0.0 : INFINITY;
    else d = std::fabs(a - e);
    if (d > worst) {
      worst = d;
      worst_at = i;
      worst_a = a;
      worst_e = e;
    }
  }
  if (worst <= tol) return "";
  std::ostringstream why;
  why.precision(9);
  why << "max |diff| " << worst << " > " << tol << " at flat index " << worst_at << ": got " << worst_a
      << ", expected " << worst_e;
  return why.str();
}

// U(-1, 1) of the given shape from a seed: (B, h, T, d_k).
inline Ten4 random_heads(std::uint64_t seed, std::size_t B, std::size_t h, std::size_t T, std::size_t d_k) {
  Ten4 x = xt::empty<float>({B, h, T, d_k});  // (B, h, T, d_k)
  TorchGenerator(seed).uniform_(x.data(), x.size(), -1.0f, 1.0f);
  return x;
}

// The message of the std::invalid_argument that f throws, or "" when it throws nothing.
template <class F>
std::string refusal(F f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace attn::test
