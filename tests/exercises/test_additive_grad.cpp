// Checks for exercise additive-grad (lessons/exercises/additive_grad.cpp): the gradient of
// Bahdanau's scores e_j = v_a . tanh(W_a s + U_a h_j) with respect to v_a and s, given dL/de.
// Values come from the worked example (printed by PyTorch 1.13 in float64), from PyTorch's
// autograd (the grad_additive fixture in tests/data), and from central differences in double.
//
// Shape legend: S source words, d_s decoder state width, d_h encoder state width,
// d_a alignment width.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/generator.hpp"
#include "expect.hpp"
#include "support.hpp"

namespace exercise {
// Written by the learner in lessons/exercises/additive_grad.cpp.
attn::Vec additive_grad_v_a(const attn::Vec& s, const attn::Mat& H, const attn::Mat& W_a, const attn::Mat& U_a,
                            const attn::Vec& v_a, const attn::Vec& d_e);
attn::Vec additive_grad_s(const attn::Vec& s, const attn::Mat& H, const attn::Mat& W_a, const attn::Mat& U_a,
                          const attn::Vec& v_a, const attn::Vec& d_e);
}  // namespace exercise

using attn::Mat;
using attn::Vec;
using exercise::additive_grad_s;
using exercise::additive_grad_v_a;
using exercise::test::same;

namespace {

// sum_j d_e[j] e_j in double: the loss whose gradient the exercise computes.
double weighted_scores(const std::vector<double>& s, const Mat& H, const Mat& W_a, const Mat& U_a,
                       const std::vector<double>& v_a, const Vec& d_e) {
  double L = 0.0;
  for (std::size_t j = 0; j < H.shape()[0]; ++j)
    for (std::size_t a = 0; a < W_a.shape()[0]; ++a) {
      double pre = 0.0;
      for (std::size_t i = 0; i < s.size(); ++i) pre += W_a(a, i) * s[i];
      for (std::size_t i = 0; i < H.shape()[1]; ++i) pre += U_a(a, i) * H(j, i);
      L += d_e(j) * v_a[a] * std::tanh(pre);
    }
  return L;
}

// Central differences of `f` over every entry of x, in double.
template <class F>
Vec differences_of(std::vector<double>& x, F f) {
  Vec g = xt::zeros<float>({x.size()});
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double keep = x[i], eps = 1e-6;
    x[i] = keep + eps;
    const double up = f();
    x[i] = keep - eps;
    const double down = f();
    x[i] = keep;
    g(i) = static_cast<float>((up - down) / (2 * eps));
  }
  return g;
}

}  // namespace

TEST_CASE("the worked example: dL/dv_a = [0.9640], dL/ds = [1.1413]") {
  const Vec s = {1}, v_a = {2}, d_e = {1.0f, 0.5f};
  const Mat H = {{1}, {-1}}, W_a = {{1}}, U_a = {{1}};  // H (2, 1)
  CHECK(same(additive_grad_v_a(s, H, W_a, U_a, v_a, d_e), Vec{0.9640f}, 1e-4));
  CHECK(same(additive_grad_s(s, H, W_a, U_a, v_a, d_e), Vec{1.1413f}, 1e-4));
}

TEST_CASE("PyTorch's autograd: the grad_additive fixture's v_a.grad and s.grad") {
  using attn::test::load_fixture;
  // loss = sum(c * g_c) with c = softmax(e) @ H. Back through c and softmax by hand:
  // dL/dalpha_j = g_c . h_j, dL/de = alpha * (dL/dalpha - alpha . dL/dalpha). v_a and s reach
  // the loss only through e, so the exercise's answers are autograd's v_a.grad and s.grad.
  const Mat H = load_fixture<2>("grad_additive__H.npy");          // (5, 4)
  const Vec s = load_fixture<1>("grad_additive__s.npy");          // (3,)
  const Mat W_a = load_fixture<2>("grad_additive__W_a.npy");      // (5, 3)
  const Mat U_a = load_fixture<2>("grad_additive__U_a.npy");      // (5, 4)
  const Vec v_a = load_fixture<1>("grad_additive__v_a.npy");      // (5,)
  const Vec g_c = load_fixture<1>("grad_additive__g_c.npy");      // (4,)
  const Vec alpha = load_fixture<1>("grad_additive__alpha.npy");  // (5,)
  Vec d_alpha = xt::zeros<float>({std::size_t{5}});
  for (std::size_t j = 0; j < 5; ++j)
    for (std::size_t k = 0; k < 4; ++k) d_alpha(j) += g_c(k) * H(j, k);
  float mean = 0.0f;
  for (std::size_t j = 0; j < 5; ++j) mean += alpha(j) * d_alpha(j);
  Vec d_e = xt::zeros<float>({std::size_t{5}});
  for (std::size_t j = 0; j < 5; ++j) d_e(j) = alpha(j) * (d_alpha(j) - mean);
  // S 5, d_s 3, d_h 4, d_a 5: the widths differ, so a mixed-up axis cannot pass.
  CHECK(same(additive_grad_v_a(s, H, W_a, U_a, v_a, d_e), load_fixture<1>("grad_additive__v_a_grad.npy")));
  CHECK(same(additive_grad_s(s, H, W_a, U_a, v_a, d_e), load_fixture<1>("grad_additive__s_grad.npy")));
}

TEST_CASE("central differences in double, on random sizes where tanh bends") {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    CAPTURE(seed);
    attn::TorchGenerator gen(seed);
    const std::size_t S = 3 + seed, d_s = 2 + seed, d_h = 4, d_a = 3;
    const Mat H = (gen.rand(S, d_h) - 0.5f) * 3.0f, W_a = (gen.rand(d_a, d_s) - 0.5f) * 3.0f,
              U_a = (gen.rand(d_a, d_h) - 0.5f) * 3.0f;
    const Vec s = (gen.rand(d_s) - 0.5f) * 2.0f, v_a = (gen.rand(d_a) - 0.5f) * 4.0f,
              d_e = (gen.rand(S) - 0.5f) * 2.0f;
    std::vector<double> s_d(s.begin(), s.end()), v_d(v_a.begin(), v_a.end());
    auto f = [&] { return weighted_scores(s_d, H, W_a, U_a, v_d, d_e); };
    // float32 arithmetic against a double reference: a few units of float32 rounding.
    CHECK(same(additive_grad_v_a(s, H, W_a, U_a, v_a, d_e), differences_of(v_d, f), 1e-5));
    CHECK(same(additive_grad_s(s, H, W_a, U_a, v_a, d_e), differences_of(s_d, f), 1e-5));
  }
}

TEST_CASE("no signal from the loss, no gradient: d_e = 0 gives zeros of the right sizes") {
  const Vec s = {0.4f, -0.3f}, v_a = {1.0f, -2.0f, 0.5f}, d_e = {0.0f, 0.0f};
  const Mat H = {{0.1f, 0.2f, 0.3f, 0.4f}, {-0.5f, 0.6f, 0.0f, 0.2f}};           // (2, 4)
  const Mat W_a = {{0.3f, 0.1f}, {-0.2f, 0.4f}, {0.5f, 0.5f}};                   // (3, 2)
  const Mat U_a = {{0.1f, 0.0f, 0.2f, 0.3f}, {0.0f, 0.1f, 0.0f, -0.1f}, {1, 1, 1, 1}};  // (3, 4)
  CHECK(same(additive_grad_v_a(s, H, W_a, U_a, v_a, d_e), Vec{0.0f, 0.0f, 0.0f}, 0));
  CHECK(same(additive_grad_s(s, H, W_a, U_a, v_a, d_e), Vec{0.0f, 0.0f}, 0));
}
