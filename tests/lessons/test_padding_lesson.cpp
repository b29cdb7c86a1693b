// The padding lesson run in process: its default numbers against the PyTorch 1.13 `padding`
// fixture (tests/data/padding__*.npy, made as modern_cases.json describes: torch.manual_seed(4);
// q = rand(2, 3, 4), k = rand(2, 5, 4), v = rand(2, 5, 4), xs = rand(2, 5, 4); valid_lens
// [5, 2]; fills -inf, -1e6 and -1e9, scaled by 1/sqrt(d)), its reproduce lines read back, its
// options (--valid-lens, --queries, --tokens of different lengths) and their refusals, and what
// its computed sentences say over many seeds.
//
// Legend: B batch, T decoder queries, S positions per sequence, d width.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "io/npy.hpp"
#include "lesson_kit/registry.hpp"
#include "report_lookup.hpp"
#include "reproduce_runner.hpp"

using namespace attn;
using namespace attn::test;

namespace {

NpyArray fixture(const std::string& name) { return read_npy(std::string(ATTN_TEST_DATA) + "/padding__" + name + ".npy"); }

// Shapes equal, values within `tol`; NaN only where the fixture has NaN.
void check_matches(const report::TensorItem& t, const NpyArray& expected, double tol) {
  CAPTURE(t.name);
  REQUIRE(t.shape == expected.shape);
  for (std::size_t i = 0; i < t.values.size(); ++i) {
    CAPTURE(i);
    const float a = t.values[i], e = expected.values[i];
    if (std::isnan(e)) CHECK(std::isnan(a));
    else CHECK(std::fabs(a - e) <= tol);
  }
}

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::string w;
  for (char c : text + " ") {
    if (c != ' ') w += c;
    else if (!w.empty()) out.push_back(w), w.clear();
  }
  return out;
}

// LessonOptions for --tokens "a b | c": the first sentence and the rest.
LessonOptions with_sentences(const std::vector<std::string>& sentences) {
  LessonOptions o;
  o.tokens = words(sentences.front());
  for (std::size_t i = 1; i < sentences.size(); ++i) o.more_sentences.push_back(words(sentences[i]));
  return o;
}

// The header's reproduce lines up to and including valid_lens: the part that builds the inputs.
std::vector<std::string> input_lines(const report::Report& r) {
  std::vector<std::string> out;
  for (const auto& line : r.header.reproduce) {
    if (line == "k = v = xs") continue;  // the runner needs no alias; the lesson shows xs
    out.push_back(line);
    if (line.rfind("valid_lens = ", 0) == 0) break;
  }
  return out;
}

std::string stage_notes(const report::Report& r, std::size_t index) {
  std::string all;
  for (const auto& n : notes(r.stages().at(index - 1))) all += n + "\n";
  return all;
}

}  // namespace

TEST_CASE("the default run is the fixture: inputs, weights and contexts as PyTorch computed them") {
  const report::Report r = run_lesson("padding");
  for (const char* name : {"q", "k", "v", "xs"}) check_matches(tensor(r, name), fixture(name), 0.0);
  // float32 sums in another order (OpenBLAS vs PyTorch's kernels): a few units in the last place.
  for (const char* name : {"attn_weights_inf", "context_inf", "attn_weights_d2l", "context_d2l", "self_weights_inf",
                           "self_weights_1e9"})
    check_matches(tensor(r, name), fixture(name), 1e-6);
  CHECK(r.header.setting == std::vector<std::string>{"seed 4", "batch 2", "queries 3", "S 5", "d 4",
                                                     "valid_lens [5, 2]"});
  CHECK(r.stages().size() == 8);
}

TEST_CASE("the default run: every check passes, and the questions answer as measured") {
  const report::Report r = run_lesson("padding");
  for (const auto& c : checks(r)) {
    CAPTURE(c.text);
    if (!c.question) CHECK(c.passed);
  }
  CHECK(check_with(r, "fill -1e6 give exactly the same").passed);
  CHECK(check_with(r, "do -1e9 and -1e6 give exactly").passed);
  const report::CheckItem spread = check_with(r, "stay inside the padded queries");
  CHECK_FALSE(spread.passed);
  CHECK(spread.value == 2.0);  // both real rows of sequence 1 turn NaN in layer 2
  // The NaN rows, counted by the test itself: sequence 1, rows 2..4.
  const report::TensorItem& w = tensor(r, "self_weights_inf");
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t row = 0; row < 5; ++row) {
      CAPTURE(b);
      CAPTURE(row);
      CHECK(std::isnan(w.values[(b * 5 + row) * 5]) == (b == 1 && row >= 2));
    }
}

TEST_CASE("the reproduce lines rebuild q, k, v, xs and valid_lens exactly") {
  const report::Report r = run_lesson("padding");
  const auto built = run_reproduce(input_lines(r));
  for (const char* name : {"q", "k", "v", "xs"}) {
    CAPTURE(name);
    REQUIRE(built.count(name) == 1);
    CHECK(built.at(name).shape == tensor(r, name).shape);
    CHECK(built.at(name).values == tensor(r, name).values);
  }
  CHECK(built.at("valid_lens").values == std::vector<float>{5, 2});
  CHECK(r.header.reproduce.back() == "out = (keys_only @ xs) * (1 - key_pad)[:, :, None]");
}

TEST_CASE("--tokens: sentences of different lengths, padded with zero rows, their lengths the valid lengths") {
  const report::Report r = run_lesson("padding", with_sentences({"Your journey starts", "with one", "step"}));
  CHECK(r.header.setting.back() == "valid_lens [3, 2, 1]");
  const report::TensorItem& xs = tensor(r, "xs");
  REQUIRE(xs.shape == Shape{3, 3, 4});
  CHECK(xs.row_labels == report::Labels{"Your", "journey", "starts", "with", "one", "<pad>", "step", "<pad>", "<pad>"});
  for (std::size_t c = 0; c < 4; ++c) {
    CHECK(xs.values[(1 * 3 + 2) * 4 + c] == 0.0f);  // "with one" <pad>
    CHECK(xs.values[(2 * 3 + 1) * 4 + c] == 0.0f);  // "step" <pad>
  }
  CHECK_FALSE(has_tensor(r, "k"));  // k = v = xs
  // The reproduce lines pad with pad_sequence and rebuild xs and q exactly.
  const auto built = run_reproduce(input_lines(r));
  CHECK(built.at("xs").shape == xs.shape);
  CHECK(built.at("xs").values == xs.values);
  CHECK(built.at("q").values == tensor(r, "q").values);
  bool padded = false;
  for (const auto& line : r.header.reproduce) padded = padded || line.find("rnn.pad_sequence(") != std::string::npos;
  CHECK(padded);
  // Three padded positions in all: sequence 1 row 2, sequence 2 rows 1 and 2.
  CHECK(stage_notes(r, 6).find("3 rows of self_mask are all 1, (sequence, row) = (1, 2), (2, 1), (2, 2).") !=
        std::string::npos);
}

TEST_CASE("--tokens with one sentence: a batch of one, nothing padded, xs rebuilt with its batch axis") {
  const report::Report r = run_lesson("padding", with_sentences({"the cat sat"}));
  CHECK(tensor(r, "xs").shape == Shape{1, 3, 4});
  const auto built = run_reproduce(input_lines(r));
  CHECK(built.at("xs").shape == Shape{1, 3, 4});
  CHECK(built.at("xs").values == tensor(r, "xs").values);
  CHECK(stage_notes(r, 1).find("No sequence is padded here") != std::string::npos);
  CHECK(check_with(r, "stay inside the padded queries").passed);  // no NaN anywhere
}

TEST_CASE("--valid-lens, --batch and --queries set the batch, and the default lengths shrink by 3") {
  LessonOptions o;
  o.own_lists["--valid-lens"] = {3, 1, 4};
  o.seq_len = 4;
  o.own["--queries"] = 2;
  const report::Report r = run_lesson("padding", o);
  CHECK(r.header.setting == std::vector<std::string>{"seed 4", "batch 3", "queries 2", "S 4", "d 4",
                                                     "valid_lens [3, 1, 4]"});
  const report::TensorItem& key_pad = tensor(r, "key_pad");
  CHECK(key_pad.values == std::vector<float>{0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 0, 0});
  CHECK(tensor(r, "mask").shape == Shape{3, 2, 4});
  for (const auto& c : checks(r)) {
    CAPTURE(c.text);
    if (!c.question) CHECK(c.passed);
  }
  CHECK(stage_notes(r, 4).find("Sequence 1 has one real token") != std::string::npos);

  LessonOptions three;
  three.batch = 3;
  CHECK(run_lesson("padding", three).header.setting.back() == "valid_lens [5, 2, 1]");
  LessonOptions one_position;
  one_position.seq_len = 1;
  CHECK(run_lesson("padding", one_position).header.setting.back() == "valid_lens [1, 1]");
}

TEST_CASE("refusals: one line naming the option, before anything is computed") {
  auto refused = [](const LessonOptions& o) -> std::string {
    try {
      report::Report r;
      find_lesson("padding")->run(o, r);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  };
  LessonOptions too_long;
  too_long.own_lists["--valid-lens"] = {5, 6};
  CHECK(refused(too_long) ==
        "--valid-lens: a length exceeds the S = 5 positions (--seq-len) (--valid-lens: lengths 1..5 vs 6)");
  LessonOptions wrong_count;
  wrong_count.own_lists["--valid-lens"] = {5, 2};
  wrong_count.batch = 3;
  CHECK(refused(wrong_count) == "--valid-lens needs one length per sequence (--valid-lens: 3 lengths (--batch 3) vs 2)");
  LessonOptions both = with_sentences({"a b", "c"});
  both.own_lists["--valid-lens"] = {2, 1};
  CHECK(refused(both).find("--valid-lens cannot be combined with --tokens") == 0);
  LessonOptions batch = with_sentences({"a b", "c"});
  batch.batch = 3;
  CHECK(refused(batch) == "--batch disagrees with the number of --tokens sentences (--batch: 2 (one per sentence) vs 3)");
  LessonOptions seq = with_sentences({"a b", "c"});
  seq.seq_len = 4;
  CHECK(refused(seq) == "--seq-len disagrees with --tokens: S is the longest sentence (--seq-len: 2 (the longest "
                        "sentence) vs 4)");
  LessonOptions huge;
  huge.batch = 64;
  huge.seq_len = 4096;
  CHECK(refused(huge).find("self_scores (64, 4096, 4096) would be too large to hold") == 0);
  // Every tensor printable, all of them together (and their row labels) past the budget: refused
  // from the sizes, before anything is made.
  LessonOptions wide;
  wide.batch = 65536;
  wide.seq_len = 16;
  CHECK(refused(wide) == "padding at these sizes would hold 1.01 GiB at once, more than a lesson may; add --shapes-only "
                         "(--batch, --seq-len, --queries, --d-in: at most 800.00 MiB of tensors and labels together vs "
                         "1.01 GiB)");
  // --shapes-only for a sink that reads values (this report keeps them) computes them: the budget holds.
  LessonOptions kept;
  kept.shapes_only = true;
  kept.batch = 2;
  kept.seq_len = 4096;
  kept.own["--queries"] = 4096;
  CHECK(refused(kept) == "padding at these sizes would hold 1.51 GiB at once, more than a lesson may (--batch, "
                         "--seq-len, --queries, --d-in: at most 800.00 MiB of tensors and labels together vs 1.51 GiB)");
}

TEST_CASE("--valid-lens is parsed as a list: whole numbers, commas, the range of every entry") {
  const LessonOption* lens = find_lesson("padding")->find_extra("--valid-lens");
  REQUIRE(lens != nullptr);
  CHECK(lens->type == OptionType::IntegerList);
  CHECK(parse_lesson_list(*lens, "5,2") == std::vector<std::int64_t>{5, 2});
  CHECK(parse_lesson_list(*lens, "7") == std::vector<std::int64_t>{7});
  CHECK_THROWS_WITH_AS(parse_lesson_list(*lens, "5,0"), "--valid-lens is out of range (--valid-lens: each 1..65536 vs 0)",
                       UsageError);
  CHECK_THROWS_WITH_AS(parse_lesson_list(*lens, "-1"),
                       "--valid-lens must not be negative (--valid-lens: each 1..65536 vs '-1')", UsageError);
  for (const char* bad : {"", "5,,2", "5,", ",5", "5, 2", "5;2", "2.5", "x"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(parse_lesson_list(*lens, bad),
                         doctest::Contains("--valid-lens expects whole numbers separated by commas"), UsageError);
  }
  // A lesson that reads its list gets an empty one when none was given; reading an undeclared
  // list is a programming error.
  CHECK_THROWS_AS(LessonOptions{}.integers("--valid-lens"), std::logic_error);
}

TEST_CASE("over seeds 0..29 the sentences about fully masked rows match the tensors") {
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    CAPTURE(seed);
    LessonOptions o;
    o.seed = seed;
    const report::Report r = run_lesson("padding", o);
    for (const auto& c : checks(r)) {
      CAPTURE(c.text);
      if (!c.question) CHECK(c.passed);
    }
    // The padded query rows (sequence 1, rows 2..4) are NaN with -inf and 0.2 each with -1e9.
    const report::TensorItem& inf = tensor(r, "self_weights_inf");
    const report::TensorItem& big = tensor(r, "self_weights_1e9");
    for (std::size_t i = 0; i < inf.values.size(); ++i) {
      const bool padded_query = i >= 25 + 2 * 5;
      CHECK(std::isnan(inf.values[i]) == padded_query);
      if (padded_query) CHECK(big.values[i] == doctest::Approx(0.2f).epsilon(1e-6));
    }
    CHECK(stage_notes(r, 6).find("(1, 2), (1, 3), (1, 4)") != std::string::npos);
    const report::TableItem& t = table_with(r, "other rows vs -inf");
    CHECK(t.rows.at(0).at(2) == "NaN, every entry");
    CHECK(t.rows.at(1).at(2) == "uniform, 1/5 each");
  }
}
