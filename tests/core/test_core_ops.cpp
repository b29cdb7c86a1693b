// Multi-head attention, stage by stage, against PyTorch 1.13 (the mha_* fixtures). Each stage
// is fed PyTorch's own input for that stage, so a failure names the one operation that drifted
// instead of everything downstream of it. The last tests rebuild whole cases from their seeds:
// the promise that a learner can reproduce every printed number in PyTorch rests on them.
//
// Legend: B batch, T tokens, d_in input width, d_out projection width, h heads, d_k = d_out / h.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/attention.hpp"
#include "core/generator.hpp"
#include "core/heads.hpp"
#include "core/linear.hpp"
#include "support.hpp"

using attn::Linear;
using attn::Mat;
using attn::Ten3;
using attn::Ten4;
using attn::Vec;
using attn::test::differences;
using attn::test::load_fixture;

namespace {

// The mha_* cases of tests/data/cases.json.
struct MhaCase {
  std::string name;
  std::size_t heads;
  bool causal;
  bool qkv_bias;
  unsigned seed_x, seed_weights;
  std::size_t B, T, d_in, d_out;
};
const std::vector<MhaCase> kCases = {
    {"mha_causal_nobias", 3, true, false, 11, 7, 2, 5, 4, 6},
    {"mha_full_bias", 4, false, true, 12, 42, 3, 6, 8, 8},
};

template <std::size_t N>
xt::xtensor<float, N> fixture(const MhaCase& c, const std::string& tensor) {
  return load_fixture<N>(c.name + "__" + tensor + ".npy");
}

// A layer exactly as PyTorch stored it: weight (out, in), bias (out,) or none.
Linear layer(const MhaCase& c, const std::string& module, bool bias) {
  Linear l;
  l.weight = fixture<2>(c, module + "_weight");
  if (bias) l.bias = fixture<1>(c, module + "_bias");
  return l;
}

// (B, T, d_out) -> (B, T, h, d_k) -> (B, h, T, d_k), the fused multi-head flow.
Ten4 to_heads(const Ten3& t, std::size_t h) { return attn::swap_token_head_axes(attn::split_heads(t, h)); }

}  // namespace

TEST_CASE("projections: linear(Linear, x) gives q, k, v") {
  for (const MhaCase& c : kCases) {
    INFO(c.name);
    const Ten3 x = fixture<3>(c, "x");  // (B, T, d_in)
    CHECK(differences(attn::linear(layer(c, "W_query", c.qkv_bias), x), fixture<3>(c, "q")) == "");
    CHECK(differences(attn::linear(layer(c, "W_key", c.qkv_bias), x), fixture<3>(c, "k")) == "");
    CHECK(differences(attn::linear(layer(c, "W_value", c.qkv_bias), x), fixture<3>(c, "v")) == "");
  }
}

TEST_CASE("split_heads then swap_token_head_axes gives q_heads") {
  for (const MhaCase& c : kCases) {
    INFO(c.name);
    const Ten4 q_heads = to_heads(fixture<3>(c, "q"), c.heads);  // (B, h, T, d_k)
    // Moving numbers around must not change them: exact.
    CHECK(differences(q_heads, fixture<4>(c, "q_heads"), 0.0) == "");
  }
}

TEST_CASE("scaled_dot_product_attention gives every intermediate") {
  for (const MhaCase& c : kCases) {
    INFO(c.name);
    const Ten4 q = fixture<4>(c, "q_heads");         // (B, h, T, d_k)
    const Ten4 k = to_heads(fixture<3>(c, "k"), c.heads);  // (B, h, T, d_k)
    const Ten4 v = to_heads(fixture<3>(c, "v"), c.heads);  // (B, h, T, d_k)
    const attn::Attention a = attn::scaled_dot_product_attention(q, k, v, c.causal);

    CHECK(differences(a.attn_scores, fixture<4>(c, "scores")) == "");        // (B, h, T, T)
    // differences() demands that -inf sits exactly where PyTorch has it.
    CHECK(differences(a.scaled, fixture<4>(c, "scaled_scores")) == "");      // (B, h, T, T)
    CHECK(differences(a.attn_weights, fixture<4>(c, "attn_weights")) == ""); // (B, h, T, T)
    CHECK(differences(a.context, fixture<4>(c, "context_heads")) == "");     // (B, h, T, d_k)

    // And -inf means exactly "the future": above the diagonal when causal, nowhere otherwise.
    const std::size_t B = c.B, h = c.heads, T = c.T;
    std::size_t wrong = 0;
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t i = 0; i < h; ++i)
        for (std::size_t r = 0; r < T; ++r)
          for (std::size_t col = 0; col < T; ++col) {
            const bool masked = std::isinf(a.scaled(b, i, r, col)) && a.scaled(b, i, r, col) < 0;
            if (masked != (c.causal && col > r)) ++wrong;
            if (masked && a.attn_weights(b, i, r, col) != 0.0f) ++wrong;  // exactly 0, not tiny
          }
    CHECK(wrong == 0);
  }
}

TEST_CASE("swap_token_head_axes then merge_heads gives context") {
  for (const MhaCase& c : kCases) {
    INFO(c.name);
    const Ten4 heads = fixture<4>(c, "context_heads");  // (B, h, T, d_k)
    const Ten3 context = attn::merge_heads(attn::swap_token_head_axes(heads));  // (B, T, d_out)
    CHECK(differences(context, fixture<3>(c, "context"), 0.0) == "");
  }
}

TEST_CASE("out_proj gives the output") {
  for (const MhaCase& c : kCases) {
    INFO(c.name);
    const Ten3 output = attn::linear(layer(c, "out_proj", true), fixture<3>(c, "context"));  // (B, T, d_out)
    CHECK(differences(output, fixture<3>(c, "output")) == "");
  }
}

TEST_CASE("the whole pipeline from PyTorch's weights gives PyTorch's output") {
  // Chained, so errors that each stay under the tolerance cannot add up unnoticed.
  for (const MhaCase& c : kCases) {
    INFO(c.name);
    const Ten3 x = fixture<3>(c, "x");
    const Ten4 q = to_heads(attn::linear(layer(c, "W_query", c.qkv_bias), x), c.heads);
    const Ten4 k = to_heads(attn::linear(layer(c, "W_key", c.qkv_bias), x), c.heads);
    const Ten4 v = to_heads(attn::linear(layer(c, "W_value", c.qkv_bias), x), c.heads);
    const attn::Attention a = attn::scaled_dot_product_attention(q, k, v, c.causal);
    const Ten3 context = attn::merge_heads(attn::swap_token_head_axes(a.context));
    CHECK(differences(attn::linear(layer(c, "out_proj", true), context), fixture<3>(c, "output")) == "");
  }
}

TEST_CASE("seeds alone rebuild PyTorch's multi-head attention end to end") {
  // cases.json: torch.manual_seed(seed_x); x = torch.rand(B, T, d_in); torch.manual_seed(
  // seed_weights); then nn.Linear W_query, W_key, W_value (d_in -> d_out, bias=qkv_bias) and
  // out_proj (d_out -> d_out, bias=True), constructed in that order.
  for (const MhaCase& c : kCases) {
    INFO(c.name);
    const Ten3 x = attn::TorchGenerator(c.seed_x).rand(c.B, c.T, c.d_in);  // (B, T, d_in)
    attn::TorchGenerator g(c.seed_weights);
    const Linear W_query = attn::make_linear(g, c.d_in, c.d_out, c.qkv_bias);
    const Linear W_key = attn::make_linear(g, c.d_in, c.d_out, c.qkv_bias);
    const Linear W_value = attn::make_linear(g, c.d_in, c.d_out, c.qkv_bias);
    const Linear out_proj = attn::make_linear(g, c.d_out, c.d_out, true);

    // The inputs first, so that a failure says whether the draws or the math drifted.
    CHECK(differences(x, fixture<3>(c, "x")) == "");
    CHECK(differences(W_query.weight, fixture<2>(c, "W_query_weight")) == "");
    CHECK(differences(W_key.weight, fixture<2>(c, "W_key_weight")) == "");
    CHECK(differences(W_value.weight, fixture<2>(c, "W_value_weight")) == "");
    CHECK(differences(out_proj.weight, fixture<2>(c, "out_proj_weight")) == "");
    CHECK(differences(out_proj.bias, fixture<1>(c, "out_proj_bias")) == "");
    if (c.qkv_bias) CHECK(differences(W_value.bias, fixture<1>(c, "W_value_bias")) == "");

    const Ten4 queries = to_heads(attn::linear(W_query, x), c.heads);  // (B, h, T, d_k)
    const Ten4 keys = to_heads(attn::linear(W_key, x), c.heads);       // (B, h, T, d_k)
    const Ten4 values = to_heads(attn::linear(W_value, x), c.heads);   // (B, h, T, d_k)
    const attn::Attention a = attn::scaled_dot_product_attention(queries, keys, values, c.causal);
    const Ten3 context_vec = attn::merge_heads(attn::swap_token_head_axes(a.context));  // (B, T, d_out)
    const Ten3 output = attn::linear(out_proj, context_vec);  // (B, T, d_out)
    CHECK(differences(output, fixture<3>(c, "output")) == "");
  }
}

TEST_CASE("scaled_dot_product_attention refuses q, k, v of different shapes") {
  const Ten4 q = xt::zeros<float>({1, 2, 3, 4});
  const Ten4 k = xt::zeros<float>({1, 2, 3, 5});
  try {
    attn::scaled_dot_product_attention(q, k, q, false);
    FAIL("no exception");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    CHECK(what.find("(1, 2, 3, 4)") != std::string::npos);
    CHECK(what.find("(1, 2, 3, 5)") != std::string::npos);
  }
}
