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

TEST_CASE("attn check NAME | head: the reader leaving ends the check quietly") {
  const Exercise* e = untouched_exercise();
  if (!e) {
    MESSAGE("every learner file has been edited; the shipped behaviour is checked in CI");
    return;
  }
  // attn's own status is 0 when a write found the reader gone, and the verdict's (1, not solved)
  // when the whole report fitted in the pipe before head left; never a message on stderr.
  const auto r = attn::testing::run(
      {"/bin/bash", "-c", "set -o pipefail; '" + kAttn + "' check " + e->name + " | head -1; echo \"status $?\" >&2"}, 300);
  CHECK((r.err == "status 0\n" || r.err == "status 1\n"));
  CHECK(count_lines(r.out) == 1);
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

// ---- runaway learner code ------------------------------------------------------------------
//
// attn check on deliberately runaway learner files, in a scratch copy of the layout (never the
// shipped files): a "cmake" that compiles the learner file alone with c++, so each case builds
// and runs real code in a few seconds, under limits small enough for a test.

namespace {

struct Runaway {
  fs::path root;
  ExercisePaths paths;
  Exercise e;

  explicit Runaway(const std::string& learner_code, const std::string& build_script = "") {
    static int made = 0;  // two of them may be alive at once
    root = fs::temp_directory_path() / ("attn-runaway-" + std::to_string(getpid()) + "-" + std::to_string(++made));
    fs::remove_all(root);
    fs::create_directories(root / "src/lessons/exercises");
    fs::create_directories(root / "src/tests/exercises");
    fs::create_directories(root / "build");
    fs::create_directories(root / "bin");
    std::ofstream(root / "build/CMakeCache.txt") << "# a stand-in: attn check only looks for it\n";
    paths.source_dir = (root / "src").string();
    paths.build_dir = (root / "build").string();
    paths.bin_dir = (root / "bin").string();
    paths.cmake = (root / "fake-cmake").string();
    e.number = 1;
    e.name = "demo";
    e.lesson = "causal";
    e.file = "demo.cpp";
    e.writes = "w";
    e.hint = "h";
    std::ofstream(paths.learner(e)) << learner_code;
    std::ofstream(paths.test(e)) << "// tests\n";
    std::ofstream(paths.table()) << "demo | causal | demo.cpp | w | h\n";
    // attn check calls `<cmake> --build <build> --target exercise_demo`: compile the one file.
    std::ofstream(paths.cmake) << "#!/bin/sh\n"
                               << (build_script.empty() ? "exec c++ -std=c++17 -O1 -o '" + paths.program(e) + "' '" +
                                                              paths.learner(e) + "'"
                                                        : build_script)
                               << "\n";
    fs::permissions(paths.cmake, fs::perms::owner_all);
  }
  ~Runaway() { fs::remove_all(root); }

  std::string learner_text() const {
    std::ifstream in(paths.learner(e));
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
};

struct Checked {
  int status = -1;
  std::string out, err;
  double seconds = 0;
};

Checked check(const Runaway& r, const attn::cli::CheckLimits& limits, std::ostream* sink = nullptr) {
  Checked c;
  std::ostringstream out;
  const auto t0 = std::chrono::steady_clock::now();
  c.err = capture_cerr([&] { c.status = attn::cli::check_exercise(r.paths, "demo", sink ? *sink : out, limits); });
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  c.out = out.str();
  return c;
}

// The verdict: the last line of what check printed, joined back if it was wrapped.
std::string verdict(const std::string& out) {
  const auto at = out.rfind("attn check demo: ");
  if (at == std::string::npos) return "";
  std::string v = out.substr(at);
  for (std::size_t nl; (nl = v.find("\n  ")) != std::string::npos;) v.replace(nl, 3, " ");  // unwrap
  return v;
}

// A stream whose reader leaves after `limit` bytes, like `| head -c limit`.
class ClosingBuf : public std::streambuf {
 public:
  explicit ClosingBuf(std::size_t limit) : left_(limit) {}
  std::size_t taken = 0;

 protected:
  int overflow(int c) override {
    if (left_ == 0) return traits_type::eof();
    --left_;
    ++taken;
    return c;
  }
  std::streamsize xsputn(const char*, std::streamsize n) override {
    const auto k = std::min<std::streamsize>(n, static_cast<std::streamsize>(left_));
    left_ -= static_cast<std::size_t>(k);
    taken += static_cast<std::size_t>(k);
    return k;
  }

 private:
  std::size_t left_;
};

// Generous: a refusal on a loaded machine is still a refusal. The limits in these cases are 1-2 s.
constexpr double kBoundS = 30;

}  // namespace

TEST_CASE("attn check: a program printing in a loop is cut to its beginning and end, and says how much was cut") {
  Runaway r(R"(#include <cstdio>
int main() {
  std::puts("first line of the report");
  for (long i = 0; i < 400000; ++i) std::printf("line %ld of a loop that prints too much\n", i);
  std::puts("last line of the report");
  return 1;
})");
  attn::cli::CheckLimits limits;
  limits.time_limit_s = 20;
  const Checked c = check(r, limits);
  CAPTURE(c.err);
  CHECK(c.status == 1);
  CHECK(c.out.size() < 24 * 1024);  // 16 KiB + 4 KiB + the lines around them, not 16 MB
  CHECK(c.out.find("first line of the report") != std::string::npos);
  CHECK(c.out.find("last line of the report") != std::string::npos);
  CHECK(c.out.find(" bytes cut: the program printed ") != std::string::npos);
  CHECK(verdict(c.out).find("not solved yet. Its output was cut") != std::string::npos);
  CHECK(c.seconds < kBoundS);
}

TEST_CASE("attn check: an endless loop is stopped at the time limit, printing or silent, with one verdict") {
  Runaway silent("int main() { volatile unsigned long n = 0; for (;;) ++n; }\n");
  attn::cli::CheckLimits limits;
  limits.time_limit_s = 1;
  const Checked c = check(silent, limits);
  CHECK(c.status == 1);
  CHECK(c.err.empty());
  CHECK(verdict(c.out).find("stopped after 1 s (--time-limit 1), still running") != std::string::npos);
  CHECK(verdict(c.out).find("lessons/exercises/demo.cpp is as you left it") != std::string::npos);
  CHECK(c.seconds < kBoundS);
  CHECK(silent.learner_text() == "int main() { volatile unsigned long n = 0; for (;;) ++n; }\n");

  Runaway loud("#include <cstdio>\nint main() { for (;;) std::puts(\"again and again\"); }\n");
  const Checked l = check(loud, limits);
  CHECK(l.status == 1);
  CHECK(l.out.size() < 24 * 1024);
  CHECK(l.out.find(" bytes cut: ") != std::string::npos);
  CHECK(verdict(l.out).find("stopped after 1 s") != std::string::npos);
  CHECK(l.seconds < kBoundS);
}

TEST_CASE("attn check: a program that allocates without end is stopped at the memory limit") {
  attn::cli::CheckLimits limits;
  limits.memory_mib = 256;
  limits.time_limit_s = 30;  // the memory limit must stop it, not the clock
  if (limits.memory_bytes() == 0) {
    MESSAGE("an AddressSanitizer build sets no memory limit (its shadow memory needs the address space)");
    return;
  }
  Runaway r(R"(#include <cstring>
#include <vector>
int main() {
  std::vector<char*> kept;
  for (;;) {  // 64 MiB at a time, touched so that it is really used
    char* p = new char[64 << 20];
    std::memset(p, 1, 64 << 20);
    kept.push_back(p);
  }
})");
  const Checked c = check(r, limits);
  CAPTURE(c.out);
  CHECK(c.status == 1);
  CHECK(verdict(c.out).find("stopped: it asked for more than its 256 MiB of memory (--memory-limit 256)") !=
        std::string::npos);
  CHECK(c.seconds < kBoundS);
}

TEST_CASE("attn check: a build that runs away is stopped at its own time limit, with everything it started") {
  Runaway r("int main() { return 0; }\n",
            // A compiler stand-in that never finishes, and a helper it started: both must go.
            "sleep 300 & echo $! > '" + (fs::temp_directory_path() / ("attn-runaway-helper-" + std::to_string(getpid()))).string() +
                "'\nsleep 300");
  attn::cli::CheckLimits limits;
  limits.build_time_limit_s = 1;
  const Checked c = check(r, limits);
  CHECK(c.status == 1);
  CHECK(count_lines(c.err) == 1);
  CHECK(c.err.rfind("attn: error: the build of exercise_demo was stopped after 1 s (--build-time-limit: ", 0) == 0);
  CHECK(c.err.find("lessons/exercises/demo.cpp and the build tree are as they were") != std::string::npos);
  CHECK(c.seconds < kBoundS);
  const fs::path helper_file = fs::temp_directory_path() / ("attn-runaway-helper-" + std::to_string(getpid()));
  std::ifstream helper(helper_file);
  long pid = 0;
  helper >> pid;
  REQUIRE(pid > 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::string state = "gone";
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (stat) {
    std::string ignore;
    stat >> ignore >> ignore >> state;  // pid, (comm), state: Z once killed and not yet reaped
  }
  CHECK((state == "gone" || state == "Z"));
  fs::remove(helper_file);

  // A real compiler stuck in constant evaluation: stopped the same way.
  Runaway slow(R"(constexpr long spin() {
  long s = 0;
  for (long i = 0; i < 200000; ++i)
    for (long j = 0; j < 200000; ++j) s += i ^ j;
  return s;
}
static_assert(spin() != 1);
int main() { return 0; }
)");
  const Checked s = check(slow, limits);
  CHECK(s.status == 1);
  CHECK(s.err.find("was stopped after 1 s") != std::string::npos);
  CHECK(s.seconds < kBoundS);
}

TEST_CASE("attn check | head: a reader that leaves ends the check quietly and stops the program") {
  Runaway r("#include <cstdio>\nint main() { for (;;) std::puts(\"report line\"); }\n");
  attn::cli::CheckLimits limits;
  limits.time_limit_s = 60;  // the reader leaving must end it, not the time limit
  ClosingBuf buf(200);
  std::ostream closing(&buf);
  const Checked c = check(r, limits, &closing);
  CHECK(c.status == 0);
  CHECK(c.err.empty());
  CHECK(c.seconds < 20);
}
