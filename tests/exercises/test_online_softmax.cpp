// Checks for exercise online-softmax (lessons/exercises/online_softmax.cpp): the running max and
// sum of one row fed in chunks, and the softmax they give, against values printed by PyTorch 1.13
// (torch.max, torch.exp(row - max).sum(), torch.softmax) and against `attn lesson flash`.
//
// Shape legend: n scores in one chunk, N scores in the whole row.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/generator.hpp"
#include "core/softmax.hpp"
#include "expect.hpp"

namespace exercise {
// Written by the learner in lessons/exercises/online_softmax.cpp (the same struct).
struct Running {
  float max = -std::numeric_limits<float>::infinity();
  float sum = 0.0f;
};
Running absorb(Running state, const attn::Vec& chunk);
attn::Vec online_softmax(const std::vector<attn::Vec>& chunks);
}  // namespace exercise

using attn::Vec;
using exercise::absorb;
using exercise::online_softmax;
using exercise::Running;
using exercise::test::near;
using exercise::test::same;

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();

// The state after each chunk in turn, from the empty state.
std::vector<Running> states(const std::vector<Vec>& chunks) {
  std::vector<Running> out;
  Running r;
  for (const Vec& c : chunks) out.push_back(r = absorb(r, c));
  return out;
}
}  // namespace

TEST_CASE("the worked example: [1, 2] then [5, 0]") {
  const auto s = states({Vec{1.0f, 2.0f}, Vec{5.0f, 0.0f}});
  CHECK(near(s[0].max, 2.0, 0));
  CHECK(near(s[0].sum, 1.3678793907165527, 1e-6));  // exp(-1) + exp(0)
  CHECK(near(s[1].max, 5.0, 0));
  // The old sum rescaled by exp(2 - 5); without it the sum would be 2.3746.
  CHECK(near(s[1].sum, 1.0748406648635864, 1e-6));
}

TEST_CASE("a later chunk with a larger max: the old sum is rescaled, and the weights are PyTorch's") {
  // torch.softmax(torch.tensor([1., 2., 5., 0., 3.]), 0), and the max and sum of each prefix.
  const std::vector<Vec> chunks = {Vec{1.0f, 2.0f}, Vec{5.0f, 0.0f}, Vec{3.0f}};
  const auto s = states(chunks);
  CHECK(near(s[2].max, 5.0, 0));  // the last chunk's 3 does not raise the max: no rescale there
  CHECK(near(s[2].sum, 1.2101759910583496, 1e-6));
  const Vec expected = {0.015134690329432487f, 0.0411403514444828f, 0.8263260722160339f, 0.005567741114646196f,
                        0.11183106899261475f};
  CHECK(same(online_softmax(chunks), expected, 1e-6));
}

TEST_CASE("-inf scores (masked keys) get weight 0; a chunk of -inf only changes nothing") {
  const std::vector<Vec> chunks = {Vec{-kInf, 0.5f}, Vec{-kInf, -kInf}, Vec{1.5f, -kInf}};
  const auto s = states(chunks);
  CHECK(near(s[1].max, 0.5, 0));
  CHECK(near(s[1].sum, 1.0, 1e-7));  // the all -inf chunk added nothing and rescaled nothing
  CHECK(near(s[2].max, 1.5, 0));
  CHECK(near(s[2].sum, 1.3678793907165527, 1e-6));
  CHECK(same(online_softmax(chunks), Vec{0.0f, 0.26894143f, 0.0f, 0.0f, 0.7310586f, 0.0f}, 1e-6));
}

TEST_CASE("a first chunk of -inf only: m stays -inf and the sum 0, with no NaN, until a score arrives") {
  const std::vector<Vec> chunks = {Vec{-kInf, -kInf}, Vec{2.0f, 1.0f}};
  const auto s = states(chunks);
  CHECK(near(s[0].max, -kInf, 0));
  CHECK(near(s[0].sum, 0.0, 0));  // not NaN: exp(-inf - -inf) must never be computed
  CHECK(near(s[1].max, 2.0, 0));
  CHECK(near(s[1].sum, 1.3678793907165527, 1e-6));
  CHECK(same(online_softmax(chunks), Vec{0.0f, 0.0f, 0.7310586f, 0.26894143f}, 1e-6));
}

TEST_CASE("a row of -inf only gives NaN weights, as torch.softmax does; an empty chunk changes nothing") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(same(online_softmax({Vec{-kInf, -kInf}, Vec{-kInf}}), Vec{nan, nan, nan}));
  Running r;
  r.max = 0.25f;
  r.sum = 3.5f;
  const Running after = absorb(r, Vec(xt::empty<float>({std::size_t{0}})));  // (0,)
  CHECK(near(after.max, 0.25, 0));
  CHECK(near(after.sum, 3.5, 0));
}

TEST_CASE("scores of +-1e4 across chunks stay finite: every exp is taken against the running max") {
  const std::vector<Vec> chunks = {Vec{1e4f}, Vec{-1e4f, 1e4f}};
  const auto s = states(chunks);
  CHECK(near(s[1].max, 1e4, 0));
  CHECK(near(s[1].sum, 2.0, 1e-6));
  CHECK(same(online_softmax(chunks), Vec{0.5f, 0.0f, 0.5f}, 1e-6));
}

TEST_CASE("attn lesson flash, block 2, row pos 4: m_new and l after each key tile of 2") {
  // The lesson's scores (seed 2), printed by PyTorch in full; keys 5..7 are masked.
  const std::vector<Vec> tiles = {Vec{0.20333687961101532f, 0.8941937685012817f},
                                  Vec{-0.6632911562919617f, 1.281948208808899f}, Vec{1.8623417615890503f, -kInf},
                                  Vec{-kInf, -kInf}};
  const double m[] = {0.8941937685012817, 1.281948208808899, 1.8623417615890503, 1.8623417615890503};
  const double l[] = {1.5011465549468994, 2.1615993976593018, 2.2097997665405273, 2.2097997665405273};
  const auto s = states(tiles);
  for (std::size_t t = 0; t < 4; ++t) {
    CAPTURE(t);
    CHECK(near(s[t].max, m[t], 0));
    CHECK(near(s[t].sum, l[t], 1e-6));
  }
  const Vec weights = {0.08612919598817825f, 0.1718643307685852f, 0.03620584309101105f, 0.2532709538936615f,
                       0.4525296986103058f, 0.0f, 0.0f, 0.0f};  // attn_weights row pos 4
  CHECK(same(online_softmax(tiles), weights, 1e-6));
}

TEST_CASE("any chunking of a row gives attn's own softmax of the whole row") {
  attn::TorchGenerator gen(11);
  const attn::Mat rows = 3.0f * gen.randn(4, 12);  // (4, N): 4 rows of 12 scores, spread over about +-9
  const attn::Mat expected = attn::softmax_rows(rows);  // (4, N)
  for (std::size_t r = 0; r < 4; ++r)
    for (std::size_t size : {1, 2, 5, 12}) {
      CAPTURE(r);
      CAPTURE(size);
      std::vector<Vec> chunks;
      for (std::size_t j0 = 0; j0 < 12; j0 += size) {
        Vec c = xt::empty<float>({std::min(size, 12 - j0)});  // (n,)
        for (std::size_t j = 0; j < c.size(); ++j) c(j) = rows(r, j0 + j);
        chunks.push_back(c);
      }
      Vec row = xt::empty<float>({std::size_t{12}});  // (N,)
      for (std::size_t j = 0; j < 12; ++j) row(j) = expected(r, j);
      CHECK(same(online_softmax(chunks), row, 1e-6));
    }
}
