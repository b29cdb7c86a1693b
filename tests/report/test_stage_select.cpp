// --stage SEL in the report layer: what the selection syntax accepts and refuses, how picks find
// stages among a finished report, and what a trimmed report tells its sinks (the header line,
// the [n/N] headings, the manifest and the step footer count as in the full run). The binary's
// behaviour (every output, the error lines) is tests/cli's business.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "report/manifest.hpp"
#include "report/stage.hpp"
#include "report/stage_select.hpp"
#include "report/step.hpp"
#include "report/text_sink.hpp"

using namespace attn::report;

namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Five stages with titles like a lesson's (two mention softmax).
Report five_stages() {
  Report r;
  r.header.lesson = "causal";
  r.header.title = "Causal attention";
  r.header.reproduce = {"torch.manual_seed(789)"};
  const attn::Mat m = {{1.0f, 2.0f}, {3.0f, 4.0f}};  // (2, 2)
  r.stage("Inputs").show("x", m);
  r.stage("Scores").show("attn_scores", m);
  r.stage("The causal mask").show("mask", m);
  r.stage("Softmax of the masked scores").show("attn_weights", m).attention_weights();
  r.stage("The other route: softmax first").show("w2", m);
  return r;
}

StageSelection parsed(const std::string& text) {
  StageSelectionProblem problem;
  const auto sel = parse_stage_selection(text, problem);
  INFO(text << ": " << problem.what);
  REQUIRE(sel.has_value());
  return *sel;
}

std::vector<std::size_t> resolved(const std::string& text, const Report& r) {
  StageSelectionProblem problem;
  auto numbers = resolve_stage_selection(parsed(text), r.stages(), r.header.lesson, problem);
  INFO(text << ": " << problem.what);
  REQUIRE(!numbers.empty());
  return numbers;
}

// The problem a selection meets: at parsing, or (when it parses) among `r`'s stages.
StageSelectionProblem problem_of(const std::string& text, const Report& r) {
  StageSelectionProblem problem;
  const auto sel = parse_stage_selection(text, problem);
  if (sel) CHECK(resolve_stage_selection(*sel, r.stages(), r.header.lesson, problem).empty());
  CHECK(!problem.what.empty());
  return problem;
}

}  // namespace

TEST_CASE("--stage picks by number, range, list and words of a title, each stage once, in order") {
  const Report r = five_stages();
  CHECK(resolved("3", r) == std::vector<std::size_t>{3});
  CHECK(resolved("2-4", r) == std::vector<std::size_t>{2, 3, 4});
  CHECK(resolved("5,1-2", r) == std::vector<std::size_t>{1, 2, 5});
  CHECK(resolved("2, 2-3 ,3", r) == std::vector<std::size_t>{2, 3});
  CHECK(resolved(" 4 - 5 ", r) == std::vector<std::size_t>{4, 5});
  // Words: case-insensitive, inside the title, spaces squeezed; every title that holds them.
  CHECK(resolved("softmax", r) == std::vector<std::size_t>{4, 5});
  CHECK(resolved("SOFTMAX", r) == std::vector<std::size_t>{4, 5});
  CHECK(resolved("causal   Mask", r) == std::vector<std::size_t>{3});
  CHECK(resolved("inputs,4", r) == std::vector<std::size_t>{1, 4});
  CHECK(resolved("route: soft", r) == std::vector<std::size_t>{5});
}

TEST_CASE("--stage syntax is refused before the lesson runs, naming what was typed") {
  StageSelectionProblem problem;
  for (const std::string bad : {"", "  ", "0", "0-3", "3-0", "5-", "-2", "2--3", "1-2-3", "2,,3", "2,", ",2", "7-5"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_stage_selection(bad, problem).has_value());
    CHECK(contains(problem.what, "--stage"));
    CHECK(!problem.expected.empty());
  }
  CHECK_FALSE(parse_stage_selection("7-5", problem));
  CHECK(contains(problem.what, "runs backwards"));
  CHECK(problem.got == "'7-5'");
  CHECK_FALSE(parse_stage_selection("0", problem));
  CHECK(contains(problem.what, "from 1"));
  CHECK_FALSE(parse_stage_selection("2,,3", problem));
  CHECK(contains(problem.what, "empty entry"));
  // Control characters never reach the message.
  CHECK_FALSE(parse_stage_selection("1,\x1b[31m,", problem));
  CHECK(!contains(problem.got, "\x1b"));
}

TEST_CASE("--stage against the real stages: past the last one, or words in no title") {
  const Report r = five_stages();
  auto p = problem_of("6", r);
  CHECK(contains(p.what, "has 5 stages"));
  CHECK(p.expected == "stages 1..5");
  CHECK(p.got == "'6'");
  p = problem_of("2,4-9", r);
  CHECK(contains(p.what, "--stage 4-9"));
  p = problem_of("99999999999999999999999", r);  // saturated inside, quoted as typed
  CHECK(p.got == "'99999999999999999999999'");
  p = problem_of("1,attention", r);
  CHECK(contains(p.what, "'attention' is in no stage title of lesson 'causal'"));
  CHECK(contains(p.expected, "1 'Inputs'"));  // a few titles to choose from
  CHECK(contains(p.expected, "[n/5]"));
}

TEST_CASE("stage_ranges writes runs of numbers as ranges") {
  CHECK(stage_ranges({5}) == "5");
  CHECK(stage_ranges({5, 6, 7}) == "5-7");
  CHECK(stage_ranges({2, 5, 6, 7, 9}) == "2, 5-7, 9");
  CHECK(stage_ranges({1, 3}) == "1, 3");
}

TEST_CASE("a trimmed report keeps the header, numbers its stages as the full run did, and says which it shows") {
  Report full = five_stages();
  std::ostringstream all;
  TextSink all_sink(all, {});
  deliver(full, all_sink);

  Report r = five_stages();
  r.keep_stages({2, 4, 5}, "2,softmax");
  REQUIRE(r.stages().size() == 3);
  CHECK(r.total_stages() == 5);
  CHECK(r.stages()[1].index == 4);
  std::ostringstream out;
  TextSink sink(out, {});
  deliver(r, sink);
  const std::string s = out.str();
  CHECK(contains(s, "attn lesson causal: Causal attention\n"));
  CHECK(contains(s, "    torch.manual_seed(789)\n"));
  CHECK(contains(s, "\nstages 2, 4-5 of 5 (--stage 2,softmax)\n"));
  CHECK(!contains(s, "5 stages"));
  CHECK(contains(s, "[2/5] Scores"));
  CHECK(contains(s, "[4/5] Softmax"));
  CHECK(!contains(s, "[1/5]"));
  CHECK(!contains(s, "[3/5]"));
  // Each stage kept prints exactly as in the full run.
  const std::string full_text = all.str();
  const std::string stage4 = s.substr(s.find("\n[4/5]"), s.find("\n[5/5]") - s.find("\n[4/5]"));
  CHECK(contains(full_text, stage4));
  CHECK(stages_line(full.header, 5) == "5 stages");

  Report one = five_stages();
  one.keep_stages({3}, "mask");
  CHECK(stages_line(one.header, one.total_stages()) == "stage 3 of 5 (--stage mask)");
  // The option as typed is the learner's text: a tab or newline around the words still finds the
  // title, and reaches the header line cleaned.
  Report tabbed = five_stages();
  tabbed.keep_stages(resolved("\tmask\n", tabbed), "\tmask\n");
  CHECK(stages_line(tabbed.header, tabbed.total_stages()) == "stages 3-4 of 5 (--stage ?mask?)");
  // Numbers that are not this run's stages are a programming error.
  Report bad = five_stages();
  CHECK_THROWS_AS(bad.keep_stages({2, 9}, "2,9"), std::logic_error);
  CHECK_THROWS_AS(bad.keep_stages({3, 2}, "3,2"), std::logic_error);
  CHECK(bad.stages().size() == 5);  // a refused call changes nothing
  CHECK(bad.stages()[1].items.size() == 1);
}

TEST_CASE("the manifest of a trimmed report lists only its stages and says which of how many") {
  Report r = five_stages();
  const std::string before = manifest_json(r.header, "attn lesson causal", r.stages(), false);
  CHECK(!contains(before, "stage_selection"));
  r.keep_stages({4}, "softmax");
  const std::string j = manifest_json(r.header, "attn lesson causal --stage softmax", r.stages(), false);
  CHECK(contains(j, "\"stage_selection\": {\"option\": \"softmax\", \"stages\": [4], \"of\": 5},"));
  CHECK(contains(j, "{\"index\": 4, \"title\": \"Softmax of the masked scores\""));
  CHECK(contains(j, "\"file\": \"s04_attn_weights.npy\""));
  CHECK(!contains(j, "\"index\": 3"));
  CHECK(!contains(j, "\"index\": 5"));
}

TEST_CASE("--step over a trimmed report pauses only on its stages, counting as the headings do") {
  class Keys : public KeySource {
   public:
    Key read_key() override { return Key::next; }
  } keys;
  Report r = five_stages();
  r.keep_stages({2, 3}, "2-3");
  std::ostringstream out;
  TextSink sink(out, {});
  CHECK(step_through(r, sink, out, keys, {}) == StepEnd::finished);
  const std::string s = out.str();
  CHECK(contains(s, "stage 2/5 \u00b7 n next"));
  CHECK(contains(s, "stage 3/5 \u00b7 n end"));  // the last one shown ends the walk
  CHECK(!contains(s, "stage 1/5"));
  CHECK(!contains(s, "stage 4/5"));
  CHECK(step_footer(3, 5, 80, true) == "stage 3/5 \u00b7 n end \u00b7 p back \u00b7 q quit");
}
