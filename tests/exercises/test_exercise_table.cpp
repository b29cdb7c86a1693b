// The exercise table (lessons/exercises/exercises.txt) keeps its promises: every row has its
// stub, solution, tests and hint; every lesson it names exists; every lesson has
// exercises; and CMake, which reads the same table, made a program for every row.
#include <doctest/doctest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "cli/exercises.hpp"
#include "lesson_kit/registry.hpp"

namespace fs = std::filesystem;
using attn::cli::Exercise;
using attn::cli::ExercisePaths;

namespace {

ExercisePaths paths() {
  ExercisePaths p = ExercisePaths::configured();
  p.bin_dir = ATTN_EXERCISE_BIN_DIR;
  return p;
}

const std::vector<Exercise>& table() {
  static const std::vector<Exercise> all = attn::cli::load_exercises(paths());
  return all;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::size_t lesson_index(const std::string& name) {
  const auto& all = attn::lessons();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (name == all[i].name) return i;
  return all.size();
}

}  // namespace

TEST_CASE("every row has its stub (with // TODO), its solution (without), its tests and a hint") {
  REQUIRE(!table().empty());
  for (const Exercise& e : table()) {
    CAPTURE(e.name);
    REQUIRE(fs::exists(paths().shipped(e)));  // the learner's copy is written from it (attn, CMake)
    REQUIRE(fs::exists(paths().solution(e)));
    REQUIRE(fs::exists(paths().test(e)));
    const std::string learner = read(paths().shipped(e)), solution = read(paths().solution(e));
    CHECK(learner.find("// TODO") != std::string::npos);  // the learner is shown exactly what to write
    CHECK(learner.find("attn check " + e.name) != std::string::npos);  // and how to check it
    CHECK(learner.find("Worked example") != std::string::npos);
    CHECK(solution.find("TODO") == std::string::npos);
    CHECK(e.hint.size() >= 40);  // a sentence or more, not a placeholder
    CHECK(!e.writes.empty());
  }
}

TEST_CASE("every exercise has a shipped copy for attn reset, opening with its PyTorch -> xtensor cheat sheet") {
  for (const Exercise& e : table()) {
    CAPTURE(e.name);
    REQUIRE(fs::exists(paths().shipped(e)));
    const std::string shipped = read(paths().shipped(e));
    CHECK(shipped.find("// TODO") != std::string::npos);
    // The cheat sheet comes right after the first line, before the story of the exercise.
    const auto sheet = shipped.find("// PyTorch -> xtensor 0.24, for this exercise:\n//   ");
    CHECK(sheet != std::string::npos);
    CHECK(sheet < shipped.find("Contract"));
  }
}

TEST_CASE("one stub per exercise in the tree: the learner's working copies beside them are ignored by git") {
  // lessons/exercises/<file> is the learner's, written from shipped/<file> (docs/exercises.md,
  // "Your files"): git must neither track it nor show it, so a second copy of a stub cannot come
  // back into the tree and drift from the first.
  const std::string ignore = read(paths().source_dir + "/lessons/exercises/.gitignore");
  CHECK(ignore.find("\n/*.cpp\n") != std::string::npos);
  CHECK(ignore.find("\n/.base/\n") != std::string::npos);
  for (const Exercise& e : table()) {
    CAPTURE(e.name);
    CHECK(fs::path(paths().learner(e)).parent_path() == fs::path(paths().shipped(e)).parent_path().parent_path());
    CHECK(paths().learner(e) != paths().shipped(e));
  }
}

TEST_CASE("every lesson named in the table exists, and the rows follow the lessons' teaching order") {
  std::size_t previous = 0;
  for (const Exercise& e : table()) {
    CAPTURE(e.name);
    CAPTURE(e.lesson);
    REQUIRE(attn::find_lesson(e.lesson) != nullptr);
    CHECK(lesson_index(e.lesson) >= previous);
    previous = lesson_index(e.lesson);
  }
}

TEST_CASE("the exercises cover at least seven lessons, none of them with an empty row set") {
  // Exercises are optional for a new lesson (a lesson is one file: docs/architecture.md), so this
  // reads the registry rather than naming lessons: a row set shrinking by accident still shows here.
  std::map<std::string, std::size_t> count;
  for (const Exercise& e : table()) ++count[e.lesson];
  std::size_t covered = 0;
  for (const auto& lesson : attn::lessons()) covered += count[lesson.name] > 0;
  CHECK(covered >= 7);
  CHECK(table().size() >= 11);
}

TEST_CASE("CMake read the same table: a solution program exists for every row") {
  for (const Exercise& e : table()) {
    CAPTURE(e.name);
    CHECK(fs::exists(paths().bin_dir + "/solution_" + e.stem()));
  }
}

TEST_CASE("the parser refuses a malformed row and names its line") {
  std::istringstream three_fields("# a comment\n\nname | causal | name.cpp\n    hint\n");
  CHECK_THROWS_WITH_AS(attn::cli::parse_exercises(three_fields, "t.txt"),
                       doctest::Contains("t.txt:3: expected 4 fields"), std::runtime_error);
  std::istringstream bad_name("Bad_Name | causal | x.cpp | writes\n    hint\n");
  CHECK_THROWS_WITH_AS(attn::cli::parse_exercises(bad_name, "t.txt"), doctest::Contains("t.txt:1: name"),
                       std::runtime_error);
  std::istringstream twice("a | causal | a.cpp | w\n  h\na | causal | b.cpp | w\n  h\n");
  CHECK_THROWS_WITH_AS(attn::cli::parse_exercises(twice, "t.txt"), doctest::Contains("appears twice"),
                       std::runtime_error);
  std::istringstream no_hint("a | causal | a.cpp | w\n\nb | causal | b.cpp | w\n  h\n");
  CHECK_THROWS_WITH_AS(attn::cli::parse_exercises(no_hint, "t.txt"), doctest::Contains("t.txt:1: exercise 'a' has no hint"),
                       std::runtime_error);
  std::istringstream last_no_hint("a | causal | a.cpp | w\n  h\nb | causal | b.cpp | w\n");
  CHECK_THROWS_WITH_AS(attn::cli::parse_exercises(last_no_hint, "t.txt"), doctest::Contains("t.txt:3: exercise 'b'"),
                       std::runtime_error);
  std::istringstream orphan("  a hint of nothing\n");
  CHECK_THROWS_WITH_AS(attn::cli::parse_exercises(orphan, "t.txt"), doctest::Contains("t.txt:1: an indented hint line"),
                       std::runtime_error);
  std::istringstream good("a-1 | causal | a_1.cpp | w\n    h; with a semicolon\n");
  const auto rows = attn::cli::parse_exercises(good, "t.txt");
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].number == 1);
  CHECK(rows[0].target() == "exercise_a_1");
  CHECK(rows[0].hint == "h; with a semicolon");
}

TEST_CASE("a hint runs over several lines and may hold '|', the semicolon and '#', and 'what you write' a '|'") {
  std::istringstream in("# comment\n"
                        "a | causal | a.cpp | |x| for every x\n"
                        "    Take |x|; then\n"
                        "\t#include <cmath> gives std::abs,\n"
                        "\n"
                        "      and the rest.   \n"
                        "b | causal | b.cpp | w\n"
                        "    one line\n");
  const auto rows = attn::cli::parse_exercises(in, "t.txt");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].writes == "|x| for every x");
  CHECK(rows[0].hint == "Take |x|; then #include <cmath> gives std::abs, and the rest.");
  CHECK(rows[1].hint == "one line");
}

TEST_CASE("the table's hints, joined from their lines, are long enough to need them") {
  // The longest hints ran to 442 characters on one line before they could take several.
  std::size_t longest = 0;
  for (const Exercise& e : table()) longest = std::max(longest, e.hint.size());
  CHECK(longest > 300);
  for (const Exercise& e : table()) {
    CAPTURE(e.name);
    CHECK(e.hint.find("  ") == std::string::npos);  // joined with single spaces
  }
}

TEST_CASE("a typo finds the nearest exercise, a name far from all finds none") {
  CHECK(attn::cli::closest_exercise(table(), "sotfmax-rows") == "softmax-rows");
  CHECK(attn::cli::closest_exercise(table(), "causal-mas") == "causal-mask");
  CHECK(attn::cli::closest_exercise(table(), "transformer") == "");
}

TEST_CASE("a crash is explained by its signal: arithmetic is not an index past the end") {
  CHECK(attn::cli::crash_cause(SIGSEGV).find("index past the end") != std::string::npos);
  CHECK(attn::cli::crash_cause(SIGBUS).find("index past the end") != std::string::npos);
  CHECK(attn::cli::crash_cause(SIGFPE).find("division or remainder by zero") != std::string::npos);
  CHECK(attn::cli::crash_cause(SIGFPE).find("index") == std::string::npos);
  CHECK(attn::cli::crash_cause(SIGABRT).find("exception nothing caught") != std::string::npos);
  CHECK(attn::cli::crash_cause(SIGILL).find("illegal instruction") != std::string::npos);
  CHECK(attn::cli::crash_cause(SIGUSR1).empty());  // nothing claimed where nothing is known
}
