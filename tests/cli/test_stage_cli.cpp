// --stage SEL through the binary (issue 12, "Getting around a lesson"): the selected stages come
// out exactly as they do in the full run, in the text, in --format json, in --dump and in --svg;
// the run header stays, with a line saying which stages of how many; bad selections are one line
// on stderr, status 2, nothing on stdout and nothing written. (--step over a selection: the pty
// case in test_pictures, and the loop itself in tests/report/test_stage_select.cpp.)
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "process.hpp"
#include "scratch.hpp"

namespace fs = std::filesystem;
using attn::testing::read_file;
using attn::testing::TempDir;

namespace {

const std::string kAttn = ATTN_BINARY;

attn::testing::Result attn_run(std::vector<std::string> args) {
  args.insert(args.begin(), kAttn);
  return attn::testing::run(args, 120);
}

// A run that must succeed quietly.
std::string output_of(std::vector<std::string> args) {
  const auto r = attn_run(args);
  INFO(r.err);
  REQUIRE(r.status == 0);
  REQUIRE(r.err.empty());
  return r.out;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The numbers of the "[n/N]" headings, in order.
std::vector<int> headings(const std::string& text, int total) {
  std::vector<int> found;
  const std::string tail = "/" + std::to_string(total) + "] ";
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.size() > 1 && line[0] == '[' && std::isdigit(static_cast<unsigned char>(line[1])) && contains(line, tail))
      found.push_back(std::stoi(line.substr(1)));
  return found;
}

// From the heading of stage `n` up to (not including) the next heading or the end.
std::string stage_text(const std::string& text, int n, int total) {
  const auto at = text.find("\n[" + std::to_string(n) + "/" + std::to_string(total) + "] ");
  REQUIRE(at != std::string::npos);
  const auto next = text.find("\n[" + std::to_string(n + 1) + "/" + std::to_string(total) + "] ", at + 1);
  return text.substr(at, next == std::string::npos ? std::string::npos : next - at);
}

std::set<std::string> files_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  return names;
}

}  // namespace

TEST_CASE("--stage 5-7: the header of the full run, a line naming the choice, then those stages exactly as printed in full") {
  // --stage shows its stages whole, as --full prints them (the default text leaves detail out).
  const std::string full = output_of({"lesson", "heads", "--full"});
  const std::string part = output_of({"lesson", "heads", "--stage", "5-7"});
  REQUIRE(headings(full, 14).size() == 14);
  CHECK(headings(part, 14) == std::vector<int>{5, 6, 7});
  // Everything before the stage count is the full run's: title, setting, reproduce lines.
  const auto full_count = full.find("\n14 stages\n");
  REQUIRE(full_count != std::string::npos);
  CHECK(part.compare(0, full_count + 1, full, 0, full_count + 1) == 0);
  CHECK(part.compare(full_count + 1, 31, "stages 5-7 of 14 (--stage 5-7)\n") == 0);
  CHECK(!contains(part, "14 stages"));
  for (int n : {5, 6, 7}) CHECK(stage_text(part, n, 14) == stage_text(full, n, 14));
  CHECK(part.size() * 3 < full.size());  // a jump, not the whole lesson
}

TEST_CASE("--stage picks by a list, by words of a title (any case), and by the titles of this run") {
  CHECK(headings(output_of({"lesson", "heads", "--stage", "2,5-7"}), 14) == std::vector<int>{2, 5, 6, 7});
  CHECK(headings(output_of({"lesson", "heads", "--stage", "12,1"}), 14) == std::vector<int>{1, 12});
  const std::string soft = output_of({"lesson", "heads", "--stage", "SoftMax"});
  CHECK(headings(soft, 14) == std::vector<int>{8});
  CHECK(contains(soft, "\nstage 8 of 14 (--stage SoftMax)\n"));
  CHECK(headings(output_of({"lesson", "causal", "--stage", "softmax"}), 10) == std::vector<int>{6, 7});
  CHECK(headings(output_of({"lesson", "heads", "--stage", "the mistake, aside"}), 14) == std::vector<int>{7, 14});
  // phillips' stage 8 is titled for its run (no mask): the words are matched against this run.
  const std::string phillips = output_of({"lesson", "heads", "--preset", "phillips", "--stage", "no mask"});
  CHECK(headings(phillips, 14) == std::vector<int>{8});
  CHECK(stage_text(phillips, 8, 14) ==
        stage_text(output_of({"lesson", "heads", "--preset", "phillips", "--full"}), 8, 14));
}

TEST_CASE("every lesson takes --stage: its first stage alone, counted out of all of them") {
  const auto names = attn_run({"list", "--names"});
  REQUIRE(names.status == 0);
  std::istringstream in(names.out);
  std::vector<std::string> all;
  for (std::string name; std::getline(in, name);) all.push_back(name);
  CHECK(all.size() >= 14);
  // A third of the lessons under the sanitizers (process.hpp, all_or_a_third).
  for (const auto& name : attn::testing::all_or_a_third(all, 1)) {
    CAPTURE(name);
    const std::string out = output_of({"lesson", name, "--stage", "1", "--shapes-only"});
    const auto at = out.find("\nstage 1 of ");
    REQUIRE(at != std::string::npos);
    const int total = std::stoi(out.substr(at + 12));
    CHECK(total >= 4);
    CHECK(contains(out, "\nstage 1 of " + std::to_string(total) + " (--stage 1)\n"));
    CHECK(headings(out, total) == std::vector<int>{1});
  }
}

TEST_CASE("--stage with --format json: only those stages, each as in the full JSON, and which of how many") {
  const std::string full = output_of({"lesson", "causal", "--format", "json"});
  const std::string part = output_of({"lesson", "causal", "--stage", "4-6", "--format", "json"});
  CHECK(part.rfind("{\n  \"format\": ", 0) == 0);
  CHECK(contains(part, "\"stage_selection\": {\"option\": \"4-6\", \"stages\": [4, 5, 6], \"of\": 10},"));
  CHECK(!contains(full, "stage_selection"));
  for (int n = 1; n <= 10; ++n) CHECK(contains(part, "{\"index\": " + std::to_string(n) + ",") == (n >= 4 && n <= 6));
  // The stage objects are byte for byte those of the full run: the same numbers.
  const auto from = [](const std::string& j, int n) {
    const auto a = j.find("{\"index\": " + std::to_string(n) + ",");
    const auto b = j.find("{\"index\": " + std::to_string(n + 1) + ",");
    return j.substr(a, b == std::string::npos ? std::string::npos : b - a);
  };
  CHECK(from(part, 4) == from(full, 4));
  CHECK(from(part, 5) == from(full, 5));
  CHECK(contains(from(full, 6), from(part, 6).substr(0, from(part, 6).rfind("]}") + 2)));
}

TEST_CASE("--stage with --dump and --svg: only the selected stages' files, the same bytes as the full run's") {
  TempDir tmp{"attn-stage"};
  const fs::path all = tmp.path / "all", part = tmp.path / "part", svg_all = tmp.path / "svg_all",
                 svg_part = tmp.path / "svg_part";
  output_of({"lesson", "causal", "--dump", all.string(), "--svg", svg_all.string()});
  output_of({"lesson", "causal", "--stage", "6", "--dump", part.string(), "--svg", svg_part.string()});
  std::set<std::string> expected = {"manifest.json"};
  for (const auto& f : files_in(all))
    if (f.rfind("s06_", 0) == 0) expected.insert(f);
  REQUIRE(expected.size() >= 2);
  CHECK(files_in(part) == expected);
  for (const auto& f : expected)
    if (f != "manifest.json") CHECK_MESSAGE(read_file(part / f) == read_file(all / f), f);
  CHECK(contains(read_file(part / "manifest.json"), "\"stage_selection\": {\"option\": \"6\", \"stages\": [6], \"of\": 10}"));
  CHECK(files_in(svg_all).size() == 2);
  CHECK(files_in(svg_part) == std::set<std::string>{"causal-stage06-attn_weights.svg"});
  CHECK(read_file(svg_part / "causal-stage06-attn_weights.svg") == read_file(svg_all / "causal-stage06-attn_weights.svg"));
}

TEST_CASE("a bad --stage: one line naming --stage and what was expected, status 2, nothing printed or written") {
  TempDir tmp{"attn-stage"};
  struct Bad {
    std::vector<std::string> args;
    std::vector<std::string> says;
  };
  const std::vector<Bad> cases = {
      {{"lesson", "heads", "--stage", "5-"}, {"--stage", "'5-'", "a range such as 5-7"}},
      {{"lesson", "heads", "--stage", "0"}, {"--stage", "from 1"}},
      {{"lesson", "heads", "--stage", "7-5"}, {"--stage", "runs backwards"}},
      {{"lesson", "heads", "--stage", "2,,3"}, {"--stage", "empty entry"}},
      {{"lesson", "heads", "--stage"}, {"--stage needs a value"}},
      // Known only after the lesson ran, still refused before any output.
      {{"lesson", "heads", "--stage", "15"}, {"--stage 15", "lesson 'heads' has 14 stages", "1..14"}},
      {{"lesson", "causal", "--stage", "3,9-12"}, {"--stage 9-12", "has 10 stages"}},
      {{"lesson", "heads", "--stage", "dropout"},
       {"--stage 'dropout' is in no stage title of lesson 'heads'", "1 'Inputs: a batch of token embeddings'", "[n/14]"}},
  };
  for (const auto& c : cases) {
    for (const bool outputs : {false, true}) {
      std::vector<std::string> args = c.args;
      const fs::path dump = tmp.path / "dump", svg = tmp.path / "svg";
      if (outputs) args.insert(args.begin() + 2, {"--dump", dump.string(), "--svg", svg.string()});
      std::string line;
      for (const auto& a : args) line += " " + a;
      CAPTURE(line);
      const auto r = attn_run(args);
      CAPTURE(r.err);
      CHECK(r.status == 2);
      CHECK(r.out.empty());
      CHECK(r.err.rfind("attn: error: ", 0) == 0);
      CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
      for (const auto& s : c.says) CHECK_MESSAGE(contains(r.err, s), s);
      CHECK(files_in(tmp.path).empty());  // no dump, no pictures, no temporary left
    }
  }
}
