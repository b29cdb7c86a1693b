// Checks for exercise swiglu (lessons/exercises/swiglu.cpp): Llama's gated MLP against the worked
// example, silu on the gate only (not sigmoid, not ReLU, not on up_proj), PyTorch's LlamaMLP
// fixture (tests/data/layers, made by make_layers.py), attn's own gated_mlp, and shape refusals.
//
// Shape legend: T tokens, d hidden size, f the MLP's width.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include <xtensor/xview.hpp>

#include "core/generator.hpp"
#include "core/mlp.hpp"
#include "expect.hpp"
#include "support.hpp"

namespace exercise {
// Written by the learner in lessons/exercises/swiglu.cpp.
attn::Mat swiglu(const attn::Mat& x, const attn::Mat& gate_w, const attn::Mat& up_w, const attn::Mat& down_w);
}  // namespace exercise

using attn::Mat;
using attn::Ten3;
using attn::test::load_fixture;
using exercise::swiglu;
using exercise::test::same;

namespace {

// U(-1, 1) of shape (rows, cols) from a seed.
Mat uniform(std::uint64_t seed, std::size_t rows, std::size_t cols) {
  Mat m = xt::empty<float>({rows, cols});  // (rows, cols)
  attn::TorchGenerator(seed).uniform_(m.data(), m.size(), -1.0f, 1.0f);
  return m;
}

Mat identity(std::size_t n) { return xt::eye<float>(n); }  // (n, n)

}  // namespace

TEST_CASE("the worked example: gate [1, -2], up [3, 2], out [2.1932, 1.7164]") {
  const Mat x = {{1, 2}};                     // (1, 2)
  const Mat gate_w = {{1, 0}, {0, -1}};       // (2, 2)
  const Mat up_w = {{1, 1}, {0, 1}};          // (2, 2)
  const Mat down_w = {{1, 0}, {1, 1}};        // (2, 2)
  CHECK(same(swiglu(x, gate_w, up_w, down_w), Mat{{2.193176f, 1.716362f}}, 1e-5));
}

TEST_CASE("silu(z) = z * sigmoid(z): with up = 1 and down = identity the output is silu(x)") {
  // gate_w = identity, up_w = 0 except a column of ones fed by the last input, which is 1.
  const Mat x = {{-1.0f, 0.0f, 3.0f, 1.0f}};  // (1, 4)
  const Mat gate_w = identity(4);             // gate = x
  Mat up_w = xt::zeros<float>({4, 4});        // up = 1 in every entry: the 1 in x's last column
  for (std::size_t i = 0; i < 4; ++i) up_w(i, 3) = 1.0f;
  const Mat expected = {{-0.26894142f, 0.0f, 2.8577223f, 0.7310586f}};  // silu(-1), silu(0), silu(3), silu(1)
  CHECK(same(swiglu(x, gate_w, up_w, identity(4)), expected, 1e-6));
}

TEST_CASE("silu goes on the gate, not on up_proj: a very negative gate closes its feature") {
  const Mat x = {{1.0f, 1.0f}};             // (1, 2)
  const Mat gate_w = {{-10.0f, -10.0f}};    // gate = -20: silu(-20) = -4.1e-08
  const Mat up_w = {{2.5f, 2.5f}};          // up = 5
  const Mat down_w = {{1.0f}, {1.0f}};      // (2, 1)
  // silu(gate) * up = -2.06e-07; silu(up) * gate would be -99.3.
  CHECK(same(swiglu(x, gate_w, up_w, down_w), Mat{{-2.0611536e-07f, -2.0611536e-07f}}, 1e-9));
}

TEST_CASE("PyTorch's LlamaMLP fixture: x (2, 5, 16), f 40, one (5, 16) sequence at a time") {
  const Ten3 x = load_fixture<3>("layers/ops__mlp_x.npy");          // (2, 5, 16)
  const Mat gate_w = load_fixture<2>("layers/ops__gate_weight.npy");  // (40, 16)
  const Mat up_w = load_fixture<2>("layers/ops__up_weight.npy");      // (40, 16)
  const Mat down_w = load_fixture<2>("layers/ops__down_weight.npy");  // (16, 40)
  const Ten3 expected = load_fixture<3>("layers/ops__gated_mlp.npy");  // (2, 5, 16)
  for (std::size_t b = 0; b < 2; ++b) {
    CAPTURE(b);
    const Mat xb = xt::view(x, b, xt::all(), xt::all());         // (5, 16)
    const Mat eb = xt::view(expected, b, xt::all(), xt::all());  // (5, 16)
    CHECK(same(swiglu(xb, gate_w, up_w, down_w), eb, 1e-5));
  }
}

TEST_CASE("the block lesson's sizes (T 5, d 8, f 16) match attn's own gated_mlp") {
  attn::GatedMlp mlp;
  mlp.gate_proj.weight = uniform(1, 16, 8);  // (f, d)
  mlp.up_proj.weight = uniform(2, 16, 8);    // (f, d)
  mlp.down_proj.weight = uniform(3, 8, 16);  // (d, f)
  const Mat x = uniform(4, 5, 8);            // (T, d)
  Ten3 x3 = xt::empty<float>({1, 5, 8});     // (1, T, d)
  std::copy(x.begin(), x.end(), x3.begin());
  const Ten3 reference = attn::gated_mlp(mlp, x3);                      // (1, T, d)
  const Mat expected = xt::view(reference, 0, xt::all(), xt::all());  // (T, d)
  CHECK(same(swiglu(x, mlp.gate_proj.weight, mlp.up_proj.weight, mlp.down_proj.weight), expected, 1e-5));
}

TEST_CASE("weights whose shapes do not chain are refused with std::invalid_argument") {
  const Mat x = uniform(5, 3, 4);  // (T 3, d 4)
  const Mat g = uniform(6, 6, 4), u = uniform(7, 6, 4), dn = uniform(8, 4, 6);  // f 6
  CHECK_NOTHROW(swiglu(x, g, u, dn));
  CHECK_THROWS_AS(swiglu(x, uniform(9, 6, 5), u, dn), std::invalid_argument);   // gate_w reads 5 inputs, x has 4
  CHECK_THROWS_AS(swiglu(x, g, uniform(9, 5, 4), dn), std::invalid_argument);   // up_w has 5 features, gate_w 6
  CHECK_THROWS_AS(swiglu(x, g, u, uniform(9, 4, 5)), std::invalid_argument);    // down_w reads 5 features, not 6
  CHECK_THROWS_AS(swiglu(x, g, u, uniform(9, 3, 6)), std::invalid_argument);    // down_w gives 3 outputs, not d 4
}
