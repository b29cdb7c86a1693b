// Padding masks and attention under them (src/core/padding.*) against the PyTorch 1.13 `padding`
// fixture (tests/data/modern_cases.json): cross-attention of decoder queries over padded encoder
// keys with fill -inf and d2l's -1e6, self-attention over a padded batch with -inf (NaN rows for
// padded queries) and -1e9 (uniform rows); then a fully padded sequence and the refusals.
//
// Legend: B batch, T query tokens, S key tokens, d width.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include "core/attention.hpp"
#include "core/matmul.hpp"
#include "core/padding.hpp"
#include "support.hpp"

using attn::Mat;
using attn::MaskedRow;
using attn::PaddedAttention;
using attn::Ten3;
using attn::Vec;
using attn::test::differences;
using attn::test::load_fixture;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr double kFixtureTol = 1e-6;

template <std::size_t N>
xt::xtensor<float, N> fixture(const std::string& tensor) {
  return load_fixture<N>("padding__" + tensor + ".npy");
}

std::vector<std::size_t> fixture_lens() { return attn::to_valid_lens(fixture<1>("valid_lens")); }

bool same_rows(const std::vector<MaskedRow>& a, const std::vector<MaskedRow>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].batch != b[i].batch || a[i].row != b[i].row) return false;
  return true;
}

// Rows of a (B, T, S) tensor that hold NaN, in the same form as fully_masked_rows.
std::vector<MaskedRow> nan_rows(const Ten3& w) {
  std::vector<MaskedRow> out;
  for (std::size_t b = 0; b < w.shape()[0]; ++b)
    for (std::size_t t = 0; t < w.shape()[1]; ++t)
      if (std::isnan(w(b, t, 0))) out.push_back({b, t});
  return out;
}

}  // namespace

TEST_CASE("the fixture's valid_lens [5, 2] give the key padding mask") {
  const std::vector<std::size_t> lens = fixture_lens();
  REQUIRE(lens == std::vector<std::size_t>{5, 2});
  const Mat expected = {{0, 0, 0, 0, 0}, {0, 0, 1, 1, 1}};  // (B, S)
  CHECK(differences(attn::key_padding_mask(lens, 5), expected, 0.0) == "");
  const Ten3 cross = attn::cross_padding_mask(expected, 3);  // (B, T, S)
  CHECK(cross.shape()[1] == 3);
  for (std::size_t t = 0; t < 3; ++t) {
    const Mat at_t = xt::view(cross, xt::all(), t, xt::all());  // (B, S)
    CHECK(differences(at_t, expected, 0.0) == "");
  }
  // Self-attention: query t of sequence 1 is padding from t = 2 on, so its whole row is hidden.
  const Ten3 self = attn::self_padding_mask(lens, 5);  // (B, T, T)
  const Mat self1 = xt::view(self, 1, xt::all(), xt::all());  // (T, T)
  const Mat expected1 = {{0, 0, 1, 1, 1}, {0, 0, 1, 1, 1}, {1, 1, 1, 1, 1}, {1, 1, 1, 1, 1}, {1, 1, 1, 1, 1}};
  CHECK(differences(self1, expected1, 0.0) == "");
  const Mat self0 = xt::view(self, 0, xt::all(), xt::all());  // (T, T)
  CHECK(differences(self0, Mat(xt::zeros<float>({5, 5})), 0.0) == "");
}

TEST_CASE("cross-attention over padded keys: weights and context with -inf and with d2l's -1e6") {
  const Ten3 q = fixture<3>("q"), k = fixture<3>("k"), v = fixture<3>("v");  // (B, T, d), (B, S, d) x2
  const std::vector<std::size_t> lens = fixture_lens();
  const PaddedAttention inf = attn::padded_cross_attention(q, k, v, lens, -kInf);
  CHECK(differences(inf.attn_weights, fixture<3>("attn_weights_inf"), kFixtureTol) == "");
  CHECK(differences(inf.context, fixture<3>("context_inf"), kFixtureTol) == "");
  const PaddedAttention d2l = attn::padded_cross_attention(q, k, v, lens, attn::kD2lFill);
  CHECK(differences(d2l.attn_weights, fixture<3>("attn_weights_d2l"), kFixtureTol) == "");
  CHECK(differences(d2l.context, fixture<3>("context_d2l"), kFixtureTol) == "");
  // The intermediates: scores unmasked, scaled with the fill exactly where the mask says.
  CHECK(differences(inf.attn_scores, attn::matmul_bt(q, k), 0.0) == "");
  for (std::size_t i = 0; i < inf.scaled.size(); ++i) {
    CAPTURE(i);
    const bool hidden = inf.mask.data()[i] != 0.0f;
    CHECK(hidden == (inf.scaled.data()[i] == -kInf));
    CHECK(hidden == (d2l.scaled.data()[i] == attn::kD2lFill));
    if (hidden) CHECK(inf.attn_weights.data()[i] == 0.0f);
  }
  // Every query sees at least one key: no row is fully masked.
  CHECK(inf.fully_masked.empty());
  // masked_softmax alone, on the unmasked scaled scores, gives the same weights.
  const Ten3 scaled = attn::scale_scores(inf.attn_scores, 4);  // (B, T, S)
  CHECK(differences(attn::masked_softmax(scaled, inf.mask, attn::kD2lFill), fixture<3>("attn_weights_d2l"),
                    kFixtureTol) == "");
}

TEST_CASE("self-attention over a padded batch: NaN rows for padded queries with -inf, uniform with -1e9") {
  const Ten3 xs = fixture<3>("xs");  // (B, S, d)
  const std::vector<std::size_t> lens = fixture_lens();
  const PaddedAttention inf = attn::padded_self_attention(xs, xs, xs, lens, -kInf);
  const PaddedAttention big = attn::padded_self_attention(xs, xs, xs, lens, attn::kLargeFill);
  // differences() matches NaN only with NaN, so this checks the NaN rows' places too.
  CHECK(differences(inf.attn_weights, fixture<3>("self_weights_inf"), kFixtureTol) == "");
  CHECK(differences(big.attn_weights, fixture<3>("self_weights_1e9"), kFixtureTol) == "");
  const std::vector<MaskedRow> padded_queries = {{1, 2}, {1, 3}, {1, 4}};
  CHECK(same_rows(inf.fully_masked, padded_queries));
  CHECK(same_rows(big.fully_masked, padded_queries));
  CHECK(same_rows(nan_rows(inf.attn_weights), padded_queries));
  CHECK(nan_rows(big.attn_weights).empty());
  for (const MaskedRow& r : padded_queries)
    for (std::size_t s = 0; s < 5; ++s) CHECK(big.attn_weights(r.batch, r.row, s) == doctest::Approx(0.2f));
  // The NaN rows carry into the context; the uniform rows average all five positions, padding included.
  for (std::size_t c = 0; c < 4; ++c) {
    CHECK(std::isnan(inf.context(1, 2, c)));
    float mean = 0.0f;
    for (std::size_t s = 0; s < 5; ++s) mean += xs(1, s, c) / 5.0f;
    CHECK(big.context(1, 2, c) == doctest::Approx(mean).epsilon(1e-6));
    CHECK(std::isfinite(inf.context(1, 1, c)));
  }
}

TEST_CASE("a fully padded sequence (valid_len 0): NaN with -inf, uniform with -1e6 and -1e9") {
  const Ten3 q = fixture<3>("q"), k = fixture<3>("k"), v = fixture<3>("v");  // (2, 3, 4), (2, 5, 4) x2
  const std::vector<std::size_t> lens = {0, 3};
  const PaddedAttention inf = attn::padded_cross_attention(q, k, v, lens, -kInf);
  const std::vector<MaskedRow> all_of_0 = {{0, 0}, {0, 1}, {0, 2}};
  CHECK(same_rows(inf.fully_masked, all_of_0));
  CHECK(same_rows(nan_rows(inf.attn_weights), all_of_0));
  for (std::size_t t = 0; t < 3; ++t)
    for (std::size_t c = 0; c < 4; ++c) CHECK(std::isnan(inf.context(0, t, c)));
  for (float fill : {attn::kD2lFill, attn::kLargeFill}) {
    CAPTURE(fill);
    const PaddedAttention a = attn::padded_cross_attention(q, k, v, lens, fill);
    CHECK(same_rows(a.fully_masked, all_of_0));
    for (std::size_t t = 0; t < 3; ++t) {
      for (std::size_t s = 0; s < 5; ++s) CHECK(a.attn_weights(0, t, s) == doctest::Approx(0.2f));
      for (std::size_t c = 0; c < 4; ++c) {
        float mean = 0.0f;
        for (std::size_t s = 0; s < 5; ++s) mean += v(0, s, c) / 5.0f;
        CHECK(a.context(0, t, c) == doctest::Approx(mean).epsilon(1e-6));
      }
    }
    // The other sequence is untouched by its neighbour's padding: the same as with -inf.
    const Mat seq1 = xt::view(a.attn_weights, 1, xt::all(), xt::all());    // (T, S)
    const Mat seq1_inf = xt::view(inf.attn_weights, 1, xt::all(), xt::all());  // (T, S)
    CHECK(differences(seq1, seq1_inf, 0.0) == "");
  }
  const Ten3 xs = fixture<3>("xs");  // (B, S, d)
  const PaddedAttention self = attn::padded_self_attention(xs, xs, xs, {0, 5}, -kInf);
  CHECK(self.fully_masked.size() == 5);
  CHECK(same_rows(nan_rows(self.attn_weights), self.fully_masked));
}

TEST_CASE("refusals: a length past S, lengths that do not match the batch, shapes that do not fit") {
  const Ten3 q = fixture<3>("q"), k = fixture<3>("k"), v = fixture<3>("v");  // (2, 3, 4), (2, 5, 4) x2
  CHECK_THROWS_WITH_AS(attn::key_padding_mask({5, 6}, 5),
                       "key_padding_mask: valid_lens [5, 6]: length 6 of sequence 1 exceeds the 5 positions (S)",
                       std::invalid_argument);
  CHECK_THROWS_AS(attn::padded_cross_attention(q, k, v, {6, 2}, -kInf), std::invalid_argument);
  CHECK_THROWS_AS(attn::padded_self_attention(k, k, k, {5, 9}, -kInf), std::invalid_argument);
  CHECK_THROWS_WITH_AS(attn::padded_cross_attention(q, k, v, {5}, -kInf),
                       "padded_cross_attention: valid_lens [5] has 1 lengths for a batch of 2 (q (2, 3, 4))",
                       std::invalid_argument);
  CHECK_THROWS_AS(attn::padded_cross_attention(q, k, v, {5, 2, 1}, -kInf), std::invalid_argument);
  CHECK_THROWS_AS(attn::padded_self_attention(k, k, k, {}, -kInf), std::invalid_argument);
  CHECK_THROWS_WITH_AS(attn::padded_cross_attention(q, q, v, {3, 2}, -kInf),
                       "padded_cross_attention: q (2, 3, 4), k (2, 3, 4), v (2, 5, 4) do not fit "
                       "(q (B, T, d), k (B, S, d), v (B, S, d_v))",
                       std::invalid_argument);
  CHECK_THROWS_AS(attn::padded_self_attention(q, k, v, {3, 2}, -kInf), std::invalid_argument);  // T != S
  const Ten3 wrong = xt::zeros<float>({2, 3, 4});  // (B, T, d): not the scores' (2, 3, 5)
  CHECK_THROWS_AS(attn::masked_softmax(attn::matmul_bt(q, k), wrong, -kInf), std::invalid_argument);
  CHECK_THROWS_AS(attn::to_valid_lens(Vec{5.0f, -1.0f}), std::invalid_argument);
  CHECK_THROWS_AS(attn::to_valid_lens(Vec{2.5f}), std::invalid_argument);
  CHECK_THROWS_AS(attn::to_valid_lens(Vec{std::nanf("")}), std::invalid_argument);
}
