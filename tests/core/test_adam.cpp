// Adam (core/adam.*) against torch.optim.Adam in PyTorch 1.13: six steps on one (3, 4)
// parameter with the default settings, and six with every setting changed
// (tests/data/train/make_adam.py made the fixtures and says how).
#include <doctest/doctest.h>

#include "core/adam.hpp"
#include "support.hpp"

using namespace attn;
using attn::test::contains;
using attn::test::differences;
using attn::test::load_fixture;
using attn::test::refusal;

namespace {

// The parameter after each step, as (steps, 3, 4).
Ten3 run(const AdamSettings& settings) {
  Mat p = load_fixture<2>("train/adam__p0.npy");      // (3, 4)
  const Ten3 grads = load_fixture<3>("train/adam__grads.npy");  // (6, 3, 4)
  Adam adam(settings);
  Ten3 after = xt::empty<float>(grads.shape());  // (6, 3, 4)
  for (std::size_t k = 0; k < grads.shape()[0]; ++k) {
    adam.step({{"p", p.data(), grads.data() + k * p.size(), p.size()}});
    std::copy(p.begin(), p.end(), after.data() + k * p.size());
  }
  CHECK(adam.steps() == grads.shape()[0]);
  return after;
}

}  // namespace

TEST_CASE("Adam takes torch.optim.Adam's steps (lr 0.1, betas 0.9/0.999, eps 1e-8)") {
  AdamSettings s;
  s.lr = 0.1;
  // Float32 element-wise arithmetic in a slightly different order (PyTorch fuses some
  // multiply-adds): a few units in the last place of values near 1.
  CHECK(differences(run(s), load_fixture<3>("train/adam__after.npy"), 1e-6) == "");
}

TEST_CASE("Adam with weight decay, other betas and a large eps follows PyTorch too") {
  AdamSettings s;
  s.lr = 0.02;
  s.beta1 = 0.8;
  s.beta2 = 0.99;
  s.eps = 1e-3;
  s.weight_decay = 0.05;
  CHECK(differences(run(s), load_fixture<3>("train/adam__after_wd.npy"), 1e-6) == "");
}

TEST_CASE("the first step moves every value by about lr, whatever the gradient's size") {
  // m / sqrt(v) after one bias-corrected step is g / |g|: Adam's steps are scale-free.
  std::vector<float> p = {0.0f, 0.0f, 0.0f}, g = {1e-4f, -3.0f, 250.0f};
  Adam adam({});
  adam.step({{"p", p.data(), g.data(), 3}});
  CHECK(p[0] == doctest::Approx(-1e-3).epsilon(1e-3));
  CHECK(p[1] == doctest::Approx(1e-3).epsilon(1e-6));
  CHECK(p[2] == doctest::Approx(-1e-3).epsilon(1e-6));
}

TEST_CASE("Adam refuses settings and parameter lists it cannot use") {
  AdamSettings bad;
  bad.lr = 0;
  CHECK(contains(refusal([&] { Adam a(bad); }), "lr > 0"));
  bad = {};
  bad.beta2 = 1.0;
  CHECK(contains(refusal([&] { Adam a(bad); }), "beta2"));
  std::vector<float> p(4, 0.0f), g(4, 1.0f);
  Adam adam({});
  adam.step({{"w", p.data(), g.data(), 4}});
  CHECK(contains(refusal([&] { adam.step({{"w", p.data(), g.data(), 3}}); }), "w has 3 values, the first step had 4"));
  CHECK(contains(refusal([&] { adam.step({}); }), "0 parameters, the first step had 1"));
}
