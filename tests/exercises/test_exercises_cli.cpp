// attn exercises, attn check, attn hint as a learner meets them: the built attn run as a
// process. Then, in process, what `attn exercises` claims about progress (never a pass it did
// not see) and the one-line errors for a missing build tree.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli/exercises.hpp"
#include "lesson_kit/options.hpp"
#include "process.hpp"

namespace fs = std::filesystem;
using attn::cli::Exercise;
using attn::cli::ExercisePaths;
using attn::cli::Progress;

namespace {

const std::string kAttn = ATTN_BINARY;

attn::testing::Result attn_run(std::vector<std::string> args) {
  args.insert(args.begin(), kAttn);
  return attn::testing::run(args, 300);  // attn check may compile
}

const std::vector<Exercise>& table() {
  static const std::vector<Exercise> all = attn::cli::load_exercises(ExercisePaths::configured());
  return all;
}

std::size_t count_lines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// An exercise whose learner file is as committed, so that it must fail; nullptr when the
// learner has edited every one (then the shipped behaviour cannot be observed here).
const Exercise* untouched_exercise() {
  const ExercisePaths p = ExercisePaths::configured();
  for (const Exercise& e : table()) {
    const auto r = attn::testing::run({"/usr/bin/git", "-C", p.source_dir, "diff", "--quiet", "HEAD", "--",
                                       p.learner(e)});
    if (r.status != 1) return &e;  // 0: unchanged; anything else: no git, take it as shipped
  }
  return nullptr;
}

}  // namespace

TEST_CASE("attn exercises lists every exercise in teaching order with its lesson, file and status") {
  const auto r = attn_run({"exercises"});
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  std::size_t at = 0;
  for (const Exercise& e : table()) {
    CAPTURE(e.name);
    const auto row = r.out.find("  " + e.name + " ", at);
    REQUIRE(row != std::string::npos);  // present, and after the previous one
    const std::string line = r.out.substr(row, r.out.find('\n', row) - row);
    CHECK(line.find(e.lesson) != std::string::npos);
    CHECK(line.find(e.file) != std::string::npos);
    const bool known_status = line.find("not checked yet") != std::string::npos ||
                              line.find("edited: recheck") != std::string::npos ||
                              line.find("passes") != std::string::npos || line.find("fails") != std::string::npos ||
                              line.find("crashes") != std::string::npos || line.find("times out") != std::string::npos;
    CHECK(known_status);
    at = row;
  }
  CHECK(r.out.find(" of " + std::to_string(table().size()) + " pass.") != std::string::npos);
}

TEST_CASE("attn hint prints the hint and where to work, not the solution") {
  const Exercise& e = table().front();
  const auto r = attn_run({"hint", e.name});
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK(r.out.rfind("Hint for " + e.name + ": ", 0) == 0);
  CHECK(r.out.find("lessons/exercises/" + e.file) != std::string::npos);
  CHECK(r.out.find(e.hint.substr(0, 20)) != std::string::npos);  // the hint's first words
  CHECK(r.out.find("solutions/") == std::string::npos);
}

TEST_CASE("unknown exercise names: one line on stderr, status 2, nothing on stdout") {
  const auto typo = attn_run({"check", "causal-mas"});
  CHECK(typo.status == 2);
  CHECK(typo.out.empty());
  CHECK(typo.err == "attn: error: unknown exercise 'causal-mas' (did you mean 'causal-mask'?)\n");

  const auto far = attn_run({"hint", "transformer"});
  CHECK(far.status == 2);
  CHECK(far.out.empty());
  CHECK(far.err == "attn: error: unknown exercise 'transformer' (see attn exercises for the list)\n");

  const auto missing = attn_run({"check"});
  CHECK(missing.status == 2);
  CHECK(missing.out.empty());
  CHECK(missing.err == "attn: error: missing exercise name (exercise: a name from 'attn exercises' vs nothing)\n");
}

TEST_CASE("attn check on an exercise as shipped: doctest's report with expected and actual, status 1") {
  const Exercise* e = untouched_exercise();
  if (!e) {
    MESSAGE("every learner file has been edited; the shipped behaviour is checked in CI");
    return;
  }
  CAPTURE(e->name);
  const auto r = attn_run({"check", e->name});
  CHECK(r.status == 1);
  CHECK(r.out.find("attn check " + e->name + ": building lessons/exercises/" + e->file) != std::string::npos);
  CHECK(r.out.find("expected") != std::string::npos);
  CHECK(r.out.find("actual") != std::string::npos);
  CHECK(r.out.find("Status: FAILURE!") != std::string::npos);
  CHECK(r.out.find("not solved yet") != std::string::npos);
  CHECK(r.out.find("attn hint " + e->name) != std::string::npos);
}

// ---- in process ----------------------------------------------------------------------------

namespace {

// A scratch source tree and bin dir holding one exercise whose "program" is a shell script, so
// each outcome can be staged without a compiler.
struct Scratch {
  fs::path root;
  ExercisePaths paths;
  Exercise e;

  Scratch() {
    root = fs::temp_directory_path() / ("attn-exercises-" + std::to_string(getpid()));
    fs::remove_all(root);
    fs::create_directories(root / "src/lessons/exercises");
    fs::create_directories(root / "src/tests/exercises");
    fs::create_directories(root / "bin");
    paths.source_dir = (root / "src").string();
    paths.build_dir = (root / "build").string();
    paths.bin_dir = (root / "bin").string();
    paths.cmake = "/usr/bin/false";
    e.number = 1;
    e.name = "demo";
    e.lesson = "causal";
    e.file = "demo.cpp";
    e.writes = "w";
    e.hint = "h";
    std::ofstream(paths.learner(e)) << "// learner\n";
    std::ofstream(paths.test(e)) << "// tests\n";
  }
  ~Scratch() { fs::remove_all(root); }

  // The program runs `body` in sh. Written after the sources, so it counts as up to date.
  void program(const std::string& body) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a later modification time
    const std::string path = paths.program(e);
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    fs::permissions(path, fs::perms::owner_all);
  }
  void touch_learner() {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::ofstream(paths.learner(e), std::ios::app) << "// edited\n";
  }
};

// Runs f with std::cerr captured.
template <class F>
std::string capture_cerr(F&& f) {
  std::ostringstream err;
  auto* old = std::cerr.rdbuf(err.rdbuf());
  f();
  std::cerr.rdbuf(old);
  return err.str();
}

}  // namespace

TEST_CASE("progress is what was observed: not built, passes, fails, crashes, edited since the build") {
  Scratch s;
  CHECK(attn::cli::progress(s.paths, s.e) == Progress::NotBuilt);
  s.program("exit 0");
  CHECK(attn::cli::progress(s.paths, s.e) == Progress::Passes);
  s.program("exit 1");
  CHECK(attn::cli::progress(s.paths, s.e) == Progress::Fails);
  s.program("kill -SEGV $$");
  CHECK(attn::cli::progress(s.paths, s.e) == Progress::Crashes);
  s.program("exit 0");
  s.touch_learner();  // a pass built from an older file says nothing about the new one
  CHECK(attn::cli::progress(s.paths, s.e) == Progress::Stale);
}

TEST_CASE("attn check without a build tree, or in a build without tests: one line, status 1") {
  ExercisePaths p = ExercisePaths::configured();
  p.build_dir = "/nonexistent/attn-build";
  std::ostringstream out;
  int status = -1;
  const std::string err = capture_cerr([&] { status = attn::cli::check_exercise(p, table().front().name, out); });
  CHECK(status == 1);
  CHECK(out.str().empty());
  CHECK(count_lines(err) == 1);
  CHECK(err.rfind("attn: error: the build directory is missing (/nonexistent/attn-build: ", 0) == 0);

  p = ExercisePaths::configured();
  p.bin_dir.clear();
  const std::string err2 = capture_cerr([&] { status = attn::cli::check_exercise(p, table().front().name, out); });
  CHECK(status == 1);
  CHECK(count_lines(err2) == 1);
  CHECK(err2.find("BUILD_TESTING: ON vs OFF") != std::string::npos);

  CHECK_THROWS_AS(attn::cli::check_exercise(p, "nope", out), attn::UsageError);
}

TEST_CASE("a missing exercise table: one line naming it, status 1") {
  ExercisePaths p = ExercisePaths::configured();
  p.source_dir = "/nonexistent/attn-src";
  std::ostringstream out;
  int status = -1;
  const std::string err = capture_cerr([&] { status = attn::cli::list_exercises(p, out); });
  CHECK(status == 1);
  CHECK(err == "attn: error: the exercise table is missing (/nonexistent/attn-src/lessons/exercises/exercises.txt: "
               "the table vs not found)\n");
}
