// Every backward pass (namespace attn::grad, beside its forward pass in core/<op>.hpp) against
// central finite differences, in double precision.
//
// Why double: a central difference (f(x + h) - f(x - h)) / 2h in float32 loses about
// 1e-7 * |f| / h to rounding, which at any usable h swamps the error we look for. So every
// operation, forward and backward, is compiled for double too (core's templates are
// instantiated for float and double), and the analytic gradient must match the numeric one of
// core's own double forward pass to 1e-7. A short plain-loop double forward pass is also written
// here for linear, softmax, attention and the head moves: core's double forward is first held to
// it, and core's float forward to both, so the operation differentiated is the one the lessons
// run. The float backward instantiations, which training used to run, are then held to the
// double ones within float rounding.
//
// Every test differentiates a scalar L = sum(out * R) with R a fixed random tensor, so
// dL/dout = R and the backward pass receives R as its incoming gradient.
//
// Legend: B batch, h heads, T tokens, S keys, d_k head width, in/out layer widths, V classes.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include <xtensor/xview.hpp>

#include "core/attention.hpp"
#include "core/cross_entropy.hpp"
#include "core/embedding.hpp"
#include "core/heads.hpp"
#include "core/linear.hpp"
#include "core/residual.hpp"
#include "core/softmax.hpp"
#include "support.hpp"

using namespace attn;
using attn::test::contains;
using attn::test::differences;
using attn::test::refusal;

namespace {

template <std::size_t N>
using D = xt::xtensor<double, N>;

// Central differences agree with an exact gradient to about h^2 (truncation) plus 1e-16 / h
// (rounding) relative to the values: 1e-10 at h = 1e-5 for these O(1) functions. 1e-7 leaves
// room and still catches any real mistake (a missing term is O(1e-2) or more).
constexpr double kStep = 1e-5;
constexpr double kTol = 1e-7;

// U(-1, 1) as doubles that are exact float32 values (so the float forward pass sees the same inputs).
template <std::size_t N>
D<N> random_double(std::uint64_t seed, const std::array<std::size_t, N>& shape) {
  xt::xtensor<float, N> f = xt::empty<float>(shape);
  TorchGenerator(seed).uniform_(f.data(), f.size(), -1.0f, 1.0f);
  return xt::cast<double>(f);
}

template <std::size_t N>
xt::xtensor<float, N> to_float(const D<N>& d) {
  return xt::cast<float>(d);
}

template <class A, class B>
double dot(const A& a, const B& b) {
  double s = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a.data()[i] * b.data()[i];
  return s;
}

// dL/dx by central differences, one element of x at a time; `loss` reads x.
template <std::size_t N, class F>
D<N> numeric_gradient(D<N>& x, F loss) {
  D<N> g = xt::zeros<double>(x.shape());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double keep = x.data()[i];
    x.data()[i] = keep + kStep;
    const double up = loss();
    x.data()[i] = keep - kStep;
    const double down = loss();
    x.data()[i] = keep;
    g.data()[i] = (up - down) / (2 * kStep);
  }
  return g;
}

// ---- double forward passes, each checked against core below ----

D<3> linear_d(const D<3>& x, const D<2>& w, const D<1>& b) {  // (B, T, in) -> (B, T, out)
  const std::size_t B = x.shape()[0], T = x.shape()[1], in = x.shape()[2], out = w.shape()[0];
  D<3> y = xt::zeros<double>({B, T, out});  // (B, T, out)
  for (std::size_t r = 0; r < B * T; ++r)
    for (std::size_t o = 0; o < out; ++o) {
      double s = b.size() ? b(o) : 0.0;
      for (std::size_t i = 0; i < in; ++i) s += x.data()[r * in + i] * w(o, i);
      y.data()[r * out + o] = s;
    }
  return y;
}

template <std::size_t N>
D<N> softmax_d(const D<N>& x) {  // (..., n) -> (..., n)
  D<N> y = x;
  const std::size_t n = x.shape()[N - 1];
  for (std::size_t r = 0; r < x.size() / n; ++r) {
    double* row = y.data() + r * n;
    double top = -std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < n; ++j) top = std::max(top, row[j]);
    double sum = 0.0;
    for (std::size_t j = 0; j < n; ++j) sum += (row[j] = std::exp(row[j] - top));
    for (std::size_t j = 0; j < n; ++j) row[j] /= sum;
  }
  return y;
}

struct AttentionD {
  D<4> weights;  // (B, h, T, S)
  D<4> context;  // (B, h, T, d_k)
};

// Scores in, so the same function serves the gradient with respect to the scores.
AttentionD attention_from_scores_d(const D<4>& scores, const D<4>& v, std::size_t d_k, bool causal) {
  const std::size_t B = scores.shape()[0], h = scores.shape()[1], T = scores.shape()[2], S = scores.shape()[3];
  const double root = std::sqrt(static_cast<double>(d_k));
  D<4> scaled = scores / root;  // (B, h, T, S)
  if (causal)
    for (std::size_t m = 0; m < B * h; ++m)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t s = t + 1; s < S; ++s) scaled.data()[(m * T + t) * S + s] = -INFINITY;
  AttentionD a;
  a.weights = softmax_d(scaled);  // (B, h, T, S)
  const std::size_t d_v = v.shape()[3];
  a.context = xt::zeros<double>({B, h, T, d_v});  // (B, h, T, d_v)
  for (std::size_t m = 0; m < B * h; ++m)
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t c = 0; c < d_v; ++c) {
        double s = 0.0;
        for (std::size_t j = 0; j < S; ++j) s += a.weights.data()[(m * T + t) * S + j] * v.data()[(m * S + j) * d_v + c];
        a.context.data()[(m * T + t) * d_v + c] = s;
      }
  return a;
}

D<4> scores_d(const D<4>& q, const D<4>& k) {  // Q @ K^T: (B, h, T, d_k), (B, h, S, d_k) -> (B, h, T, S)
  const std::size_t B = q.shape()[0], h = q.shape()[1], T = q.shape()[2], d_k = q.shape()[3], S = k.shape()[2];
  D<4> s = xt::zeros<double>({B, h, T, S});  // (B, h, T, S)
  for (std::size_t m = 0; m < B * h; ++m)
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t j = 0; j < S; ++j)
        for (std::size_t c = 0; c < d_k; ++c)
          s.data()[(m * T + t) * S + j] += q.data()[(m * T + t) * d_k + c] * k.data()[(m * S + j) * d_k + c];
  return s;
}

AttentionD attention_d(const D<4>& q, const D<4>& k, const D<4>& v, bool causal) {
  return attention_from_scores_d(scores_d(q, k), v, q.shape()[3], causal);
}

D<4> split_d(const D<3>& x, std::size_t h) {  // (B, T, d) -> (B, h, T, d_k)
  const std::size_t B = x.shape()[0], T = x.shape()[1], d_k = x.shape()[2] / h;
  D<4> out = xt::zeros<double>({B, h, T, d_k});  // (B, h, T, d_k)
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < h; ++i)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t c = 0; c < d_k; ++c) out(b, i, t, c) = x(b, t, i * d_k + c);
  return out;
}

D<3> merge_d(const D<4>& x) {  // (B, h, T, d_k) -> (B, T, d)
  const std::size_t B = x.shape()[0], h = x.shape()[1], T = x.shape()[2], d_k = x.shape()[3];
  D<3> out = xt::zeros<double>({B, T, h * d_k});  // (B, T, d)
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < h; ++i)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t c = 0; c < d_k; ++c) out(b, t, i * d_k + c) = x(b, i, t, c);
  return out;
}

}  // namespace

TEST_CASE("linear_backward: dx, dW and db match central differences") {
  D<3> x = random_double<3>(1, {2, 3, 4});  // (B, T, in)
  D<2> w = random_double<2>(2, {5, 4});     // (out, in)
  D<1> b = random_double<1>(3, {5});        // (out,)
  const D<3> R = random_double<3>(4, {2, 3, 5});  // dL/dy (B, T, out)

  // core's linear in double is the plain loop, and in float the same to float rounding.
  Linear layer{to_float(w), to_float(b)};
  CHECK(differences(linear(layer, to_float(x)), linear_d(x, w, b), 1e-6) == "");
  CHECK(differences(linear(LinearT<double>{w, b}, x), linear_d(x, w, b), 1e-14) == "");
  CHECK(contains(refusal([&] { linear(LinearT<double>{w, b}, R); }), "linear: shapes do not fit"));

  const auto g = grad::linear_backward(x, w, R, true);
  auto loss = [&] { return dot(linear(LinearT<double>{w, b}, x), R); };  // core's forward, in double
  CHECK(differences(g.x, numeric_gradient(x, loss), kTol) == "");
  CHECK(differences(g.weight, numeric_gradient(w, loss), kTol) == "");
  CHECK(differences(g.bias, numeric_gradient(b, loss), kTol) == "");
  CHECK(grad::linear_backward(x, w, R, false).bias.size() == 0);

  const auto gf = grad::linear_backward(to_float(x), to_float(w), to_float(R), true);
  CHECK(differences(gf.weight, g.weight, 1e-5) == "");
  CHECK(differences(gf.x, g.x, 1e-5) == "");
  CHECK(contains(refusal([&] { grad::linear_backward(x, w, x, true); }), "dy (2, 3, 4)"));
}

TEST_CASE("softmax_rows_backward matches central differences, and a masked entry gets nothing") {
  D<3> x = random_double<3>(5, {2, 3, 6}) * 3.0;  // (B, T, S)
  const D<3> R = random_double<3>(6, {2, 3, 6});   // dL/dy
  CHECK(differences(softmax_rows(to_float(x)), softmax_d(x), 1e-6) == "");
  CHECK(differences(softmax_rows(x), softmax_d(x), 1e-14) == "");
  const D<3> y = softmax_rows(x);
  auto loss = [&] { return dot(softmax_rows(x), R); };  // core's forward, in double
  CHECK(differences(grad::softmax_rows_backward(y, R), numeric_gradient(x, loss), kTol) == "");

  // Row 0 with its last three entries masked (-inf): their weights are 0 and so are their gradients.
  for (std::size_t j = 3; j < 6; ++j) x(0, 0, j) = -INFINITY;
  const D<3> dx = grad::softmax_rows_backward(softmax_d(x), R);
  for (std::size_t j = 3; j < 6; ++j) CHECK(dx(0, 0, j) == 0.0);
  double row = 0.0;  // softmax is unchanged by adding a constant to a row, so its gradient sums to 0
  for (std::size_t j = 0; j < 6; ++j) row += dx(0, 1, j);
  CHECK(std::fabs(row) < 1e-15);
  CHECK(contains(refusal([&] { grad::softmax_rows_backward(y, D<3>(xt::zeros<double>({2, 3, 5}))); }), "(2, 3, 5)"));
}

TEST_CASE("attention_backward: dQ, dK, dV and every intermediate match central differences (causal)") {
  D<4> q = random_double<4>(7, {2, 2, 4, 3});  // (B, h, T, d_k)
  D<4> k = random_double<4>(8, {2, 2, 4, 3});  // (B, h, S, d_k)
  D<4> v = random_double<4>(9, {2, 2, 4, 3});  // (B, h, S, d_v)
  const D<4> R = random_double<4>(10, {2, 2, 4, 3});  // dL/dcontext

  const Attention core = scaled_dot_product_attention(to_float(q), to_float(k), to_float(v), true);
  const AttentionD ref = attention_d(q, k, v, true);
  CHECK(differences(core.attn_weights, ref.weights, 1e-6) == "");
  CHECK(differences(core.context, ref.context, 1e-6) == "");
  const AttentionT<double> core_d = scaled_dot_product_attention(q, k, v, true);
  CHECK(differences(core_d.attn_weights, ref.weights, 1e-14) == "");
  CHECK(differences(core_d.context, ref.context, 1e-14) == "");
  CHECK(differences(core_d.attn_scores, scores_d(q, k), 1e-14) == "");

  const auto g = grad::attention_backward(q, k, v, core_d.attn_weights, R);
  auto loss = [&] { return dot(scaled_dot_product_attention(q, k, v, true).context, R); };  // core's, in double
  CHECK(differences(g.queries, numeric_gradient(q, loss), kTol) == "");
  CHECK(differences(g.keys, numeric_gradient(k, loss), kTol) == "");
  CHECK(differences(g.values, numeric_gradient(v, loss), kTol) == "");

  // Through the intermediates: the scores and the weights as inputs of the rest of the pass.
  D<4> scores = scores_d(q, k);  // (B, h, T, S)
  auto from_scores = [&] { return dot(attention_from_scores_d(scores, v, 3, true).context, R); };
  const D<4> d_scores = numeric_gradient(scores, from_scores);
  CHECK(differences(g.attn_scores, d_scores, kTol) == "");
  // Nothing flows from a query to a future key: those score gradients are exactly 0.
  for (std::size_t m = 0; m < 4; ++m)
    for (std::size_t t = 0; t < 4; ++t)
      for (std::size_t s = t + 1; s < 4; ++s) CHECK(g.attn_scores.data()[(m * 4 + t) * 4 + s] == 0.0);
  D<4> weights = ref.weights;
  auto from_weights = [&] {  // context = weights @ V
    double s = 0.0;
    for (std::size_t m = 0; m < 4; ++m)
      for (std::size_t t = 0; t < 4; ++t)
        for (std::size_t c = 0; c < 3; ++c)
          for (std::size_t j = 0; j < 4; ++j)
            s += weights.data()[(m * 4 + t) * 4 + j] * v.data()[(m * 4 + j) * 3 + c] * R.data()[(m * 4 + t) * 3 + c];
    return s;
  };
  CHECK(differences(g.attn_weights, numeric_gradient(weights, from_weights), kTol) == "");

  // The float instantiation (what training runs) agrees to float rounding.
  const auto gf = grad::attention_backward(to_float(q), to_float(k), to_float(v), core.attn_weights, to_float(R));
  CHECK(differences(gf.queries, g.queries, 1e-5) == "");
  CHECK(differences(gf.keys, g.keys, 1e-5) == "");
  CHECK(differences(gf.values, g.values, 1e-5) == "");
  CHECK(contains(refusal([&] { grad::attention_backward(q, k, v, q, R); }), "attn_weights (2, 2, 4, 3)"));
}

TEST_CASE("attention_backward without a mask matches central differences too") {
  D<4> q = random_double<4>(11, {1, 3, 5, 2});  // (B, h, T, d_k)
  D<4> k = random_double<4>(12, {1, 3, 5, 2});
  D<4> v = random_double<4>(13, {1, 3, 5, 2});
  const D<4> R = random_double<4>(14, {1, 3, 5, 2});
  const AttentionT<double> core_d = scaled_dot_product_attention(q, k, v, false);
  CHECK(differences(core_d.context, attention_d(q, k, v, false).context, 1e-14) == "");
  const auto g = grad::attention_backward(q, k, v, core_d.attn_weights, R);
  auto loss = [&] { return dot(scaled_dot_product_attention(q, k, v, false).context, R); };
  CHECK(differences(g.queries, numeric_gradient(q, loss), kTol) == "");
  CHECK(differences(g.keys, numeric_gradient(k, loss), kTol) == "");
  CHECK(differences(g.values, numeric_gradient(v, loss), kTol) == "");
}

TEST_CASE("head split and merge: their backward passes are the reverse moves") {
  D<3> x = random_double<3>(15, {2, 3, 6});  // (B, T, d)
  const D<4> R4 = random_double<4>(16, {2, 3, 3, 2});  // dL/d heads (B, h, T, d_k)
  // The reference moves are core's split_heads + transpose and transpose + merge_heads.
  const Ten4 heads = swap_token_head_axes(split_heads(to_float(x), 3));  // (B, h, T, d_k)
  CHECK(differences(heads, split_d(x, 3), 0.0) == "");
  CHECK(differences(merge_heads(swap_token_head_axes(heads)), x, 0.0) == "");
  // The same moves in double, and to_heads / from_heads, which do both steps at once.
  CHECK(differences(swap_token_head_axes(split_heads(x, 3)), split_d(x, 3), 0.0) == "");
  D<4> moved;
  to_heads(x, 3, moved);  // (B, h, T, d_k)
  CHECK(differences(moved, split_d(x, 3), 0.0) == "");
  D<3> back;
  from_heads(moved, back);  // (B, T, d)
  CHECK(differences(back, x, 0.0) == "");
  CHECK(differences(merge_heads(swap_token_head_axes(moved)), x, 0.0) == "");
  CHECK(contains(refusal([&] { to_heads(x, 4, moved); }), "to_heads: 4 heads do not divide d_out 6"));

  auto split_loss = [&] { return dot(split_d(x, 3), R4); };
  CHECK(differences(grad::split_heads_backward(R4), numeric_gradient(x, split_loss), kTol) == "");

  D<4> hx = random_double<4>(17, {2, 3, 3, 2});  // (B, h, T, d_k)
  const D<3> R3 = random_double<3>(18, {2, 3, 6});  // dL/d merged (B, T, d)
  auto merge_loss = [&] { return dot(merge_d(hx), R3); };
  CHECK(differences(grad::merge_heads_backward(R3, 3), numeric_gradient(hx, merge_loss), kTol) == "");
  CHECK(contains(refusal([&] { grad::merge_heads_backward(R3, 4); }), "4 heads do not divide d_out 6"));
}

TEST_CASE("embedding_backward scatter-adds: repeated ids sum, unused rows stay zero") {
  D<2> table = random_double<2>(19, {6, 3});  // (V, d)
  Ids ids = xt::zeros<std::size_t>({2, 4});   // (B, T)
  const std::size_t values[] = {1, 4, 1, 0, 4, 4, 2, 1};
  std::copy(std::begin(values), std::end(values), ids.begin());
  const D<3> R = random_double<3>(20, {2, 4, 3});  // dL/dx (B, T, d)
  CHECK(differences(embedding_lookup(to_float(table), ids), xt::cast<float>(embedding_lookup(table, ids)), 0.0) == "");
  auto loss = [&] { return dot(embedding_lookup(table, ids), R); };
  const D<2> g = grad::embedding_backward(ids, R, 6);
  CHECK(differences(g, numeric_gradient(table, loss), kTol) == "");
  for (std::size_t c = 0; c < 3; ++c) {
    CHECK(g(3, c) == 0.0);  // row 3 and row 5 were never looked up
    CHECK(g(5, c) == 0.0);
    CHECK(g(1, c) == doctest::Approx(R(0, 0, c) + R(0, 2, c) + R(1, 3, c)).epsilon(1e-15));  // id 1, three times
  }
  ids(1, 1) = 6;
  CHECK(contains(refusal([&] { grad::embedding_backward(ids, R, 6); }), "id 6 is outside the table of 6 rows"));
  CHECK(contains(refusal([&] { embedding_lookup(table, ids); }), "id 6"));
  const Ids pos = position_ids(2, 3);  // (B, T)
  CHECK(pos(1, 0) == 0);
  CHECK(pos(1, 2) == 2);
}

TEST_CASE("cross_entropy and its backward: PyTorch's values, stable at +-1e4, and central differences") {
  // F.cross_entropy(z, t) and z.grad in PyTorch 1.13 (float32) for
  // z = [[1, 2, 3], [1e4, 0, -1e4], [0.5, 0.5, 0.5]], t = [2, 1, 0]: loss 3333.835205078125.
  Mat z = xt::empty<float>({3, 3});  // (N, V)
  const float zs[] = {1, 2, 3, 1e4f, 0, -1e4f, 0.5f, 0.5f, 0.5f};
  std::copy(std::begin(zs), std::end(zs), z.begin());
  const std::vector<std::size_t> t = {2, 1, 0};
  CHECK(cross_entropy(z, t) == doctest::Approx(3333.835205078125).epsilon(1e-7));
  Mat expected = xt::empty<float>({3, 3});
  const float gs[] = {0.03001019f, 0.08157617f, -0.11158633f, 0.33333334f, -0.33333334f, 0.0f,
                      -0.22222224f, 0.11111110f, 0.11111110f};
  std::copy(std::begin(gs), std::end(gs), expected.begin());
  CHECK(differences(grad::cross_entropy_backward(z, t), expected, 1e-7) == "");

  D<2> logits = random_double<2>(21, {5, 4}) * 4.0;  // (N, V)
  const std::vector<std::size_t> targets = {0, 3, 3, 1, 2};
  auto loss = [&] { return cross_entropy(logits, targets); };
  CHECK(differences(grad::cross_entropy_backward(logits, targets), numeric_gradient(logits, loss), kTol) == "");
  CHECK(contains(refusal([&] { cross_entropy(logits, {0, 1}); }), "2 targets for logits (5, 4)"));
  CHECK(contains(refusal([&] { grad::cross_entropy_backward(logits, {0, 1, 2, 3, 4}); }), "target 4 is not one of 4"));
}

TEST_CASE("cross_entropy with ignored targets: the mean is over the graded rows, the others get no gradient") {
  // F.cross_entropy(z, t) with t = [2, -100, 0] (ignore_index) equals the mean over rows 0 and 2.
  D<2> logits = random_double<2>(24, {3, 4}) * 3.0;  // (N, V)
  const std::vector<std::size_t> targets = {2, kIgnoreTarget, 0};
  const double both = cross_entropy(D<2>(xt::view(logits, xt::keep(0, 2), xt::all())), std::vector<std::size_t>{2, 0});
  CHECK(cross_entropy(logits, targets) == doctest::Approx(both).epsilon(1e-15));
  auto loss = [&] { return cross_entropy(logits, targets); };
  const D<2> g = grad::cross_entropy_backward(logits, targets);
  CHECK(differences(g, numeric_gradient(logits, loss), kTol) == "");
  for (std::size_t v = 0; v < 4; ++v) CHECK(g(1, v) == 0.0);
  CHECK(contains(refusal([&] { cross_entropy(logits, {kIgnoreTarget, kIgnoreTarget, kIgnoreTarget}); }),
                 "every target is ignored"));
}

TEST_CASE("a residual's backward pass adds the gradient of each path") {
  D<2> into = random_double<2>(22, {2, 3});
  const D<2> before = into;
  const D<2> d = random_double<2>(23, {2, 3});
  add_into(into, d);
  CHECK(differences(into, before + d, 0.0) == "");
  CHECK(contains(refusal([&] { add_into(into, D<2>(xt::zeros<double>({3, 2}))); }), "(3, 2)"));
}
