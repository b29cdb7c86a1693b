// The backward passes of the encoder-decoder era, which `attn lesson align` trains with:
// additive (Bahdanau) attention for one decoder step (additive_step_grad, additive_keys_grad)
// and the tanh RNN cell, one step and through time (rnn_step_grad, rnn_pass_grad).
//
// Each is checked two ways:
//   - against PyTorch: the grad_additive fixture (modern_cases.json: Generator().manual_seed(6),
//     H (5, 4), s (3,), W_a (5, 3), U_a (5, 4), v_a (5,), g_c (4,); loss = sum(c * g_c)), to 1e-5;
//   - against central finite differences of the same loss computed in double precision by the
//     independent reference forwards below (written from the equations, not from core), so the
//     float32 analytic gradient is held to float32 accuracy, not to the noise of a float32
//     difference quotient.
//
// Legend: S source length, d_h state width, d_s decoder state width, d_a alignment width,
// d_in input width.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <vector>

#include <xtensor/xview.hpp>

#include "core/generator.hpp"
#include "core/rnn.hpp"
#include "core/scoring.hpp"
#include "support.hpp"

using namespace attn;
using attn::test::differences;
using attn::test::load_fixture;

namespace {

using Dvec = std::vector<double>;  // a tensor in double, row-major

Dvec to_d(const xt::xtensor<float, 1>& t) { return Dvec(t.begin(), t.end()); }
Dvec to_d(const xt::xtensor<float, 2>& t) { return Dvec(t.begin(), t.end()); }

// Central differences of f with respect to every entry of x: (f(x + eps) - f(x - eps)) / 2 eps.
// In double, eps = 1e-6 leaves an error of about eps^2 * f''' + 1e-16 / eps, near 1e-10.
Dvec central_differences(Dvec& x, const std::function<double()>& f) {
  const double eps = 1e-6;
  Dvec g(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double keep = x[i];
    x[i] = keep + eps;
    const double up = f();
    x[i] = keep - eps;
    const double down = f();
    x[i] = keep;
    g[i] = (up - down) / (2 * eps);
  }
  return g;
}

// Largest |a - b| over the entries, relative where a gradient is larger than 1.
template <class E>
double worst_gap(const E& analytic, const Dvec& numeric) {
  REQUIRE(analytic.size() == numeric.size());
  double worst = 0.0;
  std::size_t i = 0;
  for (float a : analytic) {
    worst = std::fmax(worst, std::fabs(a - numeric[i]) / std::fmax(1.0, std::fabs(numeric[i])));
    ++i;
  }
  return worst;
}

// The additive-attention loss sum(c * g_c) in double, straight from the equations.
struct AdditiveProblem {
  std::size_t S, d_h, d_s, d_a;
  Dvec H, s, W_a, U_a, v_a, g_c;
  double loss() const {
    std::vector<double> e(S);
    for (std::size_t j = 0; j < S; ++j) {
      double sum = 0.0;
      for (std::size_t a = 0; a < d_a; ++a) {
        double pre = 0.0;
        for (std::size_t k = 0; k < d_s; ++k) pre += W_a[a * d_s + k] * s[k];
        for (std::size_t k = 0; k < d_h; ++k) pre += U_a[a * d_h + k] * H[j * d_h + k];
        sum += v_a[a] * std::tanh(pre);
      }
      e[j] = sum;
    }
    double mx = e[0], z = 0.0;
    for (double v : e) mx = std::fmax(mx, v);
    for (double v : e) z += std::exp(v - mx);
    double L = 0.0;
    for (std::size_t j = 0; j < S; ++j)
      for (std::size_t k = 0; k < d_h; ++k) L += std::exp(e[j] - mx) / z * H[j * d_h + k] * g_c[k];
    return L;
  }
};

// What core computes for sum(c * g_c): the step forward, the step backward with d_c = g_c,
// then the keys' backward, as the lesson's decoder does.
struct CoreAdditive {
  Vec d_s, d_v_a;
  Mat d_H, d_W_a, d_U_a;
  AdditiveStep step;
};
CoreAdditive core_additive(const Mat& H, const Vec& s, const Mat& W_a, const Mat& U_a, const Vec& v_a, const Vec& g_c) {
  const Mat UH = additive_keys(H, U_a);  // (S, d_a)
  CoreAdditive out;
  out.step = additive_step(s, H, UH, W_a, v_a);
  AdditiveGrads g = additive_grads_like(H, UH, W_a);
  out.d_s = additive_step_grad(out.step, s, H, W_a, v_a, g_c, g);
  out.d_U_a = xt::zeros<float>(U_a.shape());
  additive_keys_grad(H, U_a, g.UH, out.d_U_a, g.H);
  out.d_H = g.H;
  out.d_W_a = g.W_a;
  out.d_v_a = g.v_a;
  return out;
}

// The loss sum_t (h_t . G_t) over an RNN pass, in double: h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh).
struct RnnProblem {
  std::size_t S, d_in, d_h;
  bool reverse;
  Dvec xs, W_ih, W_hh, b_ih, b_hh, G;
  double loss() const {
    std::vector<double> h(d_h, 0.0), next(d_h);
    double L = 0.0;
    for (std::size_t step = 0; step < S; ++step) {
      const std::size_t t = reverse ? S - 1 - step : step;
      for (std::size_t i = 0; i < d_h; ++i) {
        double z = b_ih[i] + b_hh[i];
        for (std::size_t k = 0; k < d_in; ++k) z += W_ih[i * d_in + k] * xs[t * d_in + k];
        for (std::size_t k = 0; k < d_h; ++k) z += W_hh[i * d_h + k] * h[k];
        next[i] = std::tanh(z);
      }
      h = next;
      for (std::size_t i = 0; i < d_h; ++i) L += h[i] * G[t * d_h + i];
    }
    return L;
  }
};

}  // namespace

TEST_CASE("additive attention's gradients equal PyTorch's on the grad_additive fixture") {
  const Mat H = load_fixture<2>("grad_additive__H.npy");      // (5, 4)
  const Vec s = load_fixture<1>("grad_additive__s.npy");      // (3,)
  const Mat W_a = load_fixture<2>("grad_additive__W_a.npy");  // (5, 3)
  const Mat U_a = load_fixture<2>("grad_additive__U_a.npy");  // (5, 4)
  const Vec v_a = load_fixture<1>("grad_additive__v_a.npy");  // (5,)
  const Vec g_c = load_fixture<1>("grad_additive__g_c.npy");  // (4,)
  const CoreAdditive got = core_additive(H, s, W_a, U_a, v_a, g_c);

  CHECK(differences(got.step.alpha, load_fixture<1>("grad_additive__alpha.npy")) == "");
  CHECK(differences(got.step.c, load_fixture<1>("grad_additive__context.npy")) == "");
  double loss = 0.0;
  for (std::size_t k = 0; k < g_c.size(); ++k) loss += got.step.c(k) * g_c(k);
  CHECK(loss == doctest::Approx(load_fixture<1>("grad_additive__loss.npy")(0)).epsilon(1e-5));
  CHECK(differences(got.d_H, load_fixture<2>("grad_additive__H_grad.npy")) == "");
  CHECK(differences(got.d_s, load_fixture<1>("grad_additive__s_grad.npy")) == "");
  CHECK(differences(got.d_W_a, load_fixture<2>("grad_additive__W_a_grad.npy")) == "");
  CHECK(differences(got.d_U_a, load_fixture<2>("grad_additive__U_a_grad.npy")) == "");
  CHECK(differences(got.d_v_a, load_fixture<1>("grad_additive__v_a_grad.npy")) == "");
  // The step's scores are the forward lessons' additive scores, to the last bit.
  CHECK(differences(got.step.e, additive_scores(s, H, W_a, U_a, v_a), 0) == "");
}

TEST_CASE("additive attention's gradients equal central differences in double") {
  for (std::uint64_t seed : {1u, 2u, 3u, 4u}) {
    CAPTURE(seed);
    const std::size_t S = 2 + seed, d_h = 3 + seed % 3, d_s = 2 + seed % 2, d_a = 4;
    TorchGenerator gen(seed);
    // Centred inputs, scaled so that tanh bends and softmax is not flat: the test must see both.
    auto centred = [&](std::size_t r, std::size_t c, float scale) {
      Mat m = gen.rand(r, c);
      return Mat((m - 0.5f) * scale);
    };
    const Mat H = centred(S, d_h, 2.0f), W_a = centred(d_a, d_s, 3.0f), U_a = centred(d_a, d_h, 3.0f);
    const Vec s = xt::view(centred(1, d_s, 2.0f), 0, xt::all());
    const Vec v_a = xt::view(centred(1, d_a, 4.0f), 0, xt::all());
    const Vec g_c = xt::view(centred(1, d_h, 2.0f), 0, xt::all());
    const CoreAdditive got = core_additive(H, s, W_a, U_a, v_a, g_c);

    AdditiveProblem p{S, d_h, d_s, d_a, to_d(H), to_d(s), to_d(W_a), to_d(U_a), to_d(v_a), to_d(g_c)};
    auto f = [&] { return p.loss(); };
    // float32 gradients against double differences: a few float32 roundings of O(1) values.
    const double tol = 2e-6;
    CHECK(worst_gap(got.d_H, central_differences(p.H, f)) <= tol);
    CHECK(worst_gap(got.d_s, central_differences(p.s, f)) <= tol);
    CHECK(worst_gap(got.d_W_a, central_differences(p.W_a, f)) <= tol);
    CHECK(worst_gap(got.d_U_a, central_differences(p.U_a, f)) <= tol);
    CHECK(worst_gap(got.d_v_a, central_differences(p.v_a, f)) <= tol);
  }
}

TEST_CASE("the gradient test would notice a wrong gradient") {
  // The same comparison with the softmax's centring term dropped must fail: a test of the test.
  const Mat H = load_fixture<2>("grad_additive__H.npy");
  const Vec s = load_fixture<1>("grad_additive__s.npy");
  const Mat W_a = load_fixture<2>("grad_additive__W_a.npy");
  const Mat U_a = load_fixture<2>("grad_additive__U_a.npy");
  const Vec v_a = load_fixture<1>("grad_additive__v_a.npy");
  const Vec g_c = load_fixture<1>("grad_additive__g_c.npy");
  const CoreAdditive got = core_additive(H, s, W_a, U_a, v_a, g_c);
  Vec wrong = xt::zeros<float>({v_a.size()});  // dL/dv_a without "- alpha . dL/dalpha"
  for (std::size_t j = 0; j < H.shape()[0]; ++j) {
    float d_alpha = 0.0f;
    for (std::size_t k = 0; k < H.shape()[1]; ++k) d_alpha += g_c(k) * H(j, k);
    for (std::size_t a = 0; a < v_a.size(); ++a) wrong(a) += got.step.alpha(j) * d_alpha * got.step.act(j, a);
  }
  AdditiveProblem p{5, 4, 3, 5, to_d(H), to_d(s), to_d(W_a), to_d(U_a), to_d(v_a), to_d(g_c)};
  CHECK(worst_gap(wrong, central_differences(p.v_a, [&] { return p.loss(); })) > 1e-3);
  CHECK(differences(wrong, load_fixture<1>("grad_additive__v_a_grad.npy")) != "");
}

TEST_CASE("the RNN's gradients through time equal central differences in double, both directions") {
  for (bool reverse : {false, true})
    for (std::uint64_t seed : {5u, 6u}) {
      CAPTURE(reverse);
      CAPTURE(seed);
      const std::size_t S = 4 + seed % 2, d_in = 3, d_h = 5;
      TorchGenerator gen(seed);
      const RnnCell cell = make_rnn_cell(gen, d_in, d_h);
      const Mat xs = gen.rand(S, d_in);
      const Mat G = (gen.rand(S, d_h) - 0.5f) * 2.0f;  // dL/d(state t) from outside: L = sum_t h_t . G_t
      const Mat states = reverse ? rnn_backward(cell, xs) : rnn_forward(cell, xs);
      RnnCell grads = zeros_like(cell);
      const Mat d_xs = rnn_pass_grad(cell, xs, states, G, grads, reverse);

      RnnProblem p{S, d_in, d_h, reverse, to_d(xs), to_d(cell.weight_ih), to_d(cell.weight_hh),
                   to_d(cell.bias_ih), to_d(cell.bias_hh), to_d(G)};
      auto f = [&] { return p.loss(); };
      const double tol = 2e-6;
      CHECK(worst_gap(d_xs, central_differences(p.xs, f)) <= tol);
      CHECK(worst_gap(grads.weight_ih, central_differences(p.W_ih, f)) <= tol);
      CHECK(worst_gap(grads.weight_hh, central_differences(p.W_hh, f)) <= tol);
      CHECK(worst_gap(grads.bias_ih, central_differences(p.b_ih, f)) <= tol);
      CHECK(worst_gap(grads.bias_hh, central_differences(p.b_hh, f)) <= tol);
    }
}

TEST_CASE("one RNN step's gradient, and gradients accumulate as .grad does") {
  TorchGenerator gen(11);
  const RnnCell cell = make_rnn_cell(gen, 2, 3);
  const Vec x = gen.rand(2), h_prev = gen.rand(3), d_h = gen.rand(3);
  const Vec h = rnn_step(cell, x, h_prev);
  RnnCell once = zeros_like(cell), twice = zeros_like(cell);
  const RnnStepGrad g = rnn_step_grad(cell, x, h_prev, h, d_h, once);
  rnn_step_grad(cell, x, h_prev, h, d_h, twice);
  rnn_step_grad(cell, x, h_prev, h, d_h, twice);
  CHECK(differences(twice.weight_hh, Mat(once.weight_hh * 2.0f), 1e-7) == "");
  CHECK(differences(twice.bias_ih, Vec(once.bias_ih * 2.0f), 1e-7) == "");
  // d_x by hand: W_ih^T (d_h * (1 - h^2)).
  for (std::size_t k = 0; k < 2; ++k) {
    float expect = 0.0f;
    for (std::size_t i = 0; i < 3; ++i) expect += cell.weight_ih(i, k) * d_h(i) * (1.0f - h(i) * h(i));
    CHECK(g.d_x(k) == doctest::Approx(expect).epsilon(1e-6));
  }
  CHECK_THROWS_WITH_AS(rnn_step_grad(cell, Vec(xt::zeros<float>({4})), h_prev, h, d_h, once),
                       doctest::Contains("(4,)"), std::invalid_argument);
}
