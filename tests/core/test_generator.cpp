// TorchGenerator against PyTorch 1.13: torch.rand, nn.Linear's default initialisation and
// torch.randn from a seed. Every number a lesson prints starts here, and a learner can only
// rebuild it in PyTorch if these draws match PyTorch's draw for draw.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/generator.hpp"
#include "core/linear.hpp"
#include "support.hpp"

using attn::Mat;
using attn::TorchGenerator;
using attn::Vec;
using attn::test::load_fixture;
using attn::test::differences;

namespace {

// The init_seed* cases of tests/data/cases.json: torch.manual_seed(seed); torch.rand(d_in, d_out),
// and again torch.manual_seed(seed); nn.Linear(d_in, d_out).
struct InitCase {
  unsigned seed;
  std::size_t d_in, d_out;
  std::string prefix() const {
    return "init_seed" + std::to_string(seed) + "_" + std::to_string(d_in) + "x" + std::to_string(d_out) + "__";
  }
};
const std::vector<InitCase> kInitCases = {{123, 3, 2}, {0, 8, 8}, {789, 3, 2}};

Mat from_rows(std::size_t rows, std::size_t cols, const std::vector<double>& v) {
  Mat m = xt::empty<float>({rows, cols});
  REQUIRE(v.size() == m.size());
  for (std::size_t i = 0; i < v.size(); ++i) m.data()[i] = static_cast<float>(v[i]);
  return m;
}

}  // namespace

TEST_CASE("rand matches torch.rand bit for bit") {
  for (const InitCase& c : kInitCases) {
    INFO("seed ", c.seed);
    const Mat want = load_fixture<2>(c.prefix() + "rand.npy");
    TorchGenerator gen(c.seed);
    // (u & 0xFFFFFF) * 2^-24 is exact in float, so nothing but an exact match is right.
    CHECK(differences(gen.rand(c.d_in, c.d_out), want, 0.0) == "");
  }
}

TEST_CASE("rand fills row-major whatever the rank") {
  // torch.rand(2, 3, 4) and torch.rand(24) consume the same stream in the same order.
  TorchGenerator a(123), b(123), c(123);
  const attn::Ten3 t3 = a.rand(2, 3, 4);
  const Vec flat = b.rand(24);
  const Mat t2 = c.rand(6, 4);
  CHECK(std::equal(t3.begin(), t3.end(), flat.begin()));
  CHECK(std::equal(t2.begin(), t2.end(), flat.begin()));
}

TEST_CASE("make_linear draws weight (out, in) then bias like nn.Linear") {
  for (const InitCase& c : kInitCases) {
    INFO("seed ", c.seed);
    const Mat want_w = load_fixture<2>(c.prefix() + "linear_weight.npy");
    const Vec want_b = load_fixture<1>(c.prefix() + "linear_bias.npy");
    TorchGenerator gen(c.seed);
    const attn::Linear layer = attn::make_linear(gen, c.d_in, c.d_out, true);
    // lo + (hi - lo) * u in double, rounded once to float, as PyTorch does: exact as well.
    CHECK(differences(layer.weight, want_w, 0.0) == "");
    CHECK(differences(layer.bias, want_b, 0.0) == "");
  }
}

TEST_CASE("make_linear without bias draws only the weight") {
  // The multi-head lessons build W_query, W_key, W_value without bias, one after another: each
  // must start right after the previous weight, so two (2, 3) layers equal one (4, 3) layer.
  TorchGenerator a(789), b(789);
  const attn::Linear first = attn::make_linear(a, 3, 2, false);
  const attn::Linear second = attn::make_linear(a, 3, 2, false);
  CHECK_FALSE(first.has_bias());
  const attn::Linear both = attn::make_linear(b, 3, 4, false);  // same bound: in is 3 for both
  Mat stacked = xt::empty<float>({std::size_t{4}, std::size_t{3}});
  std::copy(first.weight.begin(), first.weight.end(), stacked.begin());
  std::copy(second.weight.begin(), second.weight.end(), stacked.begin() + 6);
  CHECK(differences(stacked, both.weight, 0.0) == "");
}

TEST_CASE("randn matches torch.randn on the >= 16 element path") {
  // torch.manual_seed(5); print(torch.randn(4, 5).tolist())  -- PyTorch 1.13, /usr/bin/python3
  const Mat want = from_rows(4, 5, {
      1.8423298597335815, 0.5188871622085571, -1.7119213342666626, -1.7013792991638184, -0.1296626776456833,
      -0.6017656326293945, 0.14499856531620026, -0.14982716739177704, 2.614577054977417, -0.4340229630470276,
      0.35233545303344727, -0.06455148011445999, 1.4829323291778564, 0.49403807520866394, 0.24921877682209015,
      1.7470314502716064, 0.7447769641876221, 0.0316568948328495, -1.1724143028259277, -1.5069403648376465});
  TorchGenerator gen(5);
  CHECK(differences(gen.randn(4, 5), want) == "");
}

TEST_CASE("randn matches torch.randn on the < 16 element path") {
  // torch.manual_seed(5); print(torch.randn(2, 3).tolist())
  const Mat want = from_rows(2, 3, {-0.4867807626724243, -0.6038215756416321, -0.5580962300300598,
                                    0.6675242781639099, -0.19741509854793549, 1.9427834749221802});
  TorchGenerator gen(5);
  CHECK(differences(gen.randn(2, 3), want) == "");
}

TEST_CASE("randn matches torch.randn on a ragged size") {
  // 21 values: one block of 16, then the last 16 are redrawn and transformed again.
  // torch.manual_seed(5); print(torch.randn(3, 7).tolist())
  const Mat want = from_rows(3, 7, {
      1.8423298597335815, 0.5188871622085571, -1.7119213342666626, -1.7013792991638184, 2.0194194316864014,
      -0.6017656326293945, 0.14499856531620026,
      -0.14982716739177704, 2.614577054977417, -0.4340229630470276, 0.35233545303344727, -0.06455148011445999,
      0.7686293721199036, 0.49403807520866394,
      0.24921877682209015, 1.7470314502716064, 0.7447769641876221, 0.0316568948328495, -1.1724143028259277,
      -1.5069403648376465, -0.14810462296009064});
  TorchGenerator gen(5);
  CHECK(differences(gen.randn(3, 7), want) == "");
}

TEST_CASE("randn leaves the stream where PyTorch leaves it") {
  // A lesson may draw normals and then uniforms; the uniforms must still match.
  SUBCASE("after the ragged path") {
    // torch.manual_seed(5); torch.randn(3, 7); print(torch.rand(2).tolist())
    TorchGenerator gen(5);
    gen.randn(3, 7);
    const Vec got = gen.rand(2);
    CHECK(differences(got, Vec{0.06087362766265869f, 0.4384790062904358f}) == "");
  }
  SUBCASE("after the small path") {
    // torch.manual_seed(5); torch.randn(2, 3); print(torch.rand(2).tolist())
    TorchGenerator gen(5);
    gen.randn(2, 3);
    CHECK(differences(gen.rand(2), Vec{0.07241219282150269f, 0.6593389511108398f}) == "");
  }
  SUBCASE("the cached second normal survives between calls, even across rand") {
    // torch.manual_seed(5); a = torch.randn(1, 3); b = torch.rand(2); c = torch.randn(1, 1)
    // gives a = the first row of randn(2, 3) above, b = [0.0332646369934082, 0.9941847324371338]
    // and c = [[0.6675242781639099]], the cached sine half of the second Box-Muller pair.
    TorchGenerator gen(5);
    const Mat a = gen.randn(1, 3);
    const Vec b = gen.rand(2);
    const Mat c = gen.randn(1, 1);
    CHECK(differences(a, from_rows(1, 3, {-0.4867807626724243, -0.6038215756416321, -0.5580962300300598})) == "");
    CHECK(differences(b, Vec{0.0332646369934082f, 0.9941847324371338f}) == "");
    CHECK(differences(c, from_rows(1, 1, {0.6675242781639099})) == "");
  }
}

TEST_CASE("the same seed gives the same values, another seed others") {
  TorchGenerator a(42), b(42), c(43);
  const Mat ra = a.rand(4, 4), rb = b.rand(4, 4), rc = c.rand(4, 4);
  CHECK(differences(ra, rb, 0.0) == "");
  CHECK(differences(ra, rc, 0.0) != "");
  const Mat na = a.randn(3, 7), nb = b.randn(3, 7), nc = c.randn(3, 7);
  CHECK(differences(na, nb, 0.0) == "");
  CHECK(differences(na, nc, 0.0) != "");
}

TEST_CASE("only the low 32 bits of the seed reach the twister") {
  // torch.manual_seed(2**32 + 5); torch.rand(3) == torch.manual_seed(5); torch.rand(3)
  //   == [0.8302518725395203, 0.12611091136932373, 0.9074696898460388]
  TorchGenerator big((std::uint64_t{1} << 32) + 5), small(5);
  const Vec want{0.8302518725395203f, 0.12611091136932373f, 0.9074696898460388f};
  CHECK(differences(big.rand(3), want, 0.0) == "");
  CHECK(differences(small.rand(3), want, 0.0) == "");
}
