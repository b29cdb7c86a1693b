// The attn binary as a learner meets it: run as a process, checking stdout, stderr and the exit
// status. Bad input must give exactly one line on stderr, nothing on stdout and status 2.
#include <doctest/doctest.h>

#include <fstream>
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
  for (const auto& name : lesson_names()) {
    CAPTURE(name);
    CHECK(!name.empty());
    CHECK(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string::npos);
    CHECK(attn_run({"lesson", name, "--shapes-only"}).status == 0);  // each is a lesson that runs
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
       "attn: error: lesson 'causal' does not take --samples (--samples: one of --seed, --batch, --seq-len, --d-in, "
       "--d-out, --tokens, --input, --weights, --precision, --shapes-only vs --samples)\n"},
  };
  for (const auto& [args, message] : bad) {
    CAPTURE(args.back());
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
  CHECK(llama.out.find("check ") == std::string::npos);
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
  // A sink that reads values (--format json) gets them: the run computes and holds, within the limits.
  const auto json = attn_run({"lesson", "heads", "--seq-len", "5000", "--batch", "64", "--shapes-only", "--format", "json"});
  CHECK(json.status == 2);
  CHECK(json.err.find("too large to hold") != std::string::npos);
}

TEST_CASE("every lesson runs with its defaults and shows numbered stages") {
  for (const auto& name : lesson_names()) {
    CAPTURE(name);
    const auto r = attn_run({"lesson", name});
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out.find("[1/") != std::string::npos);
    CHECK(r.out.find("tensor(") != std::string::npos);
    CHECK(r.out.find("reproduce in PyTorch") != std::string::npos);
  }
}

TEST_CASE("the same command twice prints the same bytes") {
  // Golden outputs tolerate other last digits on other machines (docs/testing.md); on one
  // machine, in one environment, the bytes must not move.
  for (const auto& name : lesson_names()) {
    CAPTURE(name);
    const auto a = attn_run({"lesson", name, "--seed", "7"});
    const auto b = attn_run({"lesson", name, "--seed", "7"});
    CHECK(a.status == 0);
    CHECK(a.out == b.out);
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
    if (line.rfind("bash scripts/setup.sh", 0) == 0) command = line;
  REQUIRE_FALSE(command.empty());
  CHECK(readme.find(command) != std::string::npos);
  CHECK(command.find("ctest -j2 --output-on-failure") != std::string::npos);
  // And the first command runs the causal lesson after the same setup.
  CHECK(readme.find("bash scripts/setup.sh && cmake -S . -B build && cmake --build build -j2 && ./build/attn lesson causal") !=
        std::string::npos);
}

TEST_CASE("CI runs the golden outputs a second time under another OpenBLAS kernel") {
  // After the README's command (which ends in build/), .ci/run has a line
  //   OPENBLAS_CORETYPE=<kernel> OPENBLAS_NUM_THREADS=<n> ctest ... -L golden ...
  const std::string ci = read_file(ATTN_SOURCE_DIR "/.ci/run");
  const auto readme_command = ci.find("\nbash scripts/setup.sh");
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
  std::istringstream lines(r.err);
  std::size_t n = 0;
  for (std::string line; std::getline(lines, line); ++n)
    CHECK_MESSAGE(line.rfind("attn: check failed in stage ", 0) == 0, line);
  CHECK(n == 3);
  CHECK(r.err.find("every row of attn_weights sums to 1 (max |sum - 1| = nan, required <= 1e-06)") != std::string::npos);

  // The same verdicts in JSON, and the same status.
  const auto j = attn_run({"lesson", "causal", "--input", csv, "--format", "json"});
  CHECK(j.status == 3);
  CHECK(j.out.find("\"checks\": {\"passed\": ") != std::string::npos);
  CHECK(j.out.find("\"failed\": 3") != std::string::npos);
  CHECK(j.out.find("\"passed\": false") != std::string::npos);
}

TEST_CASE("every check passes with the defaults, and says so") {
  for (const auto& lesson : lesson_names()) {
    CAPTURE(lesson);
    const auto r = attn_run({"lesson", lesson});
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK(r.out.find("check passed: ") != std::string::npos);
    CHECK(r.out.find("check FAILED") == std::string::npos);
  }
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
}
