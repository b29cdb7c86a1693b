// The bottleneck lesson: the encoder's states and the sensitivity of c = h_S to each source word,
// against PyTorch, and the measured fading over longer sentences. Expected values were printed
// by /usr/bin/python3 (torch 1.13) for the lesson's construction: embeddings
// torch.manual_seed(fnv1a32(word)); torch.rand(4) for "the cat sat on the mat", then
// torch.manual_seed(1); encoder = nn.RNNCell(4, 8); c = the last state; gradient norms from
// torch.autograd.functional.jacobian(c, x).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>

#include "lesson_kit/registry.hpp"
#include "report_lookup.hpp"

using namespace attn;
using namespace attn::test;

namespace {

}  // namespace

TEST_CASE("bottleneck: one stage per source word, c equals PyTorch's last state") {
  const auto r = run_lesson("bottleneck");
  CHECK(r.stages().size() == 6 + 6);  // 6 source words + 6 other stages
  CHECK(r.stages()[2].title == "Encoder step 1: reads \"the\"");
  const std::vector<float> c_torch = {0.2250f, -0.2579f, 0.4491f, 0.1247f, 0.6079f, -0.2454f, 0.5036f, 0.2602f};
  const auto& c = tensor(r, "c");
  REQUIRE(c.values.size() == 8);
  for (std::size_t k = 0; k < 8; ++k) CHECK(std::fabs(c.values[k] - c_torch[k]) <= 5e-5f);
  CHECK(tensor(r, "H").shape == Shape{6, 8});
  CHECK(tensor(r, "[y_{i-1} ; c]").shape == Shape{7, 12});
}

TEST_CASE("bottleneck: the sensitivity of c to each word matches autograd and fades towards the start") {
  const auto r = run_lesson("bottleneck");
  const std::vector<double> autograd = {0.010935445, 0.022742227, 0.069688998, 0.14224112, 0.32461604, 0.84980851};
  const auto& g = tensor(r, "||d c / d x_j||");
  REQUIRE(g.values.size() == 6);
  for (std::size_t j = 0; j < 6; ++j) CHECK(g.values[j] == doctest::Approx(autograd[j]).epsilon(1e-4));
  CHECK(tensor(r, "||c' - c||").values.size() == 6);
}

TEST_CASE("bottleneck: longer sentences, smaller first/last ratio") {
  const auto r = run_lesson("bottleneck");
  const auto& sweep = table_with(r, "first / last");
  REQUIRE(sweep.rows.size() == 5);
  double previous = 2.0;
  for (const auto& row : sweep.rows) {
    CAPTURE(row[0]);
    CHECK(std::stoul(row[1]) == std::stoul(row[0]) * 4);  // numbers in = S * d_in
    CHECK(row[2] == "8");                                 // numbers out = d_h, whatever S
    const double ratio = std::strtod(row[6].c_str(), nullptr);
    CHECK(ratio < previous);
    previous = ratio;
  }
  CHECK(previous < 1e-10);  // at S = 64 the first word has all but vanished from c
}

TEST_CASE("bottleneck: options change the sentence and refuse bad values") {
  LessonOptions opts;
  opts.src = std::vector<std::string>{"a", "b", "c"};
  opts.hidden = 4;
  const auto r = run_lesson("bottleneck", opts);
  CHECK(r.stages().size() == 3 + 6);
  CHECK(tensor(r, "c").shape == Shape{4});

  LessonOptions zero;
  zero.hidden = 0;
  CHECK_THROWS_WITH_AS(run_lesson("bottleneck", zero), doctest::Contains("--hidden"), UsageError);
  LessonOptions empty;
  empty.src = std::vector<std::string>{};
  CHECK_THROWS_WITH_AS(run_lesson("bottleneck", empty), doctest::Contains("--src"), UsageError);
  LessonOptions longer;
  longer.tgt = std::vector<std::string>(33, "w");
  CHECK_THROWS_WITH_AS(run_lesson("bottleneck", longer), doctest::Contains("--tgt"), UsageError);
}
