// The attn binary as a learner meets it: run as a process, checking stdout, stderr and the exit
// status. Bad input must give exactly one line on stderr, nothing on stdout and status 2.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "process.hpp"

using attn::testing::run;
using attn::testing::run_shell;

namespace {

const std::string kAttn = ATTN_BINARY;

attn::testing::Result attn_run(std::vector<std::string> args) {
  args.insert(args.begin(), kAttn);
  return run(args);
}

std::size_t count_lines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

namespace {

// The registered lessons in teaching order, as `attn list --names` prints them.
std::vector<std::string> lesson_names() {
  const auto r = attn_run({"list", "--names"});
  REQUIRE(r.status == 0);
  REQUIRE(r.err.empty());
  std::vector<std::string> names;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) names.push_back(line);
  REQUIRE(names.size() >= 7);
  return names;
}

}  // namespace

TEST_CASE("attn list --names: one lesson name per line, nothing else") {
  const std::vector<std::string> names = lesson_names();
  for (const auto& name : names) {
    CAPTURE(name);
    CHECK(!name.empty());
    CHECK(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string::npos);
  }
  // Each is a lesson that runs (a third of them under the sanitizers: process.hpp).
  for (const auto& name : attn::testing::all_or_a_third(names, 2)) {
    CAPTURE(name);
    CHECK(attn_run({"lesson", name, "--shapes-only"}).status == 0);
  }
  const auto both = attn_run({"list", "--names", "--presets"});
  CHECK(both.status == 2);
  CHECK(both.out.empty());
  CHECK(both.err == "attn: error: --presets and --names contradict each other (--names: one of them vs both)\n");
}

TEST_CASE("attn list shows every lesson in teaching order, numbered, with its title and summary") {
  const auto r = attn_run({"list"});
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  const std::string head = "Lessons, in teaching order (run: attn lesson NAME):\n\n";
  REQUIRE(r.out.compare(0, head.size(), head) == 0);
  // Every name from --names, in the same order, on a line "  N. name  title" with the summary
  // wrapped under it (at most 80 columns) and starting in the title's column. N is right-aligned
  // to the widest number, so with ten lessons or more "   9." sits above "  10.".
  const std::vector<std::string> names = lesson_names();
  const std::size_t digits = std::to_string(names.size()).size();
  const auto numbered = [&](std::size_t n) {
    const std::string s = std::to_string(n);
    return "  " + std::string(digits - s.size(), ' ') + s + ". ";
  };
  std::size_t at = head.size(), number = 1, title_column = 0;
  for (const auto& name : names) {
    CAPTURE(name);
    const std::string start = numbered(number++) + name + " ";
    REQUIRE(r.out.compare(at, start.size(), start) == 0);
    const std::size_t next = r.out.find("\n" + numbered(number), at);
    const std::string block = r.out.substr(at, next == std::string::npos ? std::string::npos : next + 1 - at);
    CHECK(count_lines(block) >= 2);  // the title line, then the summary
    std::istringstream lines(block);
    std::string title_line, summary_line;
    std::getline(lines, title_line);
    std::getline(lines, summary_line);
    const std::size_t title_at = title_line.find_first_not_of(' ', start.size());
    if (!title_column) title_column = title_at;
    CHECK(title_at == title_column);                                   // titles in one column
    CHECK(summary_line.find_first_not_of(' ') == title_column);        // the summary under the title
    for (std::istringstream all(block); std::getline(all, title_line);) CHECK(title_line.size() <= 80);
    at += block.size();
  }
  CHECK(at == r.out.size());  // nothing after the last lesson
}

TEST_CASE("every registered lesson has its page docs/<name>.md and its golden output tests/golden/<name>.txt") {
  // Adding a lesson is three files: lessons/<name>.cpp, docs/<name>.md, tests/golden/<name>.txt.
  for (const auto& name : lesson_names()) {
    CAPTURE(name);
    const std::string page = read_file(std::string(ATTN_SOURCE_DIR) + "/docs/" + name + ".md");
    CHECK(page.find("attn lesson " + name) != std::string::npos);  // a page about this lesson
    const std::string golden = read_file(std::string(ATTN_SOURCE_DIR) + "/tests/golden/" + name + ".txt");
    CHECK(golden.rfind("attn lesson " + name + ":", 0) == 0);  // its default output, header first
  }
}

namespace {

// The lines of one "## Heading" section of a page, up to the next "## " heading (empty if absent).
std::string page_section(const std::string& page, const std::string& heading) {
  const std::string start = "\n## " + heading + "\n";
  const auto at = page.find(start);
  if (at == std::string::npos) return "";
  const auto end = page.find("\n## ", at + start.size());
  return page.substr(at + 1, end == std::string::npos ? std::string::npos : end - at);
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

}  // namespace

TEST_CASE("lessons and exercises link both ways: each page names its exercises, exercises.md its lessons") {
  // lessons/exercises/exercises.txt: name | lesson | file | what you write, the hint indented below
  std::istringstream table(read_file(std::string(ATTN_SOURCE_DIR) + "/lessons/exercises/exercises.txt"));
  const std::string list = read_file(std::string(ATTN_SOURCE_DIR) + "/docs/exercises.md");
  std::size_t rows = 0;
  for (std::string line; std::getline(table, line);) {
    if (trim(line).empty() || line[0] == '#' || line[0] == ' ' || line[0] == '\t') continue;
    std::vector<std::string> fields;
    std::istringstream in(line);
    for (std::string field; std::getline(in, field, '|');) fields.push_back(trim(field));
    REQUIRE(fields.size() >= 4);
    const std::string name = fields[0], lesson = fields[1];
    CAPTURE(name);
    CAPTURE(lesson);
    const std::string page = read_file(std::string(ATTN_SOURCE_DIR) + "/docs/" + lesson + ".md");
    const std::string section = page_section(page, "Exercises");
    CHECK(section.find("`attn check " + name + "`") != std::string::npos);  // named where a learner looks
    CHECK(section.find("(exercises.md)") != std::string::npos);            // and the way to the others
    CHECK(list.find("| `" + name + "` | [" + lesson + "](" + lesson + ".md) |") != std::string::npos);  // and back
    ++rows;
  }
  CHECK(rows >= 11);
}

TEST_CASE("a lesson's text screen ends by naming its exercises, but not under --stage or JSON") {
  // Every row of exercises.txt is named in the last lines of its lesson's golden screen.
  std::istringstream table(read_file(std::string(ATTN_SOURCE_DIR) + "/lessons/exercises/exercises.txt"));
  std::size_t rows = 0;
  for (std::string line; std::getline(table, line);) {
    if (trim(line).empty() || line[0] == '#' || line[0] == ' ' || line[0] == '\t') continue;  // hints are indented
    std::istringstream in(line);
    std::string name, lesson;
    std::getline(in, name, '|');
    std::getline(in, lesson, '|');
    name = trim(name);
    lesson = trim(lesson);
    CAPTURE(name);
    const std::string golden = read_file(std::string(ATTN_SOURCE_DIR) + "/tests/golden/" + lesson + ".txt");
    const auto practise = golden.rfind("\nPractise it: ");
    REQUIRE(practise != std::string::npos);
    CHECK(golden.find("attn check " + name, practise) != std::string::npos);
    CHECK(golden.find("\n\n", practise + 1) == std::string::npos);  // the last paragraph
    ++rows;
  }
  CHECK(rows >= 11);
  const auto full = attn_run({"lesson", "causal"});
  REQUIRE(full.status == 0);
  const std::string last = "\n\nPractise it: attn check causal-mask, attn check masked-fill\n(attn exercises lists all ";
  const auto at = full.out.rfind(last);
  REQUIRE(at != std::string::npos);
  CHECK(full.out.find('\n', at + last.size()) == full.out.size() - 1);  // the screen's last two lines
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"lesson", "causal", "--stage", "4"}, {"lesson", "causal", "--format", "json"}}) {
    const auto r = attn_run(args);
    CAPTURE(args.back());
    CHECK(r.status == 0);
    CHECK(r.out.find("Practise it") == std::string::npos);
  }
}

TEST_CASE("every lesson page has a Try this section of 3 to 5 commands, and each runs cleanly") {
  // Each command is one line starting with "attn " inside a ``` block, without quotes: split on spaces.
  std::size_t ran = 0;
  for (const auto& name : lesson_names()) {
    CAPTURE(name);
    const std::string section =
        page_section(read_file(std::string(ATTN_SOURCE_DIR) + "/docs/" + name + ".md"), "Try this");
    REQUIRE(!section.empty());
    std::istringstream in(section);
    bool in_block = false;
    std::size_t commands = 0;
    for (std::string line; std::getline(in, line);) {
      if (trim(line).rfind("```", 0) == 0) {
        in_block = !in_block;
        continue;
      }
      const std::string command = trim(line);
      if (!in_block || command.rfind("attn ", 0) != 0) continue;
      CAPTURE(command);
      REQUIRE(command.find_first_of("'\"|<>;&$`#\\") == std::string::npos);  // plain words only
      std::vector<std::string> argv;
      std::istringstream words(command);
      for (std::string word; words >> word;) argv.push_back(word);
      argv[0] = kAttn;
#ifdef ATTN_SANITIZED
      // Under the sanitizers (47 s for all 46 commands) the first command of each page runs; the
      // Release suite runs them all (docs/testing.md, "CI time").
      const int limit = 60;
      const bool runs = commands == 0;
#else
      const int limit = 10;  // a try-this is quick; the whole test takes a few seconds
      const bool runs = true;
#endif
      if (runs) {
        const auto r = run(argv, limit);
        CHECK(r.status == 0);
        CHECK(r.err.empty());
        CHECK(!r.out.empty());
      }
      ++commands;
    }
    CHECK(!in_block);  // every block closed
    CHECK(commands >= 3);
    CHECK(commands <= 5);
    ran += commands;
  }
  CHECK(ran >= 45);
}

TEST_CASE("a lesson's own option: strict, ranged, refused by the lessons that do not declare it") {
  const auto ok = attn_run({"lesson", "scaling", "--samples", "16"});
  CHECK(ok.status == 0);
  CHECK(ok.err.empty());
  CHECK(ok.out.find("samples 16,") != std::string::npos);
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"lesson", "scaling", "--samples", "0"}, "attn: error: --samples is out of range (--samples: 16..65536 vs 0)\n"},
      {{"lesson", "scaling", "--samples", "65537"}, "attn: error: --samples is out of range (--samples: 16..65536 vs 65537)\n"},
      {{"lesson", "scaling", "--samples", "1e3"}, "attn: error: --samples expects a whole number (--samples: 16..65536 vs '1e3')\n"},
      {{"lesson", "scaling", "--samples"}, "attn: error: --samples needs a value (--samples: a value vs nothing)\n"},
      {{"lesson", "causal", "--samples", "64"},
       "attn: error: lesson 'causal' does not take --samples (--samples: one of --batch, --seq-len, --d-in, --d-out, "
       "--seed, --tokens, --input, --weights, --weights-layout, --allow-nonfinite (attn lesson causal --help) vs "
       "--samples)\n"},
  };
  for (const auto& [args, message] : bad) {
    const auto& last_arg = args.back();  // clang 14 cannot capture a structured binding (CAPTURE is a lambda)
    CAPTURE(last_arg);
    const auto r = attn_run(args);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err == message);
  }
  const auto help = attn_run({"lesson", "--help"});
  CHECK(help.out.find("--samples INT") != std::string::npos);
  CHECK(help.out.find("16..65536, default 4096 (scaling)") != std::string::npos);
}

TEST_CASE("--help and --version") {
  const auto help = attn_run({"--help"});
  CHECK(help.status == 0);
  CHECK(help.out.find("lesson") != std::string::npos);
  CHECK(help.out.find("list") != std::string::npos);
  const auto lesson_help = attn_run({"lesson", "--help"});
  CHECK(lesson_help.status == 0);
  CHECK(lesson_help.out.find("--shapes-only") != std::string::npos);
  const auto version = attn_run({"--version"});
  CHECK(version.status == 0);
  CHECK(version.out.rfind("attn ", 0) == 0);
  const auto bare = attn_run({});
  CHECK(bare.status == 0);
  CHECK(bare.out.find("lesson") != std::string::npos);
}

TEST_CASE("an unknown lesson suggests the nearest name") {
  const auto r = attn_run({"lesson", "casual"});
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "attn: error: unknown lesson 'casual' (did you mean 'causal'?)\n");

  const auto far = attn_run({"lesson", "transformer"});
  CHECK(far.status == 2);
  std::string expected;  // every registered lesson in teaching order, as `attn list --names` gives them
  for (const auto& name : lesson_names()) expected += (expected.empty() ? "" : ", ") + name;
  CHECK(far.err.find("expected one of: " + expected) != std::string::npos);
}

TEST_CASE("bad values: one line on stderr naming the option, status 2, empty stdout") {
  struct Case {
    std::vector<std::string> args;
    std::string option;  // must appear in the message
  };
  const std::vector<Case> cases = {
      {{"lesson", "heads", "--heads", "3"}, "--heads"},            // does not divide d_out 2
      {{"lesson", "heads", "--heads", "0"}, "--heads"},
      {{"lesson", "causal", "--d-out", "0"}, "--d-out"},
      {{"lesson", "causal", "--d-in", "-3"}, "--d-in"},
      {{"lesson", "causal", "--batch", "two"}, "--batch"},
      {{"lesson", "causal", "--seq-len", "1.5"}, "--seq-len"},
      {{"lesson", "causal", "--precision", "0"}, "--precision"},
      {{"lesson", "causal", "--precision", "11"}, "--precision"},
      {{"lesson", "causal", "--seed", "-1"}, "--seed"},
      {{"lesson", "causal", "--seed", "99999999999999999999999"}, "--seed"},
      {{"lesson", "causal", "--seed"}, "--seed"},                 // value missing
      {{"lesson", "causal", "--tokens", ""}, "--tokens"},
      {{"lesson", "causal", "--tokens", "a b", "--seq-len", "3"}, "--seq-len"},
      {{"lesson", "causal", "--heads", "2"}, "--heads"},          // not an option of this lesson
      {{"lesson", "scaling", "--d-out", "4"}, "--d-out"},
      {{"lesson", "heads", "--causal", "--no-causal"}, "--causal"},
      {{"lesson", "causal", "--no-causal"}, "lesson 'causal' does not take --no-causal"},
      {{"lesson", "causal", "--bogus"}, "--bogus"},
      {{"lesson", "heads", "--seq-len", "5000", "--batch", "64"}, "--seq-len"},   // too large to hold
      {{"lesson", "self-attention", "--d-in", "5000", "--d-out", "5000"}, "--d-in"},  // too large to print
      {{"lesson"}, "lesson"},
      {{"lesson", "bottleneck", "--hidden", "0"}, "--hidden"},
      {{"lesson", "bahdanau", "--hidden", "100000"}, "--hidden"},
      {{"lesson", "luong", "--src", ""}, "--src"},
      {{"lesson", "luong", "--tgt", "   "}, "--tgt"},
      {{"lesson", "bottleneck", "--src", "a b c d e f g h i j k l m n o p q r s t u v w x y z aa bb cc dd ee ff gg"}, "--src"},
      {{"lesson", "bahdanau", "--heads", "2"}, "--heads"},
      {{"lesson", "causal", "--hidden", "8"}, "--hidden"},
  };
  for (const auto& c : cases) {
    std::string line;
    for (const auto& a : c.args) line += a + " ";
    CAPTURE(line);
    const auto r = attn_run(c.args);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("attn: error: ", 0) == 0);
    CHECK(count_lines(r.err) == 1);
    CHECK(r.err.find(c.option) != std::string::npos);
  }
}

TEST_CASE("--shapes-only lifts the printing limit but not the memory limit") {
  const auto printed = attn_run({"lesson", "self-attention", "--d-in", "5000", "--d-out", "5000", "--shapes-only"});
  CHECK(printed.status == 0);
  CHECK(printed.err.empty());
  CHECK(printed.out.find("tensor(") == std::string::npos);
  CHECK(printed.out.find("W_query (5000, 5000)") != std::string::npos);

  const auto held = attn_run({"lesson", "self-attention", "--seq-len", "5000", "--batch", "64", "--shapes-only"});
  CHECK(held.status == 2);
  CHECK(held.err.find("too large to hold") != std::string::npos);
}

TEST_CASE("causal and heads with --shapes-only past printable sizes compute nothing and show the real shapes") {
  // What the issue asked to see instantly: Llama-3.2-3B's attention at 4096 tokens.
  const auto llama = attn_run({"lesson", "heads", "--preset", "llama", "--seq-len", "4096", "--shapes-only"});
  CHECK(llama.status == 0);
  CHECK(llama.err.empty());
  CHECK(llama.out.find("attn_scores (1, 24, 4096, 4096)") != std::string::npos);
  CHECK(llama.out.find("1.50 GiB") != std::string::npos);
  CHECK(llama.out.find("tensor(") == std::string::npos);
  CHECK(llama.out.find("\ncheck ") == std::string::npos);  // no check's line (the last names attn check)
  // Held to the limit before, now only shapes: nothing is held.
  const auto heads = attn_run({"lesson", "heads", "--seq-len", "5000", "--batch", "64", "--shapes-only"});
  CHECK(heads.status == 0);
  CHECK(heads.out.find("attn_scores (64, 2, 5000, 5000)") != std::string::npos);
  const auto causal = attn_run({"lesson", "causal", "--seq-len", "65536", "--shapes-only"});
  CHECK(causal.status == 0);
  CHECK(causal.out.find("attn_weights (65536, 65536)") != std::string::npos);
  CHECK(causal.out.find("computes nothing") != std::string::npos);
  // Without --shapes-only the same size is refused, before anything is made.
  const auto refused = attn_run({"lesson", "causal", "--seq-len", "65536"});
  CHECK(refused.status == 2);
  CHECK(refused.err.find("too large to hold") != std::string::npos);
  // --shapes-only means shapes in JSON too (test_cli_json parses it): nothing is held either.
  const auto json = attn_run({"lesson", "heads", "--seq-len", "5000", "--batch", "64", "--shapes-only", "--format", "json"});
  CHECK(json.status == 0);
  CHECK(json.out.find("\"name\": \"attn_scores\", \"shape\": [64, 2, 5000, 5000]") != std::string::npos);
  CHECK(json.out.find("\"mode\": \"none\"") != std::string::npos);
  // JSON with values must hold them: refused at this size, before anything is made.
  const auto values = attn_run({"lesson", "heads", "--seq-len", "5000", "--batch", "64", "--format", "json"});
  CHECK(values.status == 2);
  CHECK(values.err.find("too large to hold") != std::string::npos);
}

// Not in the sanitizer build: golden/<name> runs each of these commands (attn lesson NAME) there,
// and what this test adds is about the output (its stages, checks, length and width), which the
// Release suite checks (docs/testing.md, "CI time").
#ifndef ATTN_SANITIZED
TEST_CASE("every lesson runs with its defaults, shows numbered stages, and every check passes") {
  for (const auto& name : lesson_names()) {
    CAPTURE(name);
    const auto r = attn_run({"lesson", name});
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out.find("[1/") != std::string::npos);
    CHECK(r.out.find("tensor(") != std::string::npos);
    CHECK(r.out.find("reproduce in PyTorch") != std::string::npos);
    CHECK(r.out.find("check passed: ") != std::string::npos);
    CHECK(r.out.find("check FAILED") == std::string::npos);
    // Every lesson fits one sitting and the page (issue 23; docs/testing.md, "One sitting"): at
    // most 300 lines, the two training lessons 400, and 100 columns on a pipe. What a long lesson
    // leaves out is one option away (--full), and the screen says so.
    const bool training = name == "learn-heads" || name == "align";
    std::size_t lines = 0, widest = 0;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) ++lines, widest = std::max(widest, line.size());
    CHECK(lines <= (training ? 400u : 300u));
    CHECK(widest <= 100);  // bytes: an upper bound on columns
    if (training) CHECK(r.out.find("--full prints") != std::string::npos);
  }
}
#endif

TEST_CASE("the same command twice prints the same bytes") {
  // Golden outputs tolerate other last digits on other machines (docs/testing.md); on one
  // machine, in one environment, the bytes must not move.
  // Under the sanitizers a third of the lessons, each run once: the second run adds no code path,
  // and the bytes are the Release suite's check (process.hpp, all_or_a_third).
  for (const auto& name : attn::testing::all_or_a_third(lesson_names(), 1)) {
    CAPTURE(name);
    const auto a = attn_run({"lesson", name, "--seed", "7"});
    CHECK(a.status == 0);
#ifndef ATTN_SANITIZED
    CHECK(a.out == attn_run({"lesson", name, "--seed", "7"}).out);
#endif
  }
  // The same with OpenBLAS on one thread and on two, for the preset whose GEMMs are big enough to
  // be split between threads.
  for (const char* threads : {"1", "2"}) {
    CAPTURE(threads);
    const std::string command = std::string("OPENBLAS_NUM_THREADS=") + threads + " '" + kAttn + "' lesson heads --preset llama";
    const auto a = run_shell(command), b = run_shell(command);
    CHECK(a.status == 0);
    CHECK(a.out.find("[1/") != std::string::npos);
    CHECK(a.out == b.out);
  }
  // ...and a different seed changes the numbers.
  CHECK(attn_run({"lesson", "causal", "--seed", "7"}).out != attn_run({"lesson", "causal", "--seed", "8"}).out);
}

TEST_CASE("--precision changes the printed decimals") {
  const auto r = attn_run({"lesson", "causal", "--precision", "2"});
  CHECK(r.status == 0);
  CHECK(r.out.find("[0.55, 0.45, 0.00") != std::string::npos);  // 0.5517, 0.4483 at 2 decimals
  CHECK(r.out.find("0.5517") == std::string::npos);
}

TEST_CASE("a closed pipe ends the program quietly") {
  const auto r = run_shell("'" + kAttn + "' lesson causal | head -3");
  CHECK(r.status == 0);  // head's status
  CHECK(r.err.empty());
  CHECK(count_lines(r.out) == 3);
  // attn's own status under pipefail: 0, no message, even when the reader leaves after one
  // line of a long output.
  const auto own = run({"/bin/bash", "-c", "set -o pipefail; '" + kAttn + "' lesson heads --heads 4 --d-out 8 --batch 64 | head -1"});
  CHECK(own.status == 0);
  CHECK(own.err.empty());
}

TEST_CASE("README's test command is what CI runs") {
  const std::string ci = read_file(ATTN_SOURCE_DIR "/.ci/run");
  const std::string readme = read_file(ATTN_SOURCE_DIR "/README.md");
  std::istringstream lines(ci);
  std::string command;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("time (bash scripts/setup.sh", 0) == 0) command = line;
  REQUIRE_FALSE(command.empty());
  CAPTURE(command);
  CHECK(readme.find("\n" + command + "\n") != std::string::npos);  // a line of its own, word for word
  // It prints its own duration (`time`), and runs in a subshell: a failing step fails the line
  // (and .ci/run, under set -e), and the learner is back in the repository root afterwards.
  CHECK(command.back() == ')');
  CHECK(command.find("ctest -j2 --output-on-failure)") != std::string::npos);
  // And the first command runs the causal lesson after the same setup, building attn alone.
  CHECK(readme.find("bash scripts/setup.sh && cmake -S . -B build && cmake --build build -j2 --target attn && "
                    "./build/attn lesson causal") != std::string::npos);
}

TEST_CASE("CI runs the golden outputs a second time under another OpenBLAS kernel") {
  // After the README's command (and a `cd build`), .ci/run has a line
  //   OPENBLAS_CORETYPE=<kernel> OPENBLAS_NUM_THREADS=<n> ctest ... -L golden ...
  const std::string ci = read_file(ATTN_SOURCE_DIR "/.ci/run");
  const auto readme_command = ci.find("\ntime (bash scripts/setup.sh");
  REQUIRE(readme_command != std::string::npos);
  std::istringstream lines(ci.substr(readme_command + 1));
  std::string again;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("OPENBLAS_CORETYPE=", 0) == 0) again = line;
  REQUIRE_FALSE(again.empty());
  CAPTURE(again);
  CHECK(again.find(" ctest ") != std::string::npos);
  CHECK(again.find(" -L golden") != std::string::npos);
  std::istringstream words(again);
  std::string core_word, threads_word;
  words >> core_word >> threads_word;
  const std::string core = core_word.substr(std::string("OPENBLAS_CORETYPE=").size());
  REQUIRE(threads_word.rfind("OPENBLAS_NUM_THREADS=", 0) == 0);
  const std::string threads = threads_word.substr(std::string("OPENBLAS_NUM_THREADS=").size());

  // OpenBLAS really takes that kernel (and that thread count, when it is 1), and it is not the
  // one it picks by itself on this machine: otherwise the second run would test nothing new.
  const std::string probe = ATTN_OPENBLAS_CORE;
  const auto forced = run_shell(core_word + " " + threads_word + " '" + probe + "'");
  REQUIRE(forced.status == 0);
  std::istringstream reported(forced.out);
  std::string forced_core, forced_threads;
  reported >> forced_core >> forced_threads;
  CHECK(forced_core == core);
  if (threads == "1") CHECK(forced_threads == "1");  // more than the CPUs is capped to their number
  const auto automatic = run_shell(
      "env -u OPENBLAS_CORETYPE -u OPENBLAS_NUM_THREADS -u GOTO_NUM_THREADS -u OMP_NUM_THREADS '" + probe + "'");
  REQUIRE(automatic.status == 0);
  CAPTURE(automatic.out);
  CHECK(automatic.out.substr(0, automatic.out.find(' ')) != core);
}

TEST_CASE("a failing check: everything is printed, each failure named on stderr, status 3") {
  // Inputs of 1e30 overflow the scores to inf, softmax makes NaN, and the rows no longer sum to
  // 1: a real failure, reached through the command line, not a test hook.
  const std::string csv = std::string(ATTN_TEST_TMP) + "/huge_x.csv";
  std::ofstream(csv) << "1e30,1e30,1e30\n2e30,-1e30,1e30\n";
  const auto r = attn_run({"lesson", "causal", "--input", csv});
  CHECK(r.status == 3);
  CHECK(r.out.find("check FAILED: every row of attn_weights sums to 1") != std::string::npos);
  CHECK(r.out.find("[10/10] Nothing leaks from the future") != std::string::npos);  // printed to the end
  REQUIRE(!r.err.empty());
  // Three invariants fail; four questions are left unanswered by the NaN, and fail the run too.
  std::istringstream lines(r.err);
  std::size_t failed = 0, unanswered = 0;
  for (std::string line; std::getline(lines, line);) {
    const bool check = line.rfind("attn: check failed in stage ", 0) == 0;
    const bool question = line.rfind("attn: question unanswered in stage ", 0) == 0;
    CHECK_MESSAGE((check || question), line);
    failed += check, unanswered += question;
  }
  CHECK(failed == 3);
  CHECK(unanswered == 4);
  CHECK(r.err.find("every row of attn_weights sums to 1 (max |sum - 1| = nan, required <= 1e-06)") != std::string::npos);

  // The same verdicts in JSON, and the same status.
  const auto j = attn_run({"lesson", "causal", "--input", csv, "--format", "json"});
  CHECK(j.status == 3);
  CHECK(j.out.find("\"checks\": {\"passed\": ") != std::string::npos);
  CHECK(j.out.find("\"failed\": 7") != std::string::npos);
  CHECK(j.out.find("\"answer\": \"none\"") != std::string::npos);
  CHECK(j.out.find("\"passed\": false") != std::string::npos);
}

TEST_CASE("attn verify: options are checked like the lessons'") {
  const auto near = attn_run({"verify", "--lesson", "casual"});
  CHECK(near.status == 2);
  CHECK(near.out.empty());
  CHECK(near.err == "attn: error: unknown lesson 'casual' (did you mean 'causal'?) (--lesson: a name from 'attn list' vs casual)\n");
  const auto seeds = attn_run({"verify", "--seeds", "x"});
  CHECK(seeds.status == 2);
  CHECK(count_lines(seeds.err) == 1);
  const auto one = attn_run({"verify", "--lesson", "causal", "--seeds", "3", "--list"});
  CHECK(one.status == 0);
  CHECK(one.out.find("attn lesson causal --seed 2: [") != std::string::npos);
  CHECK(one.out.find("attn lesson heads") == std::string::npos);
  CHECK(one.out.find(" passed, 0 failed\n") != std::string::npos);
  CHECK(one.out.rfind("attn verify: every check of lesson causal: defaults, presets, seeds 0..2,", 0) == 0);
  // --seeds 0 runs no seed at all: the heading must not claim seed 0.
  const auto none = attn_run({"verify", "--lesson", "causal", "--seeds", "0"});
  CHECK(none.status == 0);
  CHECK(none.out.rfind("attn verify: every check of lesson causal: defaults, presets, no seed sweep (--seeds 0),", 0) == 0);
}

TEST_CASE("the articles' names for the sizes run the same lesson as attn's own options") {
  // docs/names.md: what --d-model, --num-heads/--n-heads and --d-k/--d-key/--head-dim mean in
  // each lesson. Each pair must print the same bytes.
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> same = {
      {{"heads", "--d-model", "8"}, {"heads", "--d-in", "8", "--d-out", "8"}},  // the issue's command
      {{"heads", "--d-model", "8", "--n-heads", "4", "--batch", "3"}, {"heads", "--d-in", "8", "--d-out", "8", "--heads", "4", "--batch", "3"}},
      {{"heads", "--num-heads", "1"}, {"heads", "--heads", "1"}},
      {{"causal", "--d-model", "5", "--d-k", "3"}, {"causal", "--d-in", "5", "--d-out", "3"}},
      {{"self-attention", "--head-dim", "4"}, {"self-attention", "--d-out", "4"}},
      {{"self-attention", "--d-key", "4"}, {"self-attention", "--d-out", "4"}},
      {{"gqa", "--d-model", "16", "--num-heads", "8"}, {"gqa", "--d-in", "16", "--heads", "8"}},
      {{"padding", "--d-model", "6"}, {"padding", "--d-in", "6"}},
      {{"padding", "--d-k", "6"}, {"padding", "--d-in", "6"}},
      {{"rope", "--head-dim", "4"}, {"rope", "--d-k", "4"}},  // rope declares --d-k itself
      {{"rope", "--n-heads", "2"}, {"rope", "--heads", "2"}},
      {{"flash", "--d-k", "8"}, {"flash", "--head-dim", "8"}},  // and flash --head-dim
      {{"kv-cache", "--d-model", "16", "--num-heads", "4"}, {"kv-cache", "--d-in", "16", "--heads", "4"}},
      {{"gqa", "--head-dim", "3"}, {"gqa", "--d-k", "3"}},  // gqa and kv-cache declare --d-k
      {{"kv-cache", "--d-key", "6", "--d-in", "12"}, {"kv-cache", "--d-k", "6", "--d-in", "12"}},
  };
  for (const auto& [article, own] : same) {
    std::string line;
    for (const auto& a : article) line += a + " ";
    CAPTURE(line);
    std::vector<std::string> a = {"lesson"}, b = {"lesson"};
    a.insert(a.end(), article.begin(), article.end());
    b.insert(b.end(), own.begin(), own.end());
    const auto ra = attn_run(a), rb = attn_run(b);
    CHECK(ra.status == 0);
    CHECK(ra.err.empty());
    CHECK(rb.status == 0);
    CHECK(ra.out == rb.out);
  }
  const auto help = attn_run({"lesson", "--help"});
  CHECK(help.out.find("--d-model INT") != std::string::npos);
  CHECK(help.out.find("--num-heads INT") != std::string::npos);
  CHECK(help.out.find("--n-heads INT") != std::string::npos);
}

TEST_CASE("heads not d_in wide together through --weights, as a learner types it: W_query (24, 12), out_proj (12, 24)") {
  const std::string data = std::string(ATTN_SOURCE_DIR) + "/tests/data/headwidth";
  const std::vector<std::string> torch = {"--weights-layout", "torch", "--input", data + "/x.npy"};
  for (const std::string lesson : {"gqa", "kv-cache"}) {
    CAPTURE(lesson);
    std::vector<std::string> args = {"lesson", lesson, "--weights", data + "/gqa"};
    args.insert(args.end(), torch.begin(), torch.end());
    const auto r = attn_run(args);
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out.find("heads 4, kv_heads 2, d_k 6") != std::string::npos);
    CHECK(r.out.find("out_proj.weight (12, 24)") != std::string::npos);
    args.insert(args.end(), {"--heads", "5"});
    const auto refused = attn_run(args);
    CHECK(refused.status == 2);
    CHECK(refused.out.empty());
    CHECK(refused.err == "attn: error: --heads must divide W_query.npy's width, h * d_k (--heads: a divisor of 24 "
                         "(--weights " + data + "/gqa/W_query.npy) vs 5)\n");
  }
  std::vector<std::string> args = {"lesson", "heads", "--heads", "4", "--weights", data + "/heads"};
  args.insert(args.end(), torch.begin(), torch.end());
  const auto r = attn_run(args);
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("d_out 24, heads 4, d_k 6") != std::string::npos);
  CHECK(r.out.find("out_proj_width 12") != std::string::npos);
  CHECK(r.out.find("out_proj.weight (12, 24), out_proj.bias (12,)") != std::string::npos);
  args.insert(args.end(), {"--out-proj-width", "24"});
  const auto refused = attn_run(args);
  CHECK(refused.status == 2);
  CHECK(refused.err ==
        "attn: error: --out-proj-width disagrees with --weights (--out-proj-width: 12 (from out_proj.npy) vs 24)\n");
}

TEST_CASE("the articles' names where a lesson has no such size: one line with the reason, status 2") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"causal", "--num-heads", "2"},
       "lesson 'causal' has no head count: --num-heads is the articles' name for --heads, which only the multi-head "
       "lessons take (--num-heads: a lesson with heads (heads, "},
      {{"heads", "--d-k", "2"},
       "lesson 'heads' computes the head width itself, d_k = --d-out / --heads: for d_k 2, give --d-out = 2 x the "
       "number of heads (--d-k: --d-out and --heads vs --d-k 2)"},
      {{"gqa", "--d-in", "12", "--heads", "5"},
       "attn: error: --heads must divide --d-in when --d-k is not given (d_k = d_in / heads); or give --d-k "
       "(--heads: a divisor of 12 vs 5)\n"},
      {{"kv-cache", "--heads", "4", "--kv-heads", "3", "--d-k", "5"},
       "attn: error: --kv-heads must divide --heads (--kv-heads: a divisor of 4 vs 3)\n"},
      {{"gqa", "--d-k", "6", "--head-dim", "6"}, "--d-k and --head-dim both set --d-k in lesson 'gqa'"},
      {{"heads", "--out-proj-width", "5", "--d-k", "1"}, "lesson 'heads' computes the head width itself"},
      {{"bottleneck", "--d-model", "4"},
       "lesson 'bottleneck' has no d_model: its widths are --d-in (the word embeddings) and --hidden (the RNN's "
       "state) (--d-model: --d-in or --hidden vs --d-model 4)"},
      {{"scaling", "--d-model", "4"}, "lesson 'scaling' has no model width"},
      {{"scaling", "--d-key", "4"}, "lesson 'scaling' has no option for the key width"},
      {{"flash", "--num-heads", "2"}, "lesson 'flash' has no head count"},
      {{"kv-cache", "--d-k", "3", "--rope-theta", "10000"},
       "attn: error: --rope-theta needs an even head width: RoPE rotates pairs of dimensions (--rope-theta: --d-k "
       "even vs d_k 3)\n"},
      {{"causal", "--d-model", "4", "--d-in", "4"},
       "--d-in and --d-model both set --d-in in lesson 'causal' (--d-model: one of them vs both)"},
      {{"heads", "--d-model", "8", "--d-out", "8"}, "--d-out and --d-model both set --d-out in lesson 'heads'"},
      {{"heads", "--num-heads", "2", "--n-heads", "2"}, "--num-heads and --n-heads both set --heads"},
      {{"rope", "--d-k", "4", "--head-dim", "4"}, "--d-k and --head-dim both set --d-k in lesson 'rope'"},
      {{"heads", "--d-model", "0"}, "--d-model is out of range (--d-model: 1..65536 vs 0)"},
      {{"rope", "--head-dim", "1"}, "--head-dim is out of range (--head-dim: 2..512 vs 1)"},  // rope's range, the typed name
  };
  for (const auto& [args, message] : refused) {
    std::vector<std::string> full = {"lesson"};
    full.insert(full.end(), args.begin(), args.end());
    const auto& expected = message;  // clang 14 cannot capture a structured binding (CAPTURE is a lambda)
    CAPTURE(expected);
    const auto r = attn_run(full);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(count_lines(r.err) == 1);
    CHECK(r.err.rfind("attn: error: ", 0) == 0);
    CHECK(r.err.find(message) != std::string::npos);
  }
}

TEST_CASE("an unknown option: the nearest known one, or why attn lacks it") {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"lesson", "heads", "--seeed", "1"}, "attn: error: unknown option '--seeed' (did you mean '--seed'?)\n"},
      {{"lesson", "heads", "--d_model", "8"}, "attn: error: unknown option '--d_model' (did you mean '--d-model'?)\n"},
      {{"lesson", "heads", "--nheads", "2"}, "attn: error: unknown option '--nheads' (did you mean '--heads'?)\n"},
      {{"lesson", "heads", "--frobnicate"}, "attn: error: unknown option '--frobnicate' (see attn lesson heads --help)\n"},
      // The nearest among the lesson's own options, not among every lesson's: causal has no --heads.
      {{"lesson", "causal", "--seq_len", "4"}, "attn: error: unknown option '--seq_len' (did you mean '--seq-len'?)\n"},
      {{"lesson", "causal", "--kv-head", "2"},
       "attn: error: unknown option '--kv-head' (nearest: --kv-heads, which this lesson does not take; see attn "
       "lesson causal --help)\n"},
      {{"lesson", "rope", "--theat", "3"}, "attn: error: unknown option '--theat' (did you mean '--theta'?)\n"},
      // An unknown lesson is named first, whatever follows it.
      {{"lesson", "casual", "--seeed", "1"}, "attn: error: unknown lesson 'casual' (did you mean 'causal'?)\n"},
      {{"verify", "--seed", "3"}, "attn: error: unknown option '--seed' (did you mean '--seeds'?)\n"},
      {{"list", "--name"}, "attn: error: unknown option '--name' (did you mean '--names'?)\n"},
  };
  for (const auto& [args, message] : cases) {
    const auto& expected = message;  // clang 14 cannot capture a structured binding (CAPTURE is a lambda)
    CAPTURE(expected);
    const auto r = attn_run(args);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err == message);
  }
  // The articles' options attn leaves out on purpose say why, with or without '='.
  for (const std::vector<std::string>& args : {std::vector<std::string>{"lesson", "heads", "--dropout", "0.1"},
                                               std::vector<std::string>{"lesson", "causal", "--dropout=0.1"}}) {
    const auto r = attn_run(args);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(count_lines(r.err) == 1);
    CHECK(r.err.rfind("attn: error: attn has no --dropout: it runs attention as a model does at inference", 0) == 0);
    CHECK(r.err.find("run the command without it") != std::string::npos);  // what to do
  }
  const auto context = attn_run({"lesson", "causal", "--context-length", "1024"});
  CHECK(context.status == 2);
  CHECK(context.err.rfind("attn: error: attn has no --context-length: ", 0) == 0);
  CHECK(context.err.find("set the number of tokens with --seq-len") != std::string::npos);
  // A stray word is still CLI11's complaint, reworded.
  CHECK(attn_run({"lesson", "causal", "extra"}).err ==
        "attn: error: unexpected argument 'extra' (see attn --help and attn lesson --help)\n");
}

namespace {

// The shapes a comment claims, as "x(3,6,8)" or "(3,4,6,2)": a tuple of two or more whole numbers
// after a space, with the word just before it when there is one. Lowercase and without spaces, to
// compare with the output written the same way (the articles write X, attn prints x).
std::vector<std::string> claimed_shapes(const std::string& comment) {
  std::vector<std::string> claims;
  static const std::regex tuple(R"(\((\d+(, ?\d+)+,?)\))");
  for (auto it = std::sregex_iterator(comment.begin(), comment.end(), tuple); it != std::sregex_iterator(); ++it) {
    const auto at = static_cast<std::size_t>(it->position());
    if (at > 0 && comment[at - 1] != ' ') continue;  // transpose(1, 2) is code, not a shape
    std::string claim = it->str();
    std::size_t word = at > 0 ? at - 1 : 0;  // the word before " (...)", if any
    while (word > 0 && (std::isalnum(static_cast<unsigned char>(comment[word - 1])) || comment[word - 1] == '_')) --word;
    if (at > 1 && word < at - 1 && (word == 0 || comment[word - 1] == ' ')) claim = comment.substr(word, at - 1 - word) + claim;
    std::string squeezed;
    for (char c : claim)
      if (c != ' ') squeezed += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    claims.push_back(squeezed);
  }
  return claims;
}

}  // namespace

TEST_CASE("every command in README.md and docs/ whose comment names a shape shows that shape") {
  std::vector<std::string> pages = {std::string(ATTN_SOURCE_DIR) + "/README.md"};
  for (const auto& e : std::filesystem::directory_iterator(std::string(ATTN_SOURCE_DIR) + "/docs"))
    if (e.path().extension() == ".md") pages.push_back(e.path().string());
  std::size_t checked = 0;
  for (const auto& page : pages) {
    std::vector<std::string> lines;
    std::istringstream in(read_file(page));
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const std::string text = lines[i].substr(std::min(lines[i].find_first_not_of(' '), lines[i].size()));
      std::string rest;
      if (text.rfind("attn lesson ", 0) == 0) rest = text.substr(5);
      else if (text.rfind("./build/attn lesson ", 0) == 0) rest = text.substr(13);
      else continue;
      const auto hash = rest.find(" # ");
      std::string command = rest.substr(0, hash), comment = hash == std::string::npos ? "" : rest.substr(hash + 3);
      // A comment may go on in the lines below, indented to the same column.
      for (std::size_t j = i + 1; j < lines.size() && lines[j].find_first_not_of(' ') != std::string::npos &&
                                  lines[j][lines[j].find_first_not_of(' ')] == '#' && lines[j][0] == ' ';
           ++j)
        comment += " " + lines[j].substr(lines[j].find('#') + 1);
      const auto claims = claimed_shapes(comment);
      if (claims.empty()) continue;
      REQUIRE_MESSAGE(command.find_first_of("|>") == std::string::npos, page, ": ", command);
      if (command.find("--shapes-only") == std::string::npos) command += " --shapes-only";
      CAPTURE(page);
      CAPTURE(command);
      const auto r = run_shell("'" + kAttn + "' " + command);
      REQUIRE(r.status == 0);
      std::string shown;
      for (char c : r.out)
        if (c != ' ') shown += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      for (const auto& claim : claims) CHECK_MESSAGE(shown.find(claim) != std::string::npos, "claimed: ", claim);
      ++checked;
    }
  }
  CHECK(checked >= 8);  // README's Phillips line, heads.md's article lines, bahdanau, luong, self-attention
}

TEST_CASE("CLICOLOR_FORCE colours the heatmaps in a pipe, and NO_COLOR and --color never still win") {
  const std::string attn = "'" + kAttn + "' lesson causal";
  const std::string clean = "env -u NO_COLOR -u CLICOLOR_FORCE -u COLORTERM TERM=xterm ";
  const auto plain = run_shell(clean + attn);
  CHECK(plain.status == 0);
  CHECK(plain.out.find("\x1b[") == std::string::npos);  // a pipe: no colour by default
  const auto forced = run_shell(clean + "CLICOLOR_FORCE=1 " + attn);
  CHECK(forced.status == 0);
  CHECK(forced.out.find("\x1b[48;5;") != std::string::npos);  // 256-colour cells, into a pipe
  CHECK(run_shell(clean + "CLICOLOR_FORCE=0 " + attn).out.find("\x1b[") == std::string::npos);
  CHECK(run_shell(clean + "CLICOLOR_FORCE=1 NO_COLOR=1 " + attn).out.find("\x1b[") == std::string::npos);
  CHECK(run_shell(clean + "CLICOLOR_FORCE=1 " + attn + " --color never").out.find("\x1b[") == std::string::npos);
}

namespace {

// The options a help text lists: every line that starts, after spaces, with "--name".
std::vector<std::string> listed_flags(const std::string& help) {
  std::vector<std::string> flags;
  std::istringstream in(help);
  static const std::regex option(R"(^ +(--[a-z][a-z0-9-]*))");
  std::smatch m;
  for (std::string line; std::getline(in, line);)
    if (std::regex_search(line, m, option)) flags.push_back(m[1]);
  return flags;
}

// The section of a help text under `heading` (a line "heading:"), up to the next blank line.
std::string section(const std::string& help, const std::string& heading) {
  const auto at = help.find("\n" + heading + ":\n");
  if (at == std::string::npos) return "";
  const auto start = at + heading.size() + 3;
  return help.substr(start, help.find("\n\n", start) - start);
}

bool has(const std::vector<std::string>& words, const std::string& w) {
  return std::find(words.begin(), words.end(), w) != words.end();
}

}  // namespace

TEST_CASE("attn lesson NAME --help: the lesson's own options apart from the shared ones, and only what it takes") {
  const auto general = attn_run({"lesson", "--help"});
  REQUIRE(general.status == 0);
  const auto every = listed_flags(general.out);
  for (const auto& name : lesson_names()) {
    CAPTURE(name);
    const auto r = attn_run({"lesson", name, "--help"});
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out.rfind("attn lesson " + name + ": ", 0) == 0);
    CHECK(r.out.find("Page: docs/" + name + ".md") != std::string::npos);
    // Nothing invented: every option shown is one `attn lesson` has.
    for (const auto& f : listed_flags(r.out)) CHECK_MESSAGE(has(every, f), f);
  }
  // Each group holds what this lesson reads, and nothing another lesson reads instead.
  const auto causal = attn_run({"lesson", "causal", "--help"}).out;
  CHECK(causal.find("Options of this lesson: none") != std::string::npos);
  CHECK(has(listed_flags(section(causal, "Sizes and model")), "--d-in"));
  CHECK(has(listed_flags(section(causal, "Inputs")), "--tokens"));
  CHECK(has(listed_flags(section(causal, "Outputs")), "--dump"));
  CHECK(has(listed_flags(section(causal, "Display")), "--precision"));
  for (const char* other : {"--heads", "--causal", "--no-causal", "--kv-heads", "--theta", "--samples", "--src", "--num-heads"})
    CHECK_MESSAGE(!has(listed_flags(causal), other), other);
  CHECK(section(causal, "The articles' names here (docs/names.md)").find("--d-model INT") != std::string::npos);

  const auto heads = attn_run({"lesson", "heads", "--help"}).out;
  for (const char* own : {"--heads", "--causal", "--no-causal", "--kv-heads", "--qkv-bias"})
    CHECK_MESSAGE(has(listed_flags(section(heads, "Sizes and model")), own), own);
  CHECK(section(heads, "The articles' names here (docs/names.md)").find("--d-model INT") != std::string::npos);
  CHECK(section(heads, "The articles' names here (docs/names.md)").find("the same as --d-in and --d-out") != std::string::npos);
  CHECK(heads.find("Presets: raschka, phillips, rakesh, llama") != std::string::npos);

  // Own options with their range and default, grouped apart; the other spellings of rope's --d-k
  // among the articles' names.
  const auto rope = attn_run({"lesson", "rope", "--help"}).out;
  const auto rope_own = section(rope, "Options of this lesson");
  CHECK(listed_flags(rope_own) == std::vector<std::string>{"--theta", "--d-k", "--shift"});
  CHECK(std::regex_search(rope_own, std::regex(R"(2\.\.1e9,\s+default 10000)")));
  CHECK(section(rope, "The articles' names here (docs/names.md)").find("--head-dim INT") != std::string::npos);
  CHECK(!has(listed_flags(section(rope, "Sizes and model")), "--d-in"));
  CHECK(listed_flags(section(attn_run({"lesson", "scaling", "--help"}).out, "Options of this lesson")) ==
        std::vector<std::string>{"--samples"});

  // `attn lesson --help` keeps every option, in the same groups.
  for (const char* group : {"Sizes and model", "Inputs", "Outputs", "Display"})
    CHECK_MESSAGE(general.out.find(std::string("\n") + group + ":\n") != std::string::npos, group);
  CHECK(general.out.find("Mask the future (heads, flash)") != std::string::npos);  // who reads it, from the registry

  // An unknown lesson: one line, status 2, as without --help.
  const auto bad = attn_run({"lesson", "casual", "--help"});
  CHECK(bad.status == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err == "attn: error: unknown lesson 'casual' (did you mean 'causal'?)\n");
}

namespace {

// What the completion script offers for a command line typed up to the cursor (`words`, the last
// one being the word under the cursor), sorted; run in `dir`.
std::vector<std::string> complete(const std::string& script, const std::vector<std::string>& words,
                                  const std::string& dir = ".") {
  std::string line = "cd '" + dir + "' && source '" + script + "' && COMP_WORDS=(";
  for (const auto& w : words) line += " '" + w + "'";
  line += " ) && COMP_CWORD=" + std::to_string(words.size() - 1) + " && { _attn; printf '%s\\n' \"${COMPREPLY[@]}\"; }";
  const auto r = run({"/bin/bash", "-c", line});
  REQUIRE_MESSAGE(r.status == 0, r.err);
  std::vector<std::string> offered;
  std::istringstream in(r.out);
  for (std::string w; std::getline(in, w);)
    if (!w.empty()) offered.push_back(w);
  std::sort(offered.begin(), offered.end());
  return offered;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST_CASE("attn completion bash: a script bash runs, offering every command, lesson, option, preset and exercise") {
  const auto printed = attn_run({"completion", "bash"});
  REQUIRE(printed.status == 0);
  CHECK(printed.err.empty());
  const std::string dir = std::string(ATTN_TEST_TMP) + "/completion";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/outdir");
  std::ofstream(dir + "/notes.txt") << "x";
  const std::string script = dir + "/attn.bash";
  std::ofstream(script) << printed.out;
  CHECK(run({"/bin/bash", "-n", script}).status == 0);
  CHECK(run({"/bin/bash", "-c", "source '" + script + "' && complete -p attn"}).out.find("-F _attn") != std::string::npos);

  // The commands, as `attn --help` lists them.
  const auto top = complete(script, {"attn", ""});
  for (const char* c : {"list", "lesson", "exercises", "check", "hint", "verify", "completion", "model"}) {
    CHECK_MESSAGE(has(top, c), c);
    CHECK_MESSAGE(attn_run({"--help"}).out.find(std::string("  ") + c + " ") != std::string::npos, c);
  }
  // Every lesson, and for each exactly the options its --help lists.
  CHECK(complete(script, {"attn", "lesson", ""}) == sorted(lesson_names()));
  CHECK(complete(script, {"attn", "lesson", "ca"}) == std::vector<std::string>{"causal"});
  std::vector<std::string> offered_somewhere;
  for (const auto& name : lesson_names()) {
    CAPTURE(name);
    auto expected = listed_flags(attn_run({"lesson", name, "--help"}).out);
    expected.push_back("--help");
    const auto offered = complete(script, {"attn", "lesson", name, "--"});
    CHECK(offered == sorted(expected));
    offered_somewhere.insert(offered_somewhere.end(), offered.begin(), offered.end());
  }
  // Every option of `attn lesson --help` is offered for some lesson, and all of them before a name.
  const auto every = listed_flags(attn_run({"lesson", "--help"}).out);
  const auto before_name = complete(script, {"attn", "lesson", "--"});
  for (const auto& f : every) {
    CHECK_MESSAGE(has(offered_somewhere, f), f);
    CHECK_MESSAGE(has(before_name, f), f);
  }
  // The lesson is found past an option's value, and an option's value completes by its kind.
  CHECK(complete(script, {"attn", "lesson", "--seed", "3", "heads", "--n-"}) == std::vector<std::string>{"--n-heads"});
  CHECK(complete(script, {"attn", "lesson", "causal", "--n-"}).empty());
  CHECK(complete(script, {"attn", "lesson", "heads", "--preset", ""}) ==
        sorted({"raschka", "phillips", "rakesh", "llama"}));
  CHECK(complete(script, {"attn", "lesson", "causal", "--preset", ""}) == sorted({"raschka", "evolution"}));
  CHECK(complete(script, {"attn", "lesson", "causal", "--format", ""}) == sorted({"text", "json"}));
  CHECK(complete(script, {"attn", "lesson", "causal", "--color", "a"}) == sorted({"auto", "always"}));
  CHECK(complete(script, {"attn", "lesson", "causal", "--seed", ""}).empty());
  CHECK(complete(script, {"attn", "lesson", "causal", "--dump", ""}, dir) == std::vector<std::string>{"outdir"});
  CHECK(has(complete(script, {"attn", "lesson", "causal", "--input", ""}, dir), "notes.txt"));
  CHECK(has(complete(script, {"attn", "lesson", "causal", "--npz", ""}, dir), "notes.txt"));  // a file to write: any path
  CHECK(complete(script, {"attn", "verify", "--lesson", "lea"}) == std::vector<std::string>{"learn-heads"});
  CHECK(complete(script, {"attn", "verify", "--"}) == sorted({"--help", "--seeds", "--lesson", "--list"}));
  CHECK(complete(script, {"attn", "list", "--"}) == sorted({"--help", "--presets", "--names"}));
  // The exercises, as lessons/exercises/exercises.txt (the one table) names them.
  std::vector<std::string> exercises;
  std::istringstream table(read_file(std::string(ATTN_SOURCE_DIR) + "/lessons/exercises/exercises.txt"));
  for (std::string line; std::getline(table, line);)
    if (!line.empty() && line[0] != '#' && line[0] != ' ' && line[0] != '\t') exercises.push_back(line.substr(0, line.find(' ')));
  REQUIRE(exercises.size() >= 10);
  CHECK(complete(script, {"attn", "check", ""}) == sorted(exercises));
  CHECK(complete(script, {"attn", "hint", ""}) == sorted(exercises));
  CHECK(complete(script, {"attn", "check", "causal-mask", "--t"}) == std::vector<std::string>{"--time-limit"});
  CHECK(complete(script, {"attn", "reset", ""}) == sorted(exercises));
  CHECK(complete(script, {"attn", "watch", "causal-"}) == std::vector<std::string>{"causal-mask"});
  CHECK(complete(script, {"attn", "completion", ""}) == sorted({"bash", "zsh"}));
  CHECK(complete(script, {"attn", "model", ""}, dir) == std::vector<std::string>{"outdir"});  // a checkpoint folder
  {  // the summary's flags, a run's options and the lessons' output options; none of a lesson's inputs
    const auto offered = complete(script, {"attn", "model", "outdir", "--"});
    for (const char* f : {"--help", "--summary", "--allow-nonfinite", "--headers-only", "--text", "--text-file", "--ids", "--layer",
                          "--top-k", "--no-bos", "--dump", "--npz", "--svg", "--head", "--heatmap-scale", "--stage", "--step",
                          "--format", "--precision", "--shapes-only", "--probe", "--probe-length", "--seed", "--query", "--key",
                          "--logit-lens"})
      CHECK_MESSAGE(std::count(offered.begin(), offered.end(), f) == 1, f);
    for (const char* f : {"--preset", "--values", "--tokens", "--d-in"}) CHECK_MESSAGE(std::count(offered.begin(), offered.end(), f) == 0, f);
  }

  const auto fish = attn_run({"completion", "fish"});
  CHECK(fish.status == 2);
  CHECK(fish.out.empty());
  CHECK(fish.err == "attn: error: attn completion has no script for 'fish' (completion: bash or zsh vs 'fish')\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE("attn completion zsh: zsh loads it through bashcompinit and offers what bash offers") {
  // zsh comes with scripts/setup.sh (the README's commands run it).
  REQUIRE_MESSAGE(std::filesystem::exists("/usr/bin/zsh"), "zsh is missing: scripts/setup.sh installs it");
  const auto printed = attn_run({"completion", "zsh"});
  REQUIRE(printed.status == 0);
  CHECK(printed.err.empty());
  const std::string dir = std::string(ATTN_TEST_TMP) + "/completion-zsh";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string script = dir + "/attn.zsh", bash_script = dir + "/attn.bash";
  std::ofstream(script) << printed.out;
  std::ofstream(bash_script) << attn_run({"completion", "bash"}).out;
  CHECK(run({"/usr/bin/zsh", "-n", script}).status == 0);
  // Sourced in a plain zsh (no ~/.zshrc: -f), it registers _attn for attn and ./build/attn.
  const auto registered = run({"/usr/bin/zsh", "-f", "-c", "source '" + script + "' && print -r -- $_comps[attn] $_comps[./build/attn]"});
  CHECK(registered.status == 0);
  CHECK(registered.out == "_bash_complete -F _attn _bash_complete -F _attn\n");
  // The function, called as bashcompinit calls it (0-based arrays), offers what it offers in bash.
  // zsh's compgen leaves out bash's filtering by the typed word (compadd does it as matches are
  // added), so the words are filtered here as compadd would.
  auto zsh_complete = [&](const std::vector<std::string>& words) {
    std::string line = "source '" + script + "' && setopt ksharrays && COMP_WORDS=(";
    for (const auto& w : words) line += " '" + w + "'";
    line += " ) && COMP_CWORD=" + std::to_string(words.size() - 1) + " && _attn && print -l -- \"${COMPREPLY[@]}\"";
    const auto r = run({"/usr/bin/zsh", "-f", "-c", line});
    REQUIRE_MESSAGE(r.status == 0, r.err);
    std::vector<std::string> offered;
    std::istringstream in(r.out);
    for (std::string w; std::getline(in, w);)
      if (!w.empty() && w.rfind(words.back(), 0) == 0) offered.push_back(w);
    return sorted(offered);
  };
  for (const std::vector<std::string>& line :
       {std::vector<std::string>{"attn", ""}, {"attn", "lesson", ""}, {"attn", "lesson", "ca"},
        {"attn", "lesson", "heads", "--"}, {"attn", "lesson", "heads", "--preset", ""}, {"attn", "check", ""},
        {"attn", "lesson", "--seed", "3", "heads", "--n-"}, {"attn", "completion", ""}}) {
    std::string typed;
    for (const auto& w : line) typed += w + " ";
    CAPTURE(typed);
    const auto offered = zsh_complete(line);
    CHECK_FALSE(offered.empty());
    CHECK(offered == complete(bash_script, line));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("cmake --install puts attn and both completion scripts under the prefix, and the exercises are still found") {
  const std::string prefix = std::string(ATTN_TEST_TMP) + "/install";
  std::filesystem::remove_all(prefix);
  const auto installed = run({ATTN_CMAKE_COMMAND, "--install", ATTN_BUILD_DIR, "--prefix", prefix});
  REQUIRE_MESSAGE(installed.status == 0, installed.err);
  const std::string attn = prefix + "/bin/attn";
  REQUIRE(std::filesystem::exists(attn));
  const auto list = run({attn, "list", "--names"});
  CHECK(list.status == 0);
  CHECK(list.out == attn_run({"list", "--names"}).out);
  const auto exercises = run({attn, "exercises"});
  CHECK(exercises.status == 0);
  CHECK(exercises.out.find(std::string(ATTN_SOURCE_DIR) + "/lessons/exercises/") != std::string::npos);
  CHECK(read_file(prefix + "/share/bash-completion/completions/attn") == attn_run({"completion", "bash"}).out);
  CHECK(read_file(prefix + "/share/attn/attn.zsh") == attn_run({"completion", "zsh"}).out);
  std::filesystem::remove_all(prefix);
}

TEST_CASE("every command of the README's 'Using it' block runs, with exit status 0") {
  // From a fresh directory, as a learner pastes them: ./build/attn is this attn. Two lines are run
  // by other tests instead: --step needs a terminal (test_pictures drives it on a pseudo-terminal),
  // and `attn verify` is the CTest test verify/all-lessons-50-seeds.
  const std::string readme = read_file(std::string(ATTN_SOURCE_DIR) + "/README.md");
  const auto start = readme.find("## Using it\n\n```sh\n");
  REQUIRE(start != std::string::npos);
  const auto body = readme.find('\n', readme.find("```sh", start)) + 1;
  std::istringstream block(readme.substr(body, readme.find("```", body) - body));
  const std::string dir = std::string(ATTN_TEST_TMP) + "/readme";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  {
    // x.npy for `--input x.npy`: a float32 (6, 3) matrix.
    std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (6, 3), }";
    h.append((64 - (10 + h.size() + 1) % 64) % 64, ' ');
    h += '\n';
    std::ofstream npy(dir + "/x.npy", std::ios::binary);
    npy << std::string("\x93NUMPY\x01\x00", 8) << static_cast<char>(h.size()) << '\0' << h;
    for (int i = 0; i < 18; ++i) {
      const float v = 0.05f * static_cast<float>(i);
      npy.write(reinterpret_cast<const char*>(&v), sizeof v);
    }
  }
  std::size_t ran = 0;
  std::vector<std::string> elsewhere;
  for (std::string line; std::getline(block, line);) {
    REQUIRE(line.find("./build/attn ") != std::string::npos);
    std::string command = line.substr(0, line.find(" # "));
    while (!command.empty() && command.back() == ' ') command.pop_back();
    if (command.find("--step") != std::string::npos || command == "./build/attn verify") {
      elsewhere.push_back(command);
      continue;
    }
    CAPTURE(command);
    const std::string typed = "./build/attn";
    for (auto at = command.find(typed); at != std::string::npos; at = command.find(typed, at + kAttn.size() + 2))
      command.replace(at, typed.size(), "'" + kAttn + "'");
    // A pipe into a tool that is not installed (jq) runs attn alone.
    const auto bar = command.find(" | ");
    if (bar != std::string::npos) {
      const std::string tool = command.substr(bar + 3, command.find(' ', bar + 3) - bar - 3);
      if (run_shell("command -v " + tool).status != 0) command.resize(bar);
    }
    const auto r = run({"/bin/bash", "-c", "set -o pipefail; cd '" + dir + "' && " + command + " > /dev/null"}, 300);
    CAPTURE(r.err);
    CHECK(r.status == 0);
    ++ran;
  }
  CHECK(elsewhere == std::vector<std::string>{"./build/attn lesson causal --step", "./build/attn verify"});
  CHECK(ran >= 25);
  CHECK(std::filesystem::exists(dir + "/out/causal/manifest.json"));  // --dump made out/ itself
  std::filesystem::remove_all(dir);
}

TEST_CASE("lesson screens keep implementation words off: no source paths, no internal names") {
  // The golden outputs are every lesson's screen (the golden tests hold each run to its file), so
  // reading them reads what a learner sees. Where the code lives belongs in docs/architecture.md.
  const std::regex internal(R"((src|tests)/|\.(cpp|hpp)\b|\bcore\b|flash_scratch_bytes|)"
                            R"(attention_context|fast_attention|KvCache|\bfixture\b|\bcapacity\b|realloc)");
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(ATTN_SOURCE_DIR) + "/tests/golden")) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".txt" || name == "cases.txt" || name == "CMakeLists.txt") continue;
    ++files;
    std::ifstream in(entry.path());
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);) {
      ++n;
      CAPTURE(entry.path().filename().string() + ":" + std::to_string(n));
      CHECK_MESSAGE(!std::regex_search(line, internal), line);
    }
  }
  CHECK(files >= 14);  // one per lesson at least
}

TEST_CASE("padding --shapes-only at its largest sizes computes nothing: a peak of megabytes, not gigabytes") {
  // Before: every stage computed, 37 tensors of 2^25 values, 12 s and a 4.8 GB peak. Now the run
  // holds no tensor (13 MB here); the bound leaves room for a sanitizer build's own memory.
  const auto r = attn_run({"lesson", "padding", "--seq-len", "4096", "--queries", "4096", "--batch", "2",
                           "--shapes-only", "--color", "never"});
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK(r.max_rss_kb < 256 * 1024);
  CHECK(r.out.find("--shapes-only at these sizes computes nothing: with values the lesson would hold") !=
        std::string::npos);
  CHECK(r.out.find("1.51 GiB at once") != std::string::npos);
  CHECK(r.out.find("out: attn_weights_inf (2, 4096, 4096), context_inf (2, 4096, 4)") != std::string::npos);
  CHECK(r.out.find("check passed") == std::string::npos);  // the checks need the values
  CHECK(r.out.find("question:") == std::string::npos);
}

TEST_CASE("text output along the batch axis is bounded: grids, tables and lists say what they left out") {
  // Before: causal --batch 65536 --seq-len 2 printed 12.3 MB (a heatmap grid per sequence) and
  // padding's lengths, tables and notes 4.5 MB. Each long list now shows a bounded part and counts
  // the rest, so the output stays a few tens of kilobytes.
  const auto causal = attn_run({"lesson", "causal", "--batch", "65536", "--seq-len", "2", "--color", "never"});
  CHECK(causal.status == 0);
  CHECK(causal.out.size() < 100000);
  // Its 65536 sequences are one sentence repeated: one grid, and a line says so (test_heatmap
  // checks the first 64 grids of a batch whose entries differ).
  CHECK(causal.out.find("batch entries 1-65535 repeat entry 0: drawn once\n") != std::string::npos);
  const auto padding = attn_run({"lesson", "padding", "--batch", "65536", "--seq-len", "1", "--color", "never"});
  CHECK(padding.status == 0);
  CHECK(padding.out.size() < 100000);
  CHECK(padding.out.find("valid_lens [1, 1, 1, 1, 1, 1, 1, 1, ..., 1, 1, 1, 1, 1, 1, 1, 1] (65536 values)") !=
        std::string::npos);
  CHECK(padding.out.find("  ... 65496 more rows like these (65536 in all; the first 32 and the last 8 are shown)") !=
        std::string::npos);
  CHECK(padding.out.find("13, 14, 15 and 65520 more have one") != std::string::npos);
  // The reproduce line stays runnable and short: one run of 65536 equal lengths.
  CHECK(padding.out.find("valid_lens = torch.tensor([1] * 65536)") != std::string::npos);
}

TEST_CASE("an attn copied out of its build tree refuses the exercise commands, naming both trees") {
  // A learner who copies or moves the repository runs a binary that would still build and check
  // the first clone's files: it says so instead.
  namespace fs = std::filesystem;
  const fs::path clone = fs::path(ATTN_TEST_TMP) / "moved-clone";
  fs::remove_all(clone);
  fs::create_directories(clone / "build");
  fs::copy_file(kAttn, clone / "build" / "attn");
  std::ofstream(clone / "build" / "CMakeCache.txt") << "# another build tree\n";
  const std::string moved = (clone / "build" / "attn").string();
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"exercises"}, {"check", "causal-mask"}, {"hint", "causal-mask"}, {"reset", "causal-mask"}, {"watch"}}) {
    CAPTURE(args[0]);
    std::vector<std::string> argv{moved};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = attn::testing::run(argv, 20);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(count_lines(r.err) == 1);
    CHECK(r.err.find("attn: error: this attn was built in ") == 0);
    CHECK(r.err.find("but runs from " + fs::weakly_canonical(clone / "build").string()) != std::string::npos);
    CHECK(r.err.find("Run the attn in ") != std::string::npos);
  }
  // Inside a copy of the repository, it gives the commands that build that copy's own.
  fs::create_directories(clone / "lessons" / "exercises");
  std::ofstream(clone / "lessons" / "exercises" / "exercises.txt") << "# a copied table\n";
  const auto r = attn::testing::run({moved, "exercises"}, 20);
  CHECK(r.status == 2);
  CHECK(r.err.find("Build this clone's own: cmake -S " + fs::weakly_canonical(clone).string()) != std::string::npos);
  // Lessons do not depend on the tree: the copy runs them.
  CHECK(attn::testing::run({moved, "lesson", "causal", "--shapes-only"}, 20).status == 0);
  // The binary in its own tree is not refused, nor a copy outside any tree (as cmake --install
  // makes one): those follow the clone they were built for.
  CHECK(attn_run({"exercises"}).status == 0);
  const fs::path prefix = fs::path(ATTN_TEST_TMP) / "moved-prefix";
  fs::remove_all(prefix);
  fs::create_directories(prefix / "bin");
  fs::copy_file(kAttn, prefix / "bin" / "attn");
  CHECK(attn::testing::run({(prefix / "bin" / "attn").string(), "exercises"}, 20).status == 0);
  fs::remove_all(prefix);
  fs::remove_all(clone);
}

TEST_CASE("attn lesson heads fits one sitting: at most 300 lines and 100 columns, each preset too") {
  // Issue 23: what is cut is one option away (--full), which prints more.
  const std::vector<std::vector<std::string>> runs = {
      {"lesson", "heads"},
      {"lesson", "heads", "--preset", "phillips"},
      {"lesson", "heads", "--preset", "rakesh"},
      {"lesson", "heads", "--preset", "llama"}};
  for (const auto& args : runs) {
    const std::string command = args.size() > 2 ? args[3] : std::string("default");
    CAPTURE(command);
    const auto r = attn_run(args);
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(count_lines(r.out) <= 300);
    std::istringstream in(r.out);
    std::size_t widest = 0;
    for (std::string line; std::getline(in, line);) widest = std::max(widest, line.size());
    CHECK(widest <= 100);  // bytes: an upper bound on columns
    std::vector<std::string> full = args;
    full.push_back("--full");
    const auto f = attn_run(full);
    CHECK(f.status == 0);
    CHECK(count_lines(f.out) >= count_lines(r.out));
  }
  // The default run draws the repeated batch once and says so; --full prints the weights.
  const auto r = attn_run({"lesson", "heads"});
  CHECK(r.out.find("batch entry 1 repeats entry 0: drawn once\n") != std::string::npos);
  CHECK(r.out.find("[1, 0]") == std::string::npos);
  CHECK(r.out.find("W_query.weight (2, 3)\ntensor(") == std::string::npos);
  CHECK(attn_run({"lesson", "heads", "--full"}).out.find("W_query.weight (2, 3)\ntensor(") != std::string::npos);
}
