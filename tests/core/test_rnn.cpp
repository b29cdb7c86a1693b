// The encoder-decoder era's pieces: the tanh RNN cell (against nn.RNNCell), the bidirectional
// encoder, the sensitivity of the last state to each input (against autograd), and the four
// scoring functions (against the scores_rnn fixture made with PyTorch 1.13), plus the
// invariants every scoring function must keep.
#include <doctest/doctest.h>

#include <xtensor/xview.hpp>

#include "core/generator.hpp"
#include "core/rnn.hpp"
#include "core/scoring.hpp"
#include "core/softmax.hpp"
#include "support.hpp"

using namespace attn;
using attn::test::differences;
using attn::test::load_fixture;

namespace {

// torch.manual_seed(3); cell = nn.RNNCell(4, 3); torch.manual_seed(9); xs = torch.rand(5, 4);
// h = zeros; for t: h = cell(xs[t], h). Printed by /usr/bin/python3 with torch 1.13.
const std::vector<float> kStates = {-0.94184029f, 0.33878443f,  -0.34011826f, -0.93727958f, -0.24859098f,
                                    -0.25426468f, -0.80413187f, 0.38080916f,  -0.74497265f, -0.53549218f,
                                    -0.14391859f, -0.68663543f, -0.77082300f, 0.00617651f,  -0.65971696f};
// ||d h_5 / d x_j||_F for j = 1..5, from torch.autograd.functional.jacobian on the same cell.
const std::vector<float> kSensitivity = {0.05838794f, 0.10412498f, 0.18823352f, 0.41012776f, 0.83129489f};

Mat as_mat(const std::vector<float>& v, std::size_t rows, std::size_t cols) {
  Mat m = xt::empty<float>({rows, cols});
  std::copy(v.begin(), v.end(), m.begin());
  return m;
}

}  // namespace

TEST_CASE("make_rnn_cell draws what nn.RNNCell draws") {
  TorchGenerator gen(3);
  const RnnCell cell = make_rnn_cell(gen, 4, 3);
  CHECK(cell.weight_ih.shape()[0] == 3);
  CHECK(cell.weight_ih.shape()[1] == 4);
  CHECK(cell.weight_ih(0, 0) == doctest::Approx(-0.57242715f).epsilon(1e-6));
  CHECK(cell.weight_ih(0, 3) == doctest::Approx(-0.54622549f).epsilon(1e-6));
  CHECK(cell.bias_hh(0) == doctest::Approx(-0.36849126f).epsilon(1e-6));
  CHECK(cell.bias_hh(2) == doctest::Approx(-0.23931780f).epsilon(1e-6));
  CHECK(cell.parameters() == 3 * 4 + 3 * 3 + 3 + 3);
}

TEST_CASE("rnn_forward follows nn.RNNCell step by step") {
  TorchGenerator gen(3);
  const RnnCell cell = make_rnn_cell(gen, 4, 3);
  TorchGenerator xgen(9);
  const Mat xs = xgen.rand(5, 4);
  const Mat states = rnn_forward(cell, xs);
  CHECK(differences(states, as_mat(kStates, 5, 3), 1e-6) == "");
  CHECK_THROWS_WITH_AS(rnn_step(cell, Vec(xt::zeros<float>({5})), Vec(xt::zeros<float>({3}))),
                       doctest::Contains("(5,)"), std::invalid_argument);
}

TEST_CASE("the backward pass reads right to left and the bidirectional encoder joins both") {
  TorchGenerator gen(3);
  const RnnCell fwd = make_rnn_cell(gen, 4, 3);
  const RnnCell bwd = make_rnn_cell(gen, 4, 3);
  TorchGenerator xgen(9);
  const Mat xs = xgen.rand(5, 4);
  // Backward state at position j = forward pass over the reversed sequence, read back reversed.
  Mat reversed = xt::empty<float>({std::size_t{5}, std::size_t{4}});
  for (std::size_t t = 0; t < 5; ++t) xt::view(reversed, t, xt::all()) = xt::view(xs, 4 - t, xt::all());
  const Mat back = rnn_backward(bwd, xs);
  const Mat forward_of_reversed = rnn_forward(bwd, reversed);
  for (std::size_t t = 0; t < 5; ++t)
    CHECK(differences(Vec(xt::view(back, t, xt::all())), Vec(xt::view(forward_of_reversed, 4 - t, xt::all())), 0) == "");
  const Mat h = bidirectional_encoder(fwd, bwd, xs);
  REQUIRE(h.shape()[1] == 6);
  CHECK(differences(Mat(xt::view(h, xt::all(), xt::range(0, 3))), rnn_forward(fwd, xs), 0) == "");
  CHECK(differences(Mat(xt::view(h, xt::all(), xt::range(3, 6))), back, 0) == "");
}

TEST_CASE("final_state_sensitivity equals autograd's Jacobian norms") {
  TorchGenerator gen(3);
  const RnnCell cell = make_rnn_cell(gen, 4, 3);
  TorchGenerator xgen(9);
  const Mat xs = xgen.rand(5, 4);
  const Vec norms = final_state_sensitivity(cell, rnn_forward(cell, xs));
  Vec expected = xt::empty<float>({std::size_t{5}});
  std::copy(kSensitivity.begin(), kSensitivity.end(), expected.begin());
  CHECK(differences(norms, expected, 1e-5) == "");
}

TEST_CASE("scoring functions equal PyTorch's on the scores_rnn fixture") {
  const Mat H = load_fixture<2>("scores_rnn__H.npy");        // (6, 4)
  const Vec s = load_fixture<1>("scores_rnn__s.npy");        // (3,)
  const Mat W_a = load_fixture<2>("scores_rnn__W_a.npy");    // (5, 3)
  const Mat U_a = load_fixture<2>("scores_rnn__U_a.npy");    // (5, 4)
  const Vec v_a = load_fixture<1>("scores_rnn__v_a.npy");    // (5,)
  const Vec h_t = load_fixture<1>("scores_rnn__h_t.npy");    // (4,)
  const Mat W_g = load_fixture<2>("scores_rnn__W_g.npy");    // (4, 4)
  const Mat W_c = load_fixture<2>("scores_rnn__W_c.npy");    // (5, 8)
  const Vec v_c = load_fixture<1>("scores_rnn__v_c.npy");    // (5,)

  const Vec e = additive_scores(s, H, W_a, U_a, v_a);
  CHECK(differences(e, load_fixture<1>("scores_rnn__e_additive.npy")) == "");
  // Precomputing U_a H once gives the same scores.
  CHECK(differences(additive_scores_from(matvec(W_a, s), additive_keys(H, U_a), v_a), e, 0) == "");
  const Mat e_row = xt::view(e, xt::newaxis(), xt::all());
  const Vec alpha = xt::view(softmax_rows(e_row), 0);
  CHECK(differences(alpha, load_fixture<1>("scores_rnn__alpha_additive.npy")) == "");
  CHECK(differences(weighted_sum(alpha, H), load_fixture<1>("scores_rnn__context_additive.npy")) == "");

  CHECK(differences(dot_scores(h_t, H), load_fixture<1>("scores_rnn__e_dot.npy")) == "");
  CHECK(differences(general_scores(h_t, W_g, H), load_fixture<1>("scores_rnn__e_general.npy")) == "");
  CHECK(differences(concat_scores(h_t, H, W_c, v_c), load_fixture<1>("scores_rnn__e_concat.npy")) == "");
}

TEST_CASE("when every key is the same, every scoring function gives uniform weights") {
  TorchGenerator gen(21);
  const Vec key = gen.rand(4);
  Mat H = xt::empty<float>({std::size_t{7}, std::size_t{4}});  // seven copies of one state
  for (std::size_t j = 0; j < 7; ++j) xt::view(H, j, xt::all()) = key;
  for (std::uint64_t seed : {1u, 2u, 3u}) {  // whatever the parameters
    CAPTURE(seed);
    TorchGenerator p(seed);
    const Vec s = p.rand(3), h_t = p.rand(4), v_a = p.rand(5);
    const Mat W_a = p.rand(5, 3), U_a = p.rand(5, 4), W_g = p.rand(4, 4), W_c = p.rand(5, 8);
    for (const Vec& e : {additive_scores(s, H, W_a, U_a, v_a), dot_scores(h_t, H), general_scores(h_t, W_g, H),
                         concat_scores(h_t, H, W_c, v_a)}) {
      const Mat row = xt::view(e, xt::newaxis(), xt::all());
      const Mat w = softmax_rows(row);
      float total = 0.0f;
      for (float v : w) {
        CHECK(v == doctest::Approx(1.0f / 7.0f).epsilon(1e-6));
        total += v;
      }
      CHECK(total == doctest::Approx(1.0f).epsilon(1e-6));
    }
  }
}

TEST_CASE("scoring functions refuse shapes that do not fit, naming them") {
  const Mat H = xt::zeros<float>({std::size_t{3}, std::size_t{4}});
  CHECK_THROWS_WITH_AS(dot_scores(Vec(xt::zeros<float>({5})), H), doctest::Contains("(3, 4)"), std::invalid_argument);
  CHECK_THROWS_AS(general_scores(Vec(xt::zeros<float>({4})), Mat(xt::zeros<float>({4, 5})), H), std::invalid_argument);
  CHECK_THROWS_AS(concat_scores(Vec(xt::zeros<float>({4})), H, Mat(xt::zeros<float>({5, 7})), Vec(xt::zeros<float>({5}))),
                  std::invalid_argument);
  CHECK_THROWS_AS(additive_scores(Vec(xt::zeros<float>({3})), H, Mat(xt::zeros<float>({5, 3})),
                                  Mat(xt::zeros<float>({5, 3})), Vec(xt::zeros<float>({5}))),
                  std::invalid_argument);
  CHECK_THROWS_AS(weighted_sum(Vec(xt::zeros<float>({2})), H), std::invalid_argument);
}
