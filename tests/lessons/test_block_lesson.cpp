// attn lesson block: a one-layer Llama at toy size. Its numbers against PyTorch (the reference
// values come from docs/block.md's forward pass run with PyTorch 1.13 after the header's lines),
// the header's lines rebuilding every weight, its computed sentences over seeds, its refusals.
//
// Legend: B batch (1), T tokens, V vocabulary (7), d hidden size, h heads, h_kv kv heads.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "report_lookup.hpp"
#include "reproduce_runner.hpp"

using namespace attn;
using namespace attn::test;

namespace {

// Largest |a - b| over two value lists of the same length.
double worst_diff(const std::vector<float>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::fmax(worst, std::fabs(a[i] - b[i]));
  return worst;
}

std::vector<float> values(const report::TensorItem& t) { return {t.values.begin(), t.values.end()}; }

// The last query row of every head of attn_weights (B, h, T, T): (h * T,).
std::vector<float> last_rows(const report::TensorItem& w) {
  const std::size_t h = w.shape[1], T = w.shape[2];
  std::vector<float> out;
  for (std::size_t i = 0; i < h; ++i)
    for (std::size_t j = 0; j < T; ++j) out.push_back(w.values[(i * T + (T - 1)) * T + j]);
  return out;
}

LessonOptions gqa_run() {
  LessonOptions o;
  o.seed = 3, o.heads = 4, o.kv_heads = 2, o.d_in = 16, o.seq_len = 7;
  o.own["--rope-theta"] = 10000;
  return o;
}

// Every weight the header's lines build, compared with the tensor of the same name the lesson
// keeps; returns how many were compared.
std::size_t compare_reproduced(const report::Report& r) {
  const auto built = run_reproduce(r.header.reproduce);
  std::size_t compared = 0;
  for (const auto& s : r.stages())
    for (const auto& item : s.items)
      if (const auto* t = std::get_if<report::TensorItem>(&item)) {
        if (!built.count(t->name)) continue;
        INFO("tensor " << t->name);
        const Held& h = built.at(t->name);
        REQUIRE(h.shape == t->shape);
        double worst = 0.0;
        for (std::size_t i = 0; i < h.values.size(); ++i)
          worst = std::fmax(worst, std::fabs(static_cast<double>(h.values[i]) - t->values[i]));
        CHECK(worst <= 1e-6);
        ++compared;
      }
  return compared;
}

}  // namespace

TEST_CASE("block's default run prints PyTorch's logits, attention and next-token probabilities") {
  const report::Report r = run_lesson("block");
  // PyTorch 1.13, docs/block.md's snippet: logits.flatten(), attn_weights[0, :, -1], probs.
  const std::vector<double> logits = {
      8.38147258758545,   2.292046070098877,  -1.1611872911453247, 3.8763558864593506, 0.15069812536239624,
      3.7497634887695312, -2.7222890853881836, 4.087637901306152,  7.412056922912598,  0.3553506135940552,
      7.156064033508301,  0.5930769443511963, 5.31300687789917,    -2.448544979095459, -0.9399719834327698,
      0.05618536099791527, 11.329215049743652, -2.7501580715179443, 1.2673228979110718, -3.030381202697754,
      2.043571949005127,  4.283067226409912,  5.8697590827941895,  -3.7873291969299316, 8.24220085144043,
      0.4391409456729889, 6.013383865356445,  -4.526364803314209};
  const std::vector<double> attn_last = {0.2678649425506592, 0.3033669888973236, 0.12173967808485031,
                                         0.3070284426212311, 0.2969287931919098, 0.20152783393859863,
                                         0.27860182523727417, 0.2229415327310562};
  REQUIRE(tensor(r, "logits").shape == Shape{1, 4, 7});
  CHECK(worst_diff(values(tensor(r, "logits")), logits) <= 1e-5);
  REQUIRE(tensor(r, "attn_weights").shape == Shape{1, 2, 4, 4});
  CHECK(worst_diff(last_rows(tensor(r, "attn_weights")), attn_last) <= 1e-6);
  // The top 3 after "with": with 0.8194, step 0.0882, journey 0.0764.
  bool found = false;
  for (const auto& s : r.stages())
    for (const auto& item : s.items)
      if (const auto* t = std::get_if<report::TableItem>(&item))
        if (t->header.front() == "rank") {
          found = true;
          REQUIRE(t->rows.size() == 3);
          CHECK(t->rows[0] == std::vector<std::string>{"1", "with", "3", "8.2422", "0.8194"});
          CHECK(t->rows[1] == std::vector<std::string>{"2", "step", "5", "6.0134", "0.0882"});
          CHECK(t->rows[2] == std::vector<std::string>{"3", "journey", "1", "5.8698", "0.0764"});
        }
  CHECK(found);
  for (const auto& c : checks(r)) CHECK_MESSAGE(c.passed, c.text);
}

TEST_CASE("block with grouped heads (4 over 2), 16 wide, 7 tokens, theta 10000 matches PyTorch") {
  const report::Report r = run_lesson("block", gqa_run());
  const std::vector<double> logits_first_row = {7.297365188598633, -1.8932539224624634, 4.452189922332764,
                                                1.4523128271102905, -9.801989555358887, -3.007882595062256,
                                                2.643622398376465};
  const std::vector<double> logits_last_row = {1.2135237455368042, 1.7802537679672241, -8.702610969543457,
                                               2.75662899017334,   0.7119684815406799, 13.46441650390625};
  const std::vector<double> attn_head0_last = {0.22365939617156982, 0.1419314295053482, 0.16390232741832733,
                                               0.10229349136352539, 0.09933927655220032, 0.1315862387418747,
                                               0.13728782534599304};
  const auto& l = tensor(r, "logits");
  REQUIRE(l.shape == Shape{1, 7, 7});
  const std::vector<float> v = values(l);
  CHECK(worst_diff({v.begin(), v.begin() + 7}, logits_first_row) <= 2e-5);
  CHECK(worst_diff({v.end() - 6, v.end()}, logits_last_row) <= 2e-5);  // the last 6 of row 6
  const auto& w = tensor(r, "attn_weights");
  REQUIRE(w.shape == Shape{1, 4, 7, 7});
  const std::vector<float> rows = last_rows(w);
  CHECK(worst_diff({rows.begin(), rows.begin() + 7}, attn_head0_last) <= 1e-6);
  REQUIRE(tensor(r, "k").shape == Shape{1, 2, 7, 4});
  for (const auto& c : checks(r)) CHECK_MESSAGE(c.passed, c.text);
}

TEST_CASE("block's reproduce lines rebuild the embedding, the three norms and the seven projections") {
  CHECK(compare_reproduced(run_lesson("block")) == 11);
  CHECK(compare_reproduced(run_lesson("block", gqa_run())) == 11);
  const report::Report r = run_lesson("block");
  CHECK(std::count(r.header.reproduce.begin(), r.header.reproduce.end(), "ids = torch.tensor([[0, 1, 2, 3]])") == 1);
  CHECK(std::count(r.header.setting.begin(), r.header.setting.end(), "seed 0") == 1);
}

TEST_CASE("block's sentences about the numbers hold over seeds 0..19") {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    CAPTURE(seed);
    LessonOptions o;
    o.seed = seed;
    const report::Report r = run_lesson("block", o);
    for (const auto& c : checks(r)) CHECK_MESSAGE(c.passed, c.text);
    // Stage 5: the largest weight of the last row, per head.
    const auto& w = tensor(r, "attn_weights");
    const std::vector<std::string> words = {"Your", "journey", "starts", "with"};
    const std::vector<float> rows = last_rows(w);
    std::string expected = "gives its largest weight in ";
    for (std::size_t i = 0; i < 2; ++i) {
      const auto at = std::max_element(rows.begin() + i * 4, rows.begin() + i * 4 + 4) - (rows.begin() + i * 4);
      expected += (i ? " and " : "") + ("head " + std::to_string(i) + " to " + words[at]);
    }
    const auto stage5 = notes(r.stages()[4]);
    REQUIRE(!stage5.empty());
    // The note writes each weight after its word: compare the words and heads only.
    std::string got = stage5.back();
    for (std::size_t at; (at = got.find(" (")) != std::string::npos;) got.erase(at, got.find(')', at) - at + 1);
    CHECK(got.find(expected) != std::string::npos);
    // Stage 10: the count of positions that pick their own word, against the table.
    const auto& each = table_with(r, "probability");
    std::size_t own = 0;
    for (const auto& row : each.rows) own += row[1] == row[2];
    const auto stage10 = notes(r.stages()[9]);
    REQUIRE(!stage10.empty());
    const bool says = stage10.back().find(std::to_string(own) + " of the 4 positions pick their own token") !=
                      std::string::npos;
    CHECK(says == (own > 0));
  }
}

TEST_CASE("block refuses an odd head width, and kv heads that do not divide the heads") {
  LessonOptions o;
  o.heads = 8;  // d 8: heads of 1, no pair for RoPE
  CHECK_THROWS_WITH_AS(run_lesson("block", o), doctest::Contains("must be even"), UsageError);
  o.heads = 3;
  CHECK_THROWS_WITH_AS(run_lesson("block", o), doctest::Contains("--heads must divide --d-in"), UsageError);
  o.heads = 4, o.kv_heads = 3;
  CHECK_THROWS_WITH_AS(run_lesson("block", o), doctest::Contains("--kv-heads must divide --heads"), UsageError);
  o.kv_heads = 8;
  CHECK_THROWS_WITH_AS(run_lesson("block", o), doctest::Contains("--kv-heads must divide --heads"), UsageError);
}
