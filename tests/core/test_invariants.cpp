// Properties of the core operations that hold for any input, checked on small hand-made cases:
// softmax, the causal mask, head splitting, the matrix products, the statistics the lessons
// print as evidence and the word embeddings. The fixtures cover "same numbers as PyTorch";
// these cover the edges the fixtures never reach (huge logits, fully masked rows, shape errors)
// and the xtensor traps listed in docs/architecture.md.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "core/attention.hpp"
#include "core/embedding.hpp"
#include "core/generator.hpp"
#include "core/heads.hpp"
#include "core/mask.hpp"
#include "core/matmul.hpp"
#include "core/softmax.hpp"
#include "core/stats.hpp"
#include "support.hpp"

using attn::Mat;
using attn::Ten3;
using attn::Ten4;
using attn::Vec;
using attn::test::differences;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The message of the std::invalid_argument that `f` throws, or "" if it throws nothing.
template <class F>
std::string invalid_argument_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// Softmax of one row in double, the textbook way, to compare against.
std::vector<double> softmax_reference(const std::vector<double>& row) {
  double mx = -INFINITY, sum = 0.0;
  for (double v : row) mx = std::max(mx, v);
  std::vector<double> out;
  for (double v : row) out.push_back(std::exp(v - mx));
  for (double v : out) sum += v;
  for (double& v : out) v /= sum;
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------- softmax

TEST_CASE("softmax rows sum to 1") {
  attn::TorchGenerator gen(3);
  Mat logits = gen.randn(6, 9);
  logits *= 4.0f;  // spread the logits so the weights are far from uniform
  const Mat w = attn::softmax_rows(logits);
  const Vec sums = attn::row_sums(w);
  CHECK(differences(sums, Vec(xt::ones<float>({6})), 1e-6) == "");
  for (float v : w) CHECK((v >= 0.0f && v <= 1.0f));
}

TEST_CASE("softmax of a 3-D tensor works row by row") {
  // Regression for trap 1 (docs/architecture.md) (a lazy reduction broadcast the wrong way): every row of a
  // rank-3 input must equal the softmax of that row alone.
  Ten3 x = {{{1.0f, 2.0f, 3.0f}, {0.5f, -1.0f, 2.0f}}, {{-3.0f, 0.0f, 3.0f}, {10.0f, 10.0f, 9.0f}}};
  const Ten3 y = attn::softmax_rows(x);
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t r = 0; r < 2; ++r) {
      const auto want = softmax_reference({x(b, r, 0), x(b, r, 1), x(b, r, 2)});
      for (std::size_t j = 0; j < 3; ++j) CHECK(y(b, r, j) == doctest::Approx(want[j]).epsilon(1e-6));
    }
}

TEST_CASE("softmax survives logits of +-1e4") {
  // A naive exp(1e4) is inf and the row turns into NaN; subtracting the max avoids it.
  const Mat x = {{1e4f, -1e4f, 0.0f}, {-1e4f, -1e4f, -1e4f + 1.0f}, {1e4f, 1e4f, -1e4f}};
  const Mat w = attn::softmax_rows(x);
  for (float v : w) CHECK(std::isfinite(v));
  CHECK(w(0, 0) == 1.0f);
  CHECK(w(0, 1) == 0.0f);
  CHECK(w(0, 2) == 0.0f);
  CHECK(w(1, 2) == doctest::Approx(1.0 / (1.0 + 2.0 * std::exp(-1.0))).epsilon(1e-6));
  CHECK(w(2, 0) == doctest::Approx(0.5));
  CHECK(w(2, 1) == doctest::Approx(0.5));
  CHECK(w(2, 2) == 0.0f);
}

TEST_CASE("a row that is all -inf becomes NaN, as in PyTorch") {
  // torch.softmax(torch.tensor([[-inf, -inf], [0., -inf]]), dim=-1) -> [[nan, nan], [1., 0.]]
  const Mat x = {{-kInf, -kInf}, {0.0f, -kInf}};
  const Mat w = attn::softmax_rows(x);
  CHECK(std::isnan(w(0, 0)));
  CHECK(std::isnan(w(0, 1)));
  CHECK(w(1, 0) == 1.0f);
  CHECK(w(1, 1) == 0.0f);
}

// ------------------------------------------------------------------------------------ masks

TEST_CASE("causal_mask marks the future with 1") {
  // torch.triu(torch.ones(3, 3), diagonal=1)
  CHECK(differences(attn::causal_mask(3), Mat{{0, 1, 1}, {0, 0, 1}, {0, 0, 0}}, 0.0) == "");
  // torch.tril(torch.ones(3, 3)) is its complement.
  CHECK(differences(attn::lower_triangle(3), Mat{{1, 0, 0}, {1, 1, 0}, {1, 1, 1}}, 0.0) == "");
  CHECK(differences(attn::causal_mask(1), Mat{{0}}, 0.0) == "");
}

TEST_CASE("masked_fill replaces exactly the masked cells of every matrix") {
  const Ten3 scores = {{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, {{-1, -2, -3}, {-4, -5, -6}, {-7, -8, -9}}};
  const Ten3 filled = attn::masked_fill(scores, attn::causal_mask(3), -kInf);
  const Ten3 want = {{{1, -kInf, -kInf}, {4, 5, -kInf}, {7, 8, 9}},
                     {{-1, -kInf, -kInf}, {-4, -5, -kInf}, {-7, -8, -9}}};
  CHECK(differences(filled, want, 0.0) == "");
  CHECK(scores(0, 0, 1) == 2.0f);  // the input is left alone

  const std::string msg = invalid_argument_of([&] { attn::masked_fill(scores, attn::causal_mask(4), 0.0f); });
  CHECK(contains(msg, "(4, 4)"));
  CHECK(contains(msg, "(2, 3, 3)"));
}

TEST_CASE("scale_scores divides by sqrt(d_k)") {
  const Mat s = {{2.0f, -4.0f}, {1.0f, 0.0f}};
  CHECK(differences(attn::scale_scores(s, 4), Mat{{1.0f, -2.0f}, {0.5f, 0.0f}}, 0.0) == "");
}

// ------------------------------------------------------------------------------------ heads

TEST_CASE("split_heads then merge_heads is the identity") {
  const Ten3 x = attn::TorchGenerator(1).rand(2, 5, 6);  // (B, T, d_out)
  const Ten4 split = attn::split_heads(x, 3);            // (B, T, h, d_k)
  CHECK(attn::to_shape(split.shape()) == attn::Shape{2, 5, 3, 2});
  CHECK(differences(attn::merge_heads(split), x, 0.0) == "");
  // Through the head-major layout and back as well.
  const Ten4 heads = attn::swap_token_head_axes(split);  // (B, h, T, d_k)
  CHECK(attn::to_shape(heads.shape()) == attn::Shape{2, 3, 5, 2});
  CHECK(differences(attn::merge_heads(attn::swap_token_head_axes(heads)), x, 0.0) == "");
  // Head i of token t holds columns [i * d_k, (i + 1) * d_k) of that token's row.
  CHECK(heads(1, 2, 4, 1) == x(1, 4, 2 * 2 + 1));
}

TEST_CASE("split_heads refuses a head count that does not divide d_out") {
  const Ten3 x = xt::zeros<float>({1, 2, 6});
  const std::string msg = invalid_argument_of([&] { attn::split_heads(x, 4); });
  CHECK(contains(msg, "(1, 2, 6)"));
  CHECK(contains(msg, "4 heads"));
  CHECK(invalid_argument_of([&] { attn::split_heads(x, 0); }) != "");
}

TEST_CASE("reshape without transpose scrambles heads when T > 1 and h > 1") {
  const Ten3 x = attn::TorchGenerator(2).rand(2, 4, 6);  // (B, T, d_out)
  const Ten4 right = attn::swap_token_head_axes(attn::split_heads(x, 2));  // (B, h, T, d_k)
  const Ten4 wrong = attn::reshape_without_transpose(x, 2);              // same shape
  CHECK(attn::to_shape(wrong.shape()) == attn::to_shape(right.shape()));
  CHECK(differences(wrong, right, 0.0) != "");
  // With one token or one head there is nothing to scramble, so the two must agree.
  const Ten3 one_token = attn::TorchGenerator(2).rand(2, 1, 6);
  CHECK(differences(attn::reshape_without_transpose(one_token, 3),
                    attn::swap_token_head_axes(attn::split_heads(one_token, 3)), 0.0) == "");
  CHECK(differences(attn::reshape_without_transpose(x, 1),
                    attn::swap_token_head_axes(attn::split_heads(x, 1)), 0.0) == "");
}

// ---------------------------------------------------------------------------------- matmul

TEST_CASE("matmul and matmul_bt on 2-D matrices") {
  const Mat a = {{1, 2, 3}, {4, 5, 6}};          // (2, 3)
  const Mat b = {{7, 8}, {9, 10}, {11, 12}};     // (3, 2)
  const Mat b_t = {{7, 9, 11}, {8, 10, 12}};     // (2, 3), b stored transposed
  const Mat want = {{58, 64}, {139, 154}};       // worked by hand
  CHECK(differences(attn::matmul(a, b), want, 0.0) == "");
  CHECK(differences(attn::matmul_bt(a, b_t), want, 0.0) == "");
}

TEST_CASE("batched matmul multiplies matching matrices, not NumPy dot") {
  // Trap 3 (docs/architecture.md): xt::linalg::dot on (2,3,4)-like inputs gives a rank-4 result. Each batch
  // here has its own matrices, so mixing batches would show in the numbers as well.
  const Ten3 a = {{{1, 0}, {0, 1}, {1, 1}}, {{2, 0}, {0, 3}, {1, -1}}};  // (2, 3, 2)
  const Ten3 b = {{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}};                  // (2, 2, 2)
  const Ten3 want = {{{1, 2}, {3, 4}, {4, 6}}, {{10, 12}, {21, 24}, {-2, -2}}};
  CHECK(differences(attn::matmul(a, b), want, 0.0) == "");
  const Ten3 b_t = {{{1, 3}, {2, 4}}, {{5, 7}, {6, 8}}};  // each b transposed
  CHECK(differences(attn::matmul_bt(a, b_t), want, 0.0) == "");

  // Rank 4: the same two products laid out as (B=1, h=2, ...) and (B=2, h=1, ...).
  const Ten4 a4 = xt::reshape_view(a, {1, 2, 3, 2});
  const Ten4 b4 = xt::reshape_view(b, {1, 2, 2, 2});
  const Ten4 bt4 = xt::reshape_view(b_t, {2, 1, 2, 2});
  const Ten4 want4 = xt::reshape_view(want, {1, 2, 3, 2});
  CHECK(differences(attn::matmul(a4, b4), want4, 0.0) == "");
  const Ten4 a4b = xt::reshape_view(a, {2, 1, 3, 2});
  CHECK(differences(attn::matmul_bt(a4b, bt4), Ten4(xt::reshape_view(want, {2, 1, 3, 2})), 0.0) == "");
}

TEST_CASE("matmul of every row by one matrix") {
  const Ten3 x = {{{1, 2, 3}}, {{4, 5, 6}}};      // (2, 1, 3)
  const Mat w = {{7, 8}, {9, 10}, {11, 12}};      // (3, 2)
  const Mat w_t = {{7, 9, 11}, {8, 10, 12}};      // (2, 3), as nn.Linear stores a weight
  const Ten3 want = {{{58, 64}}, {{139, 154}}};
  CHECK(differences(attn::matmul(x, w), want, 0.0) == "");
  CHECK(differences(attn::matmul_bt(x, w_t), want, 0.0) == "");
}

TEST_CASE("matmul shape mismatches throw invalid_argument naming both shapes") {
  const Mat m23 = xt::zeros<float>({2, 3}), m24 = xt::zeros<float>({2, 4});
  const Ten3 t233 = xt::zeros<float>({2, 3, 3}), t334 = xt::zeros<float>({3, 3, 4}), t243 = xt::zeros<float>({2, 4, 3}),
             t244 = xt::zeros<float>({2, 4, 4});
  const Ten4 f1 = xt::zeros<float>({1, 2, 3, 4}), f2 = xt::zeros<float>({1, 2, 5, 4}), f3 = xt::zeros<float>({1, 3, 4, 4});

  struct Case {
    const char* what;
    std::string message;
    const char* a;
    const char* b;
  };
  const Case cases[] = {
      {"matmul 2-D", invalid_argument_of([&] { attn::matmul(m23, m24); }), "(2, 3)", "(2, 4)"},
      {"matmul_bt 2-D", invalid_argument_of([&] { attn::matmul_bt(m23, m24); }), "(2, 3)", "(2, 4)"},
      {"matmul 3-D batch", invalid_argument_of([&] { attn::matmul(t233, t334); }), "(2, 3, 3)", "(3, 3, 4)"},
      {"matmul 3-D inner", invalid_argument_of([&] { attn::matmul(t233, t243); }), "(2, 3, 3)", "(2, 4, 3)"},
      {"matmul_bt 3-D", invalid_argument_of([&] { attn::matmul_bt(t233, t244); }), "(2, 3, 3)", "(2, 4, 4)"},
      {"matmul 4-D", invalid_argument_of([&] { attn::matmul(f1, f2); }), "(1, 2, 3, 4)", "(1, 2, 5, 4)"},
      {"matmul_bt 4-D heads", invalid_argument_of([&] { attn::matmul_bt(f1, f3); }), "(1, 2, 3, 4)", "(1, 3, 4, 4)"},
      {"rows @ matrix", invalid_argument_of([&] { attn::matmul(t233, m24); }), "(2, 3, 3)", "(2, 4)"},
      {"rows @ matrix^T", invalid_argument_of([&] { attn::matmul_bt(t233, m24); }), "(2, 3, 3)", "(2, 4)"},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.what), ": \"", c.message, "\"");
    CHECK(contains(c.message, c.a));
    CHECK(contains(c.message, c.b));
  }
}

// ----------------------------------------------------------------------------------- stats

TEST_CASE("entropy: log(n) for a uniform row, 0 for a one-hot row") {
  for (std::size_t n : {1, 2, 5, 64}) {
    const Vec uniform = xt::ones<float>({n}) / static_cast<float>(n);
    CHECK(attn::entropy(uniform) == doctest::Approx(std::log(static_cast<double>(n))).epsilon(1e-6));
  }
  CHECK(attn::entropy(Vec{0.0f, 1.0f, 0.0f}) == 0.0);
}

TEST_CASE("softmax_jacobian_norm: 0 for one-hot, known value for uniform") {
  CHECK(attn::softmax_jacobian_norm(Vec{0.0f, 0.0f, 1.0f, 0.0f}) == 0.0);
  // p = (1/2, 1/2): J = [[1/4, -1/4], [-1/4, 1/4]], Frobenius norm sqrt(4/16) = 1/2.
  CHECK(attn::softmax_jacobian_norm(Vec{0.5f, 0.5f}) == doctest::Approx(0.5));
  // A peaked row passes back less gradient than a flat one: the saturation lesson's point.
  CHECK(attn::softmax_jacobian_norm(Vec{0.98f, 0.01f, 0.01f}) < attn::softmax_jacobian_norm(Vec{0.4f, 0.3f, 0.3f}));
}

TEST_CASE("moments: mean and population variance") {
  const attn::Moments m = attn::moments(Vec{1.0f, 2.0f, 3.0f, 4.0f});
  CHECK(m.mean == doctest::Approx(2.5));
  CHECK(m.variance == doctest::Approx(1.25));  // divides by n, not n - 1
  const attn::Moments one = attn::moments(Vec{7.0f});
  CHECK(one.mean == 7.0);
  CHECK(one.variance == 0.0);
  CHECK(invalid_argument_of([] { attn::moments(Vec(xt::zeros<float>({0}))); }) != "");
}

TEST_CASE("max_abs_diff: the largest gap, and NaN if either side holds NaN") {
  const Vec a{1.0f, 2.0f, 3.0f}, b{1.0f, 2.5f, 2.0f};
  CHECK(attn::max_abs_diff(a, b) == 1.0f);
  CHECK(attn::max_abs_diff(a, a) == 0.0f);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(std::isnan(attn::max_abs_diff(a, Vec{1.0f, nan, 3.0f})));
  CHECK(std::isnan(attn::max_abs_diff(Vec{nan, 2.0f, 3.0f}, a)));
  // NaN after a large difference must still win: a broken route never looks equal.
  CHECK(std::isnan(attn::max_abs_diff(Vec{100.0f, 2.0f, nan}, a)));
  const std::string msg = invalid_argument_of([&] { attn::max_abs_diff(a, Vec{1.0f, 2.0f}); });
  CHECK(contains(msg, "(3,)"));
  CHECK(contains(msg, "(2,)"));
}

TEST_CASE("row_sums sums the last axis") {
  const Ten3 x = {{{1, 2}, {3, 4}}, {{5, 6}, {-1, 1}}};
  CHECK(differences(attn::row_sums(x), Mat{{3, 7}, {11, 0}}, 0.0) == "");
}

TEST_CASE("shape_str writes shapes as Python tuples") {
  CHECK(attn::shape_str({2, 6, 3}) == "(2, 6, 3)");
  CHECK(attn::shape_str({6}) == "(6,)");
  CHECK(attn::shape_str({}) == "()");
}

// ------------------------------------------------------------------------------- embedding

TEST_CASE("word_seed is 32-bit FNV-1a") {
  // Published FNV-1a test vectors: "" -> 0x811c9dc5, "a" -> 0xe40c292c, "foobar" -> 0xbf9cf968.
  CHECK(attn::word_seed("") == 0x811c9dc5u);
  CHECK(attn::word_seed("a") == 0xe40c292cu);
  CHECK(attn::word_seed("foobar") == 0xbf9cf968u);
}

TEST_CASE("word_embedding: same word same vector, the one torch.rand gives for its seed") {
  const Vec a = attn::word_embedding("journey", 5);
  CHECK(attn::to_shape(a.shape()) == attn::Shape{5});
  CHECK(differences(attn::word_embedding("journey", 5), a, 0.0) == "");
  CHECK(differences(attn::word_embedding("starts", 5), a, 0.0) != "");
  // A learner rebuilds it with torch.manual_seed(seed); torch.rand(d_in).
  CHECK(differences(attn::TorchGenerator(attn::word_seed("journey")).rand(5), a, 0.0) == "");
}
