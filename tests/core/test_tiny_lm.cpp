// The tiny causal language model (core/tiny_lm.*) against PyTorch's `grad_tinylm` fixture:
// the same weights from the same seed, the same forward pass, every parameter's gradient, and
// the loss after one SGD step (tests/data/grad_tinylm__*.npy, described in modern_cases.json).
// Then a two-block model, which the fixture does not cover, against a directional finite
// difference of its loss.
//
// Legend: B batch, T tokens, V vocabulary, d width, h heads.
#include <doctest/doctest.h>

#include <cmath>
#include <utility>

#include "core/attention.hpp"
#include "core/tiny_lm.hpp"
#include "support.hpp"

using namespace attn;
using attn::test::contains;
using attn::test::differences;
using attn::test::load_fixture;
using attn::test::refusal;

namespace {

// torch.manual_seed(13); tok = nn.Embedding(7, 8), pos = nn.Embedding(5, 8), W_query, W_key,
// W_value = nn.Linear(8, 8, bias=False), out_proj = nn.Linear(8, 8), unembed = nn.Linear(8, 7, bias=False)
TinyLm fixture_model() {
  TorchGenerator gen(13);
  return make_tiny_lm(gen, 7, 5, 8, 2, 1);
}

// torch.manual_seed(14); ids = torch.randint(0, 7, (2, 5)); targets = torch.randint(0, 7, (2, 5))
void fixture_data(Ids& ids, Ids& targets) {
  TorchGenerator gen(14);
  ids = xt::empty<std::size_t>({2, 5});      // (B, T)
  targets = xt::empty<std::size_t>({2, 5});  // (B, T)
  const auto a = gen.randint(0, 7, 10), b = gen.randint(0, 7, 10);
  std::copy(a.begin(), a.end(), ids.begin());
  std::copy(b.begin(), b.end(), targets.begin());
}

template <std::size_t N>
xt::xtensor<float, N> ids_as_float(const xt::xtensor<std::size_t, N>& ids) {
  return xt::cast<float>(ids);
}

// The fixture's *_weight files hold the parameters as drawn, before its SGD step.
void check_weights_as_drawn(const TinyLm& m) {
  CHECK(differences(m.tok, load_fixture<2>("grad_tinylm__tok_weight.npy"), 1e-6) == "");
  CHECK(differences(m.pos, load_fixture<2>("grad_tinylm__pos_weight.npy"), 1e-6) == "");
  CHECK(differences(m.blocks[0].W_query.weight, load_fixture<2>("grad_tinylm__W_query_weight.npy"), 1e-6) == "");
  CHECK(differences(m.blocks[0].W_key.weight, load_fixture<2>("grad_tinylm__W_key_weight.npy"), 1e-6) == "");
  CHECK(differences(m.blocks[0].W_value.weight, load_fixture<2>("grad_tinylm__W_value_weight.npy"), 1e-6) == "");
  CHECK(differences(m.blocks[0].out_proj.weight, load_fixture<2>("grad_tinylm__out_proj_weight.npy"), 1e-6) == "");
  CHECK(differences(m.blocks[0].out_proj.bias, load_fixture<1>("grad_tinylm__out_proj_bias.npy"), 1e-6) == "");
  CHECK(differences(m.unembed.weight, load_fixture<2>("grad_tinylm__unembed_weight.npy"), 1e-6) == "");
}

}  // namespace

TEST_CASE("make_tiny_lm draws PyTorch's weights and randint draws its ids") {
  const TinyLm m = fixture_model();
  CHECK(m.parameters() == 7 * 8 + 5 * 8 + 4 * 64 + 8 + 7 * 8);
  CHECK(m.tok(0, 0) == doctest::Approx(0.43715855f).epsilon(1e-6));  // nn.Embedding(7, 8).weight[0, 0], printed by PyTorch
  check_weights_as_drawn(m);
  Ids ids, targets;
  fixture_data(ids, targets);
  CHECK(differences(ids_as_float(ids), load_fixture<2>("grad_tinylm__ids.npy"), 0.0) == "");
  CHECK(differences(ids_as_float(targets), load_fixture<2>("grad_tinylm__targets.npy"), 0.0) == "");
}

TEST_CASE("the forward pass, the loss and every gradient match PyTorch's grad_tinylm") {
  TinyLm m = fixture_model();
  Ids ids, targets;
  fixture_data(ids, targets);
  const TinyLmForward<float> f = tiny_lm_forward(m, ids);
  CHECK(differences(f.blocks[0].attn_weights, load_fixture<4>("grad_tinylm__attn_weights.npy"), 1e-6) == "");
  CHECK(differences(f.logits, load_fixture<3>("grad_tinylm__logits.npy"), 1e-5) == "");
  const float loss = tiny_lm_loss(f, targets);
  CHECK(loss == doctest::Approx(load_fixture<1>("grad_tinylm__loss.npy")(0)).epsilon(1e-6));

  const TinyLmGrads<float> g = tiny_lm_backward(m, f, targets);
  // Gradients here are 1e-3 .. 1; float32 sums in another order differ by a few 1e-8.
  const double tol = 1e-6;
  CHECK(differences(g.params.tok, load_fixture<2>("grad_tinylm__tok_weight_grad.npy"), tol) == "");
  CHECK(differences(g.params.pos, load_fixture<2>("grad_tinylm__pos_weight_grad.npy"), tol) == "");
  const TinyLmBlock& gb = g.params.blocks[0];
  CHECK(differences(gb.W_query.weight, load_fixture<2>("grad_tinylm__W_query_weight_grad.npy"), tol) == "");
  CHECK(differences(gb.W_key.weight, load_fixture<2>("grad_tinylm__W_key_weight_grad.npy"), tol) == "");
  CHECK(differences(gb.W_value.weight, load_fixture<2>("grad_tinylm__W_value_weight_grad.npy"), tol) == "");
  CHECK(differences(gb.out_proj.weight, load_fixture<2>("grad_tinylm__out_proj_weight_grad.npy"), tol) == "");
  CHECK(differences(gb.out_proj.bias, load_fixture<1>("grad_tinylm__out_proj_bias_grad.npy"), tol) == "");
  CHECK(differences(g.params.unembed.weight, load_fixture<2>("grad_tinylm__unembed_weight_grad.npy"), tol) == "");

  // p -= 0.5 * grad on every parameter, through the same list Adam reads.
  for (const Param& p : tiny_lm_params(m, g.params))
    for (std::size_t i = 0; i < p.size; ++i) p.value[i] -= 0.5f * p.grad[i];
  const float after = tiny_lm_loss(tiny_lm_forward(m, ids), targets);
  // The step went through the list: each parameter is now the fixture's drawn value minus half
  // the fixture's gradient.
  const Mat tok_stepped = load_fixture<2>("grad_tinylm__tok_weight.npy") - 0.5f * load_fixture<2>("grad_tinylm__tok_weight_grad.npy");
  const Mat unembed_stepped =
      load_fixture<2>("grad_tinylm__unembed_weight.npy") - 0.5f * load_fixture<2>("grad_tinylm__unembed_weight_grad.npy");
  CHECK(differences(m.tok, tok_stepped, 1e-6) == "");
  CHECK(differences(m.unembed.weight, unembed_stepped, 1e-6) == "");
  CHECK(after == doctest::Approx(load_fixture<1>("grad_tinylm__loss_after_sgd.npy")(0)).epsilon(1e-5));
}

TEST_CASE("each block keeps what core's attention returns, in float and in double, and double agrees with float") {
  const TinyLm m = fixture_model();
  Ids ids, targets;
  fixture_data(ids, targets);
  const TinyLmForward<float> f = tiny_lm_forward(m, ids);
  // The forward pass calls core's attention into buffers it keeps; what they hold is exactly
  // what the returning form gives on the same heads.
  const TinyLmBlockForward<float>& b = f.blocks[0];
  const Attention core = scaled_dot_product_attention(b.queries, b.keys, b.values, true);
  CHECK(b.attn_scores == core.attn_scores);
  CHECK(b.scaled == core.scaled);
  CHECK(b.attn_weights == core.attn_weights);
  CHECK(b.context == core.context);
  // model.double(): the same weights through the double instantiations of the same operations.
  const TinyLmT<double> md = to_double(m);
  const TinyLmForward<double> fd = tiny_lm_forward(md, ids);
  const TinyLmBlockForward<double>& bd = fd.blocks[0];
  const AttentionT<double> core_d = scaled_dot_product_attention(bd.queries, bd.keys, bd.values, true);
  CHECK(bd.attn_weights == core_d.attn_weights);
  CHECK(bd.context == core_d.context);
  // Float and double agree to float32's rounding, activation by activation (a template
  // instantiated differently for one type, e.g. another scale or mask, would show here).
  CHECK(differences(b.queries, bd.queries, 1e-6) == "");
  CHECK(differences(b.scaled, bd.scaled, 1e-5) == "");
  CHECK(differences(b.attn_weights, bd.attn_weights, 1e-6) == "");
  CHECK(differences(b.context, bd.context, 1e-6) == "");
  CHECK(differences(f.logits, fd.logits, 1e-5) == "");
  // The future is hidden in both: -inf scaled scores and weights exactly 0 above the diagonal.
  for (std::size_t t = 0; t + 1 < 5; ++t) {
    CHECK(std::isinf(bd.scaled(1, 1, t, t + 1)));
    CHECK(bd.attn_weights(1, 1, t, t + 1) == 0.0);
    CHECK(b.attn_weights(1, 1, t, t + 1) == 0.0f);
  }
  // Loss and gradients agree with float32's (the fixture's) to its rounding.
  CHECK(tiny_lm_loss(fd, targets) == doctest::Approx(load_fixture<1>("grad_tinylm__loss.npy")(0)).epsilon(1e-6));
  const TinyLmGrads<double> gd = tiny_lm_backward(md, fd, targets);
  CHECK(differences(gd.params.blocks[0].W_query.weight, load_fixture<2>("grad_tinylm__W_query_weight_grad.npy"), 1e-6) == "");
  CHECK(differences(gd.params.tok, load_fixture<2>("grad_tinylm__tok_weight_grad.npy"), 1e-6) == "");
}

TEST_CASE("tiny_lm_params names and orders the parameters as the PyTorch modules") {
  TinyLm m = fixture_model();
  const TinyLm z = zeros_like(m);
  const auto one = tiny_lm_params(m, z);
  REQUIRE(one.size() == 8);
  CHECK(one[0].name == "tok.weight");
  CHECK(one[2].name == "W_query.weight");
  CHECK(one[6].name == "out_proj.bias");
  CHECK(one[7].name == "unembed.weight");
  TorchGenerator gen(1);
  TinyLm two = make_tiny_lm(gen, 5, 6, 4, 2, 2);
  const auto names = tiny_lm_params(two, zeros_like(two));
  REQUIRE(names.size() == 13);
  CHECK(names[2].name == "blocks.0.W_query.weight");
  CHECK(names[7].name == "blocks.1.W_query.weight");
  CHECK(contains(refusal([&] { tiny_lm_params(two, z); }), "tiny_lm_params"));
}

TEST_CASE("two blocks: the gradient agrees with a finite difference of the loss along a random direction") {
  // Float32 forward passes, so a directional difference (L(p + h u) - L(p - h u)) / 2h with a
  // fairly large h: its rounding error is about 1e-7 * L / h = 1e-4 and its truncation error
  // h^2 |L'''| about the same, while a missing or doubled path changes g . u by 10% or more.
  TorchGenerator gen(5);
  TinyLm m = make_tiny_lm(gen, 6, 7, 8, 2, 2);
  Ids ids = xt::empty<std::size_t>({3, 7}), targets = xt::empty<std::size_t>({3, 7});  // (B, T)
  const auto a = gen.randint(0, 6, 21), b = gen.randint(0, 6, 21);
  std::copy(a.begin(), a.end(), ids.begin());
  std::copy(b.begin(), b.end(), targets.begin());
  const TinyLmGrads<float> g = tiny_lm_backward(m, tiny_lm_forward(m, ids), targets);
  auto params = tiny_lm_params(m, g.params);
  std::vector<std::vector<float>> direction, start;
  double slope = 0.0;  // g . u
  TorchGenerator dir_gen(6);
  for (const Param& p : params) {
    std::vector<float> u(p.size);
    dir_gen.uniform_(u.data(), u.size(), -1.0f, 1.0f);
    for (std::size_t i = 0; i < p.size; ++i) slope += static_cast<double>(p.grad[i]) * u[i];
    direction.push_back(u);
    start.emplace_back(p.value, p.value + p.size);
  }
  auto loss_at = [&](double h) {
    for (std::size_t k = 0; k < params.size(); ++k)
      for (std::size_t i = 0; i < params[k].size; ++i)
        params[k].value[i] = static_cast<float>(start[k][i] + h * direction[k][i]);
    return static_cast<double>(tiny_lm_loss(tiny_lm_forward(m, ids), targets));
  };
  const double h = 1e-3;
  const double numeric = (loss_at(h) - loss_at(-h)) / (2 * h);
  CAPTURE(slope);
  CAPTURE(numeric);
  CHECK(std::fabs(numeric - slope) <= 2e-3 * std::max(1.0, std::fabs(slope)));
}

TEST_CASE("a forward and backward pass into reused buffers equals one into fresh buffers, whatever the buffers held") {
  // The training loops pass the same TinyLmForward and TinyLmGrads every step. A buffer that kept
  // something of its last use (a bias gradient summed on top of the last one, a row not
  // overwritten after a shape change) would show here as a difference from fresh buffers.
  TorchGenerator gen(7);
  TinyLm m = make_tiny_lm(gen, 6, 7, 8, 2, 2);
  auto batch = [&](std::size_t B, std::size_t T) {
    Ids ids = xt::empty<std::size_t>({B, T}), targets = xt::empty<std::size_t>({B, T});  // (B, T)
    const auto a = gen.randint(0, 6, B * T), b = gen.randint(0, 6, B * T);
    std::copy(a.begin(), a.end(), ids.begin());
    std::copy(b.begin(), b.end(), targets.begin());
    return std::pair<Ids, Ids>{ids, targets};
  };
  TinyLmForward<float> f;
  TinyLmGrads<float> g;
  // Same shape twice, then a smaller batch and shorter sequences, then the first shape again.
  for (const auto& [B, T] : {std::pair<std::size_t, std::size_t>{3, 7}, {3, 7}, {2, 4}, {3, 7}}) {
    const std::size_t batch_size = B, tokens = T;  // clang 14 cannot capture a structured binding
    CAPTURE(batch_size);
    CAPTURE(tokens);
    const auto [ids, targets] = batch(B, T);
    tiny_lm_forward(m, ids, f);
    tiny_lm_backward(m, f, targets, g);
    const TinyLmForward<float> f_new = tiny_lm_forward(m, ids);
    const TinyLmGrads<float> g_new = tiny_lm_backward(m, f_new, targets);
    CHECK(f.logits == f_new.logits);
    CHECK(f.blocks[1].x == f_new.blocks[1].x);
    CHECK(f.blocks[1].attn_weights == f_new.blocks[1].attn_weights);
    CHECK(tiny_lm_loss(f, targets) == tiny_lm_loss(f_new, targets));
    CHECK(g.x == g_new.x);
    CHECK(g.logits == g_new.logits);
    CHECK(g.blocks[0].queries == g_new.blocks[0].queries);
    TinyLm model_copy = m;
    const auto reused = tiny_lm_params(m, g.params), fresh = tiny_lm_params(model_copy, g_new.params);
    REQUIRE(reused.size() == fresh.size());
    for (std::size_t k = 0; k < reused.size(); ++k) {
      CAPTURE(reused[k].name);
      REQUIRE(reused[k].size == fresh[k].size);
      CHECK(std::equal(reused[k].grad, reused[k].grad + reused[k].size, fresh[k].grad));
    }
    // Poison every buffer: the next pass must overwrite all of it.
    for (auto* t : {&f.x, &f.y, &f.logits, &f.projection, &g.x, &g.logits, &g.d_rows, &g.d_input}) t->fill(1e30f);
    for (auto& b : g.params.blocks) b.out_proj.bias.fill(1e30f);
    for (auto& b : f.blocks) {
      b.attn_scores.fill(1e30f);
      b.scaled.fill(1e30f);
      b.attn_weights.fill(1e30f);
    }
  }
}

TEST_CASE("tiny_lm refuses what it cannot run") {
  TinyLm m = fixture_model();
  Ids long_ids = xt::zeros<std::size_t>({1, 6});  // (B, T) with T > context 5
  CHECK(contains(refusal([&] { tiny_lm_forward(m, long_ids); }), "6 tokens, the model has positions for 5"));
  Ids bad = xt::zeros<std::size_t>({1, 3});
  bad(0, 1) = 7;
  CHECK(contains(refusal([&] { tiny_lm_forward(m, bad); }), "id 7"));
  TorchGenerator gen(1);
  CHECK(contains(refusal([&] { make_tiny_lm(gen, 7, 5, 8, 3, 1); }), "heads 3"));
  const TinyLmForward<float> f = tiny_lm_forward(m, xt::zeros<std::size_t>({1, 3}));
  CHECK(contains(refusal([&] { tiny_lm_backward(m, f, xt::zeros<std::size_t>({1, 4})); }), "targets (1, 4)"));
}
