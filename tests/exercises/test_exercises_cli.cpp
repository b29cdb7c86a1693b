// attn exercises, attn check, attn hint as a learner meets them: the built attn run as a
// process. Then, in process, what `attn exercises` claims about progress (never a pass it did
// not see) and the one-line errors for a missing build tree.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli/compile_hints.hpp"
#include "cli/exercises.hpp"
#include "lesson_kit/options.hpp"
#include "process.hpp"
#include "pty.hpp"

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

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// An exercise whose working copy is its stub (or not written yet: attn check writes the stub), so
// that it must fail; nullptr when the learner has edited every one (then the shipped behaviour
// cannot be observed here; exercise/<name>/as-shipped checks the stubs themselves).
const Exercise* untouched_exercise() {
  const ExercisePaths p = ExercisePaths::configured();
  for (const Exercise& e : table())
    if (!fs::exists(p.learner(e)) || read_text(p.learner(e)) == read_text(p.shipped(e))) return &e;
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
    std::ofstream(paths.table()) << "demo | causal | demo.cpp | w\n    h\n";
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

// ---- what the program or the build leaves behind, and what it runs out of ------------------

namespace {

// The state letter of a process in /proc/<pid>/stat, or "gone".
std::string process_state(long pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return "gone";
  std::string line;
  std::getline(stat, line);
  const auto paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size() ? "gone" : line.substr(paren + 2, 1);
}

// A pid a learner program wrote to `path`, waiting up to 2 s for it; 0 when none came.
long pid_from(const fs::path& path) {
  for (int i = 0; i < 200; ++i) {
    long pid = 0;
    std::ifstream in(path);
    if (in >> pid && pid > 0) return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return 0;
}

}  // namespace

TEST_CASE("attn check: a process the program leaves in a new session is gone when the check returns") {
  const fs::path pid_file = fs::temp_directory_path() / ("attn-daemon-" + std::to_string(getpid()));
  fs::remove(pid_file);
  // A daemon as the books write one: fork, setsid() (out of the program's process group), fork
  // again so that its parent ends (the grandchild is handed on), then sleep with the output closed.
  Runaway r(R"(#include <cstdio>
#include <unistd.h>
int main() {
  if (fork() == 0) {
    setsid();
    if (fork() == 0) {
      std::FILE* f = std::fopen(")" + pid_file.string() + R"(", "w");
      std::fprintf(f, "%d\n", static_cast<int>(getpid()));
      std::fclose(f);
      std::freopen("/dev/null", "w", stdout);
      std::freopen("/dev/null", "w", stderr);
      sleep(300);
    }
    return 0;
  }
  sleep(1);  // the daemon is running when the program ends
  std::puts("checks done");
  return 1;
})");
  attn::cli::CheckLimits limits;
  const Checked c = check(r, limits);
  CAPTURE(c.out);
  CHECK(c.status == 1);
  const long daemon = pid_from(pid_file);
  REQUIRE(daemon > 0);
  const std::string state = process_state(daemon);
  CHECK(state == "gone");  // stopped and reaped, not only stopped
  if (state != "gone") kill(static_cast<pid_t>(daemon), SIGKILL);
  CHECK(verdict(c.out).find("not solved yet") != std::string::npos);
  CHECK(verdict(c.out).find("It left a process running when it ended; attn stopped it.") != std::string::npos);
  fs::remove(pid_file);
}

TEST_CASE("attn check: a process left holding the program's output does not keep the check waiting") {
  // The checks end at once; a background process keeps the pipe to attn open for 60 s.
  Runaway r(R"(#include <cstdio>
#include <unistd.h>
int main() {
  if (fork() == 0) {
    sleep(60);
    return 0;
  }
  std::puts("report: 1 of 1 checks passed");
  return 0;
})");
  attn::cli::CheckLimits limits;
  limits.time_limit_s = 30;
  const Checked c = check(r, limits);
  CAPTURE(c.out);
  CHECK(c.status == 0);
  CHECK(c.out.find("report: 1 of 1 checks passed") != std::string::npos);
  const std::string v = verdict(c.out);
  CHECK(v.find("solved, every check passes. It left a process running when it ended; attn stopped it.") !=
        std::string::npos);
  CHECK(v.find("loop") == std::string::npos);
  CHECK(c.seconds < 10);  // the build and 0.2 s of grace, not the 30 s limit
}

TEST_CASE("attn check: a program that allocates until refused, then waits, is named as such, not as a loop") {
  attn::cli::CheckLimits limits;
  limits.memory_mib = 256;
  limits.time_limit_s = 1;
  if (limits.memory_bytes() == 0) {
    MESSAGE("an AddressSanitizer build sets no memory limit (its shadow memory needs the address space)");
    return;
  }
  Runaway r(R"(#include <cstdlib>
#include <unistd.h>
void* volatile kept;  // so that no compiler can drop the allocations
int main() {
  while ((kept = std::malloc(16 << 20))) {}  // until the limit refuses
  for (;;) pause();                           // then wait for memory that never comes
})");
  const Checked c = check(r, limits);
  CAPTURE(c.out);
  CHECK(c.status == 1);
  const std::string v = verdict(c.out);
  CHECK(v.find("stopped after 1 s (--time-limit 1), still running, with its memory at ") != std::string::npos);
  CHECK(v.find(" of the 256 MiB it may use (--memory-limit 256), so an allocation was most likely refused") !=
        std::string::npos);
  CHECK(v.find("loop that never ends") == std::string::npos);
  CHECK(c.seconds < kBoundS);
}

TEST_CASE("attn check: a program that starts processes without end is stopped at the process limit") {
  const fs::path pid_file = fs::temp_directory_path() / ("attn-forks-" + std::to_string(getpid()));
  fs::remove(pid_file);
  // One process a few milliseconds, each waiting; the first writes its pid, to be looked for after.
  Runaway r(R"(#include <cstdio>
#include <unistd.h>
int main() {
  for (int i = 0;; ++i) {
    if (fork() == 0) {
      if (i == 0) {
        std::FILE* f = std::fopen(")" + pid_file.string() + R"(", "w");
        std::fprintf(f, "%d\n", static_cast<int>(getpid()));
        std::fclose(f);
      }
      for (;;) pause();
    }
    usleep(5000);
  }
})");
  attn::cli::CheckLimits limits;
  limits.max_processes = 16;
  limits.time_limit_s = 30;  // the process limit must stop it, not the clock
  const Checked c = check(r, limits);
  CAPTURE(c.out);
  CHECK(c.status == 1);
  CHECK(verdict(c.out).find("stopped: it had more than 16 processes running at once") != std::string::npos);
  CHECK(c.seconds < 10);
  const long first = pid_from(pid_file);
  REQUIRE(first > 0);
  CHECK(process_state(first) == "gone");
  fs::remove(pid_file);
}

TEST_CASE("attn check: a compiler that runs out of its memory is stopped there and named") {
  // g++ and clang build this pack of 2^26 values in memory: gigabytes, within a second.
  Runaway r(R"(#include <utility>
template <std::size_t... I> constexpr std::size_t sum(std::index_sequence<I...>) { return (I + ... + 0); }
int main() { return sum(std::make_index_sequence<(1u << 26)>{}) == 1; }
)");
  attn::cli::CheckLimits limits;
  limits.build_memory_mib = 256;
  const Checked c = check(r, limits);
  CHECK(c.status == 1);
  CAPTURE(c.err);
  CHECK(c.err.find("attn: error: the build of exercise_demo failed: the compiler ran out of the 256 MiB of memory it "
                   "may use (--build-memory-limit 256): look for a template that instantiates itself without end") !=
        std::string::npos);
  CHECK(c.seconds < kBoundS);
}

TEST_CASE("attn check on a deleted learner file whose stub is gone too: one line saying how both come back, status 1") {
  // With its stub there, a deleted working copy is simply written again (the workspace cases below).
  Runaway r("int main() { return 0; }\n");
  fs::remove(r.paths.learner(r.e));
  const Checked c = check(r, attn::cli::CheckLimits{});
  CHECK(c.status == 1);
  CHECK(c.out.empty());
  CHECK(c.err == "attn: error: lessons/exercises/demo.cpp is missing (the file you edit for demo: a file vs not "
                 "found), and so is its stub lessons/exercises/shipped/demo.cpp; git checkout "
                 "lessons/exercises/shipped/demo.cpp restores the stub, and attn check demo then writes your copy "
                 "from it\n");
}

// ---- attn reset, "Next:", the solution's path ---------------------------------------------
//
// A scratch layout of three exercises (a, b, c) built for real by a stand-in cmake that compiles
// the learner file alone: `int main() { return 0; }` passes, `return 1` fails.

namespace {

const std::string kPass = "int main() { return 0; }\n";
const std::string kFail = "int main() { return 1; }  // TODO\n";

struct Course {
  fs::path root;
  ExercisePaths paths;
  std::vector<Exercise> all;

  Course() {
    static int made = 0;
    root = fs::temp_directory_path() / ("attn-course-" + std::to_string(getpid()) + "-" + std::to_string(++made));
    fs::remove_all(root);
    for (const char* dir : {"src/lessons/exercises/shipped", "src/lessons/exercises/solutions", "src/tests/exercises",
                            "build", "bin"})
      fs::create_directories(root / dir);
    std::ofstream(root / "build/CMakeCache.txt") << "# a stand-in: attn check only looks for it\n";
    paths.source_dir = (root / "src").string();
    paths.build_dir = (root / "build").string();
    paths.bin_dir = (root / "bin").string();
    paths.cmake = (root / "fake-cmake").string();
    std::ofstream(paths.table()) << "a | causal | a.cpp | w\n    the hint of a\n"
                                 << "b | causal | b.cpp | w\n    the hint of b\n"
                                 << "c | causal | c.cpp | w\n    the hint of c\n";
    all = attn::cli::load_exercises(paths);
    for (const Exercise& e : all) {
      write(paths.learner(e), kFail);
      write(paths.shipped(e), kFail);
      write(paths.solution(e), kPass);
      write(paths.test(e), "// tests\n");
    }
    // `<cmake> --build <build> --target exercise_<stem>`: $4 is the target.
    std::ofstream(paths.cmake) << "#!/bin/sh\nstem=${4#exercise_}\nexec c++ -o '" << paths.bin_dir
                               << "'/exercise_$stem '" << paths.source_dir << "'/lessons/exercises/$stem.cpp\n";
    fs::permissions(paths.cmake, fs::perms::owner_all);
  }
  ~Course() { fs::remove_all(root); }
  const Exercise& get(const std::string& name) const { return *attn::cli::find_exercise(all, name); }
  static void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
  std::string read(const std::string& path) const {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  Checked check(const std::string& name) const {
    Checked c;
    std::ostringstream out;
    c.err = capture_cerr([&] { c.status = attn::cli::check_exercise(paths, name, out); });
    c.out = out.str();
    for (std::size_t nl; (nl = c.out.find("\n  ")) != std::string::npos;) c.out.replace(nl, 3, " ");  // unwrap
    return c;
  }
};

}  // namespace

TEST_CASE("attn check: Next skips the exercises that pass, the last one is named only when all pass, "
          "and the solution's path appears only after a pass") {
  Course course;
  const Checked failing = course.check("b");
  CHECK(failing.status == 1);
  CHECK(failing.out.find("not solved yet") != std::string::npos);
  CHECK(failing.out.find("solutions/") == std::string::npos);  // not before the learner's version passes

  Course::write(course.paths.learner(course.get("c")), kPass);
  REQUIRE(course.check("c").status == 0);
  Course::write(course.paths.learner(course.get("b")), kPass);
  const Checked b = course.check("b");
  CHECK(b.status == 0);
  // c already passes, so Next wraps round to a; a does not pass, so this was not the last one.
  CHECK(b.out.find("Next: attn check a (lesson causal)") != std::string::npos);
  CHECK(b.out.find("last exercise") == std::string::npos);
  CHECK(b.out.find("Compare with the solution: lessons/exercises/solutions/b.cpp.") != std::string::npos);

  Course::write(course.paths.learner(course.get("a")), kPass);
  const Checked a = course.check("a");
  CHECK(a.status == 0);
  CHECK(a.out.find("Next:") == std::string::npos);
  CHECK(a.out.find("That was the last exercise: all 3 pass.") != std::string::npos);

  // An edit after the pass makes c "edited: recheck", so it is next again, not skipped.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Course::write(course.paths.learner(course.get("c")), kPass + "// edited\n");
  const Checked again = course.check("a");
  CHECK(again.out.find("Next: attn check c") != std::string::npos);
}

TEST_CASE("attn reset NAME: the shipped stub comes back, the learner's version is kept in the build tree") {
  Course course;
  const Exercise& b = course.get("b");
  Course::write(course.paths.learner(b), "int main() { return 0; }  // my work\n");
  std::ostringstream out;
  CHECK(attn::cli::reset_exercise(course.paths, "b", out) == 0);
  CHECK(course.read(course.paths.learner(b)) == kFail);
  CHECK(course.read(course.paths.build_dir + "/exercise-resets/b.cpp") == "int main() { return 0; }  // my work\n");
  CHECK(out.str().find("lessons/exercises/b.cpp is back as shipped") != std::string::npos);
  CHECK(out.str().find("exercise-resets/b.cpp") != std::string::npos);

  std::ostringstream again;
  CHECK(attn::cli::reset_exercise(course.paths, "b", again) == 0);
  CHECK(again.str() == "attn reset b: lessons/exercises/b.cpp is already as shipped; nothing to do.\n");
  CHECK_THROWS_AS(attn::cli::reset_exercise(course.paths, "bb", out), attn::UsageError);
}

TEST_CASE("the workspace: a missing working copy is written from the stub by attn exercises, hint and check") {
  Course course;
  const Exercise& b = course.get("b");
  const std::string copy = course.paths.learner(b);
  std::ostringstream out;
  fs::remove(copy);
  CHECK(attn::cli::list_exercises(course.paths, out) == 0);
  CHECK(course.read(copy) == kFail);  // the stub's bytes
  CHECK(course.read(course.paths.base(b)) == kFail);
  fs::remove(copy);
  CHECK(attn::cli::print_hint(course.paths, "b", out) == 0);
  CHECK(course.read(copy) == kFail);
  fs::remove(copy);
  const Checked c = course.check("b");
  CHECK(c.status == 1);
  CHECK(c.out.find("not solved yet") != std::string::npos);  // built from the copy just written
  CHECK(course.read(copy) == kFail);
  // The whole workspace gone (a fresh clone): every copy comes back.
  for (const Exercise& e : course.all) fs::remove(course.paths.learner(e));
  fs::remove_all(course.paths.source_dir + "/lessons/exercises/.base");
  CHECK(attn::cli::list_exercises(course.paths, out) == 0);
  for (const Exercise& e : course.all) CHECK(course.read(course.paths.learner(e)) == kFail);
}

TEST_CASE("the workspace: a changed stub replaces an untouched copy, is named beside an edited one, and attn reset "
          "writes it") {
  Course course;
  std::ostringstream first;
  REQUIRE(attn::cli::list_exercises(course.paths, first) == 0);  // notes each copy's stub
  const std::string mine = "int main() { return 1; }  // my work\n";
  Course::write(course.paths.learner(course.get("b")), mine);
  const std::string newer_stub = "int main() { return 2; }  // TODO, a clearer stub\n";
  for (const Exercise& e : course.all) Course::write(course.paths.shipped(e), newer_stub);  // a git pull

  std::ostringstream out;
  REQUIRE(attn::cli::list_exercises(course.paths, out) == 0);
  CHECK(course.read(course.paths.learner(course.get("a"))) == newer_stub);  // nothing of the learner's lost
  CHECK(course.read(course.paths.learner(course.get("b"))) == mine);        // never overwritten
  std::string said = out.str();
  for (std::size_t nl; (nl = said.find("\n  ")) != std::string::npos;) said.replace(nl, 3, " ");  // unwrap
  CHECK(said.find("note: the stub of b (lessons/exercises/shipped/b.cpp) has changed since your copy was written; "
                  "your copy is as you left it, and attn reset b writes the new stub") != std::string::npos);
  CHECK(said.find("stub of a") == std::string::npos);
  // attn check names it too, before building.
  CHECK(course.check("b").out.find("note: the stub of b") != std::string::npos);

  std::ostringstream reset;
  CHECK(attn::cli::reset_exercise(course.paths, "b", reset) == 0);
  CHECK(course.read(course.paths.learner(course.get("b"))) == newer_stub);
  CHECK(course.read(course.paths.build_dir + "/exercise-resets/b.cpp") == mine);
  std::ostringstream after;
  REQUIRE(attn::cli::list_exercises(course.paths, after) == 0);
  CHECK(after.str().find("note:") == std::string::npos);
}

TEST_CASE("attn reset and the words of an unexpected argument, through the binary") {
  const auto unknown = attn_run({"reset", "x"});
  CHECK(unknown.status == 2);
  CHECK(unknown.out.empty());
  CHECK(unknown.err == "attn: error: unknown exercise 'x' (see attn exercises for the list)\n");
  const auto missing = attn_run({"reset"});
  CHECK(missing.status == 2);
  CHECK(missing.err == "attn: error: missing exercise name (exercise: a name from 'attn exercises' vs nothing)\n");
  // A first word that is no command is named as such; left-over words after a command are named
  // as they were typed (CLI11 joins them last to first).
  const auto unknown_command = attn_run({"frobnicate", "the", "weights"});
  CHECK(unknown_command.status == 2);
  CHECK(unknown_command.err.rfind("attn: error: unknown command 'frobnicate' (expected one of: list, lesson,", 0) == 0);
  const auto extras = attn_run({"list", "the", "weights"});
  CHECK(extras.status == 2);
  CHECK(extras.err == "attn: error: unexpected argument 'the weights' (see attn --help and attn lesson --help)\n");
}

TEST_CASE("attn check with Makefiles: T/fast once the program is built, the full build first and after a test "
          "changes, and again when the fast build fails for a reason outside the learner's file") {
  Course course;
  std::ofstream(course.paths.build_dir + "/Makefile") << "# a stand-in: attn check only looks for it\n";
  const std::string log = course.paths.build_dir + "/targets.log";
  // The stand-in records each target; its fast build fails when told to (a library out of date).
  std::ofstream(course.paths.cmake) << "#!/bin/sh\necho \"$4\" >> '" << log << "'\n"
                                    << "case \"$4\" in */fast) [ -e '" << course.paths.build_dir
                                    << "/fail-fast' ] && { echo 'undefined reference to attn::x' >&2; exit 1; };; esac\n"
                                    << "stem=${4#exercise_}\nstem=${stem%/fast}\nexec c++ -o '" << course.paths.bin_dir
                                    << "'/exercise_$stem '" << course.paths.source_dir << "'/lessons/exercises/$stem.cpp\n";
  auto targets = [&] {
    const std::string t = course.read(log);
    fs::remove(log);
    return t;
  };
  course.check("a");
  CHECK(targets() == "exercise_a\n");  // no program yet: the full build
  course.check("a");
  CHECK(targets() == "exercise_a/fast\n");
  Course::write(course.paths.learner(course.get("a")), "int main() { return 0 }\n");
  CHECK(course.check("a").err.find("error:") != std::string::npos);
  CHECK(targets() == "exercise_a/fast\n");  // the learner's own error: a full build would repeat it
  std::ofstream(course.paths.build_dir + "/fail-fast") << "";
  Course::write(course.paths.learner(course.get("a")), kPass);
  CHECK(course.check("a").status == 0);
  CHECK(targets() == "exercise_a/fast\nexercise_a\n");  // not the learner's: the full build decides
  fs::remove(course.paths.build_dir + "/fail-fast");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Course::write(course.paths.test(course.get("a")), "// tests, changed\n");
  course.check("a");
  CHECK(targets() == "exercise_a\n");  // tests newer than the program: the full build
}

// ---- compile hints -------------------------------------------------------------------------

TEST_CASE("a known beginner mistake in the compiler's first error gets one line of hint") {
  // First errors as g++ 12 printed them for each mistake in a file that includes xtensor 0.24
  // (curly quotes: a UTF-8 locale), with the source line it quotes under them.
  const std::string mat = "\xE2\x80\x98" "const Mat" "\xE2\x80\x99";
  auto q = [](const std::string& name) { return "\xE2\x80\x98" + name + "\xE2\x80\x99"; };
  struct Case {
    std::string error, hint_part;
  };
  const std::vector<Case> cases = {
      {"f.cpp:6:17: error: invalid types " + q("<unresolved overloaded function type>[int]") + " for array subscript\n"
       "    6 |   auto n = x.shape[0];",
       "x.shape()[0]"},
      {"f.cpp:6:16: error: no matching function for call to " +
           q("xt::xtensor_container<xt::uvector<float, std::allocator<float> >, 2, xt::layout_type::row_major, "
             "xt::xtensor_expression_tag>::size(int) const"),
       "x.shape()[0]"},
      {"f.cpp:6:10: error: " + mat + " {aka " + q("const class xt::xtensor_container<...>") + "} has no member named " + q("T"),
       "xt::transpose(x)"},
      {"f.cpp:6:10: error: stray " + q("@") + " in program", "attn::matmul(a, b)"},
      {"f.cpp:6:19: error: " + q("dim") + " was not declared in this scope; did you mean " + q("fdim") + "?",
       "xt::sum(x, {1})"},
      {"f.cpp:6:12: error: " + mat + " {aka ...} has no member named " + q("sum"), "xt::sum(x, {1})"},
      {"f.cpp:6:12: error: " + mat + " {aka ...} has no member named " + q("max"), "xt::amax(x, {1})"},
      {"f.cpp:6:12: error: " + q("inf") + " was not declared in this scope; did you mean " + q("ynf") + "?",
       "std::numeric_limits<float>::infinity()"},
      {"f.cpp:6:29: error: invalid type argument of unary " + q("*") + " (have " + q("int") + ")", "std::pow"},
      {"f.cpp:6:12: error: " + q("matmul") + " is not a member of " + q("xt"), "attn::matmul(a, b)"},
      {"f.cpp:6:15: error: expected primary-expression before " + q(":") + " token\n    6 |   auto r = x[0, :];",
       "xt::view(x, 0, xt::all())"},
      {"f.cpp:6:15: error: invalid types " + q("const xt::uvector<float, std::allocator<float> >::value_type {aka const float}[int]") +
           " for array subscript\n    6 |   float a = x[0][1];",
       "x(i, j)"},
      {"f.cpp:6:9: error: expected " + q(";") + " before " + q("}") + " token", "ends with ';'"},
      // The C locale: straight quotes.
      {"f.cpp:6:10: error: 'const Mat' {aka ...} has no member named 'T'", "xt::transpose(x)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.error);
    const std::string hint = attn::cli::compile_hint(c.error);
    CHECK(hint.find(c.hint_part) != std::string::npos);
    CHECK(hint.find('\n') == std::string::npos);  // one line
  }
  // An error no row knows gets no hint rather than a wrong one.
  CHECK(attn::cli::compile_hint("f.cpp:3:1: error: " + q("Foo") + " does not name a type").empty());
  // The first error, with the source line g++ quotes under it; not a later one.
  const std::string out = "[ 50%] Building CXX object x.o\nf.cpp: In function 'Mat f()':\n"
                          "f.cpp:6:10: error: stray '@' in program\n    6 |   return x @ y;\n      |          ^\n"
                          "f.cpp:7:1: error: 'len' was not declared in this scope\n";
  CHECK(attn::cli::first_compiler_error(out) == "f.cpp:6:10: error: stray '@' in program\n    6 |   return x @ y;");
  CHECK(attn::cli::first_compiler_error("no problems here\n").empty());
  // g++ with -fdiagnostics-color=always: the same error, the same hint.
  const std::string coloured = "\033[01m\033[Kf.cpp:6:19:\033[m\033[K \033[01;31m\033[Kerror: \033[m\033[K\xE2\x80\x98"
                               "\033[01m\033[Kdim\033[m\033[K\xE2\x80\x99 was not declared in this scope\n";
  CHECK(attn::cli::compile_hint(attn::cli::first_compiler_error(coloured)).find("xt::sum(x, {1})") != std::string::npos);
}

TEST_CASE("attn check: a build that fails on a known mistake shows the compiler's messages, then the hint") {
  Course course;
  Course::write(course.paths.learner(course.get("a")), "int main() { return 0 }\n");
  const Checked c = course.check("a");
  CHECK(c.status == 1);
  CHECK(c.err.find("error: expected") != std::string::npos);
  const auto hint = c.err.find("hint: A statement ends with ';'");
  CHECK(hint != std::string::npos);
  CHECK(hint > c.err.find("error: expected"));                      // after the compiler's messages
  CHECK(c.err.find("attn: error: the build of exercise_a failed") > hint);  // before attn's last line
}

// ---- attn watch ----------------------------------------------------------------------------

namespace {

const std::string kWatchDriver = WATCH_DRIVER;

// A watch_driver run with stdin from /dev/null and stdout and stderr into one pipe: attn watch as
// an editor's task runner or a CI log sees it, with no terminal anywhere.
class PipeRun {
 public:
  explicit PipeRun(const std::vector<std::string>& argv) {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      const int devnull = open("/dev/null", O_RDONLY);
      dup2(devnull, 0);
      dup2(fds[1], 1);
      dup2(fds[1], 2);
      close(fds[0]);
      close(fds[1]);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    close(fds[1]);
    fd_ = fds[0];
  }
  ~PipeRun() {
    if (!reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(fd_);
  }
  // Position of `text` at or after `from`, reading up to `timeout_ms`; npos on a timeout or EOF.
  std::size_t wait_for(const std::string& text, std::size_t from = 0, int timeout_ms = 60000) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      const auto at = seen_.find(text, from);
      if (at != std::string::npos) return at;
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) return std::string::npos;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char buf[4096];
      const ssize_t n = read(fd_, buf, sizeof buf);
      if (n <= 0) return seen_.find(text, from);
      seen_.append(buf, static_cast<std::size_t>(n));
    }
  }
  int finish(int timeout_ms = 20000) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      wait_for("\x01", seen_.size(), 20);  // drain what it prints
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        reaped_ = true;
        wait_for("\x01", seen_.size(), 50);
        return status;
      }
    }
    return -1;
  }
  void signal(int sig) { kill(pid_, sig); }
  const std::string& seen() const { return seen_; }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  bool reaped_ = false;
  std::string seen_;
};

std::vector<std::string> driver_args(const Course& c) {
  return {kWatchDriver, c.paths.source_dir, c.paths.build_dir, c.paths.bin_dir, c.paths.cmake};
}

// Saves as an editor that writes a new file and renames it over the old one does.
void save_by_rename(const std::string& path, const std::string& text) {
  Course::write(path + ".swp", text);
  fs::rename(path + ".swp", path);
}

}  // namespace

TEST_CASE("attn watch without a terminal: checks on each save, moves on when it passes, ends cleanly on SIGINT") {
  Course course;
  Course::write(course.paths.learner(course.get("a")), kPass);  // a is solved and built: watch skips it
  REQUIRE(course.check("a").status == 0);

  PipeRun watch(driver_args(course));
  std::size_t at = watch.wait_for("attn watch: [#--] 1 of 3 pass. Now: b (lesson causal), lessons/exercises/b.cpp");
  REQUIRE(at != std::string::npos);
  at = watch.wait_for("Waiting for you to save lessons/exercises/b.cpp.", at);
  REQUIRE(at != std::string::npos);
  // Stdin is /dev/null: its end must neither end the watch nor make it spin; it says how to stop.
  CHECK(watch.seen().find("Ctrl-C (SIGINT) or SIGTERM ends it.", at) != std::string::npos);
  CHECK(watch.seen().find("solutions/") == std::string::npos);
  CHECK(watch.seen().find("\033[") == std::string::npos);  // no screen clearing into a pipe

  // Saving another file is not a reason to check b again.
  const std::size_t before = watch.seen().size();
  Course::write(course.paths.learner(course.get("c")), kFail);
  CHECK(watch.wait_for("building", before, 1500) == std::string::npos);

  // A broken save: the build fails, the hint follows, and the watch goes on waiting.
  Course::write(course.paths.learner(course.get("b")), "int main() { return 0 }\n");
  at = watch.wait_for("hint: A statement ends with ';'", before);
  REQUIRE(at != std::string::npos);
  at = watch.wait_for("Waiting for you to save lessons/exercises/b.cpp.", at);
  REQUIRE(at != std::string::npos);

  // The solution, saved by rename: b passes, its solution is named, and c comes next at once.
  save_by_rename(course.paths.learner(course.get("b")), kPass);
  at = watch.wait_for("attn check b: solved, every check passes.", at);
  REQUIRE(at != std::string::npos);
  CHECK(watch.wait_for("lessons/exercises/solutions/b.cpp", at) != std::string::npos);
  at = watch.wait_for("attn watch: moving on to c.", at);
  REQUIRE(at != std::string::npos);
  at = watch.wait_for("attn watch: [##-] 2 of 3 pass. Now: c (lesson causal)", at);
  REQUIRE(at != std::string::npos);
  at = watch.wait_for("Waiting for you to save lessons/exercises/c.cpp:", at);
  REQUIRE(at != std::string::npos);
  // c is announced, not checked: its stub's failures would scroll b's pass away.
  CHECK(watch.seen().find("attn check c", at) == std::string::npos);
  CHECK(watch.seen().rfind("attn check c") == std::string::npos);

  watch.signal(SIGINT);
  const int status = watch.finish();
  REQUIRE(status != -1);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  CHECK(watch.seen().find("attn watch: stopped. [##-] 2 of 3 pass", at) != std::string::npos);
}

TEST_CASE("attn watch on a terminal: a pass stays on screen, h shows the hint, the last pass ends it, "
          "Ctrl-C ends it cleanly") {
  Course course;
  Course::write(course.paths.learner(course.get("a")), kPass);
  REQUIRE(course.check("a").status == 0);
  {
    attn::testing::PtyRun watch(driver_args(course), {"PATH=/usr/bin:/bin", "TERM=xterm"});
    std::size_t at = watch.wait_for("Type h and Enter for the hint");
    REQUIRE(at != std::string::npos);
    CHECK(watch.seen().find("\033[2J") != std::string::npos);  // a terminal: the check starts on a clean screen
    Course::write(course.paths.learner(course.get("b")), kPass);
    at = watch.wait_for("Waiting for you to save lessons/exercises/c.cpp:", at);
    REQUIRE(at != std::string::npos);
    // b's pass and its solution are still on screen: moving on to c did not clear it, nor
    // check c (its failures would fill the screen).
    const std::size_t cleared = watch.seen().rfind("\033[2J");
    CHECK(watch.seen().find("solutions/b.cpp", cleared) != std::string::npos);
    CHECK(watch.seen().find("attn check c", cleared) == std::string::npos);
    // Enter alone checks c now, on a clean screen.
    watch.send("\n");
    at = watch.wait_for("attn check c: ", at);
    REQUIRE(at != std::string::npos);
    CHECK(watch.seen().rfind("\033[2J") > cleared);
    watch.send("h\n");
    at = watch.wait_for("the hint of c", at);
    CHECK(at != std::string::npos);
    Course::write(course.paths.learner(course.get("c")), kPass);
    at = watch.wait_for("That was the last exercise", at);
    CHECK(at != std::string::npos);
    const int status = watch.finish();
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(watch.seen().find("[###] 3 of 3 pass") != std::string::npos);
  }
  Course::write(course.paths.learner(course.get("c")), kFail);
  {
    attn::testing::PtyRun watch(driver_args(course), {"PATH=/usr/bin:/bin", "TERM=xterm"});
    const std::size_t at = watch.wait_for("Waiting for you to save lessons/exercises/c.cpp.");
    REQUIRE(at != std::string::npos);
    watch.send("\x03");  // Ctrl-C, as the terminal delivers it: SIGINT to the foreground group
    const int status = watch.finish();
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 130);
    CHECK(watch.seen().find("attn watch: stopped.", at) != std::string::npos);
  }
}

TEST_CASE("attn watch ended by SIGINT while a program runs: what the program left in a new session goes too") {
  Course course;
  const fs::path pid_file = course.root / "daemon.pid";
  // b's program starts a daemon (fork, setsid(), fork again), then takes its time.
  Course::write(course.paths.learner(course.get("b")), R"(#include <cstdio>
#include <unistd.h>
int main() {
  if (fork() == 0) {
    setsid();
    if (fork() == 0) {
      std::FILE* f = std::fopen(")" + pid_file.string() + R"(", "w");
      std::fprintf(f, "%d\n", static_cast<int>(getpid()));
      std::fclose(f);
      sleep(300);
    }
    return 0;
  }
  sleep(300);
})");
  Course::write(course.paths.learner(course.get("a")), kPass);  // a passes: the watch starts at b
  REQUIRE(course.check("a").status == 0);
  PipeRun watch(driver_args(course));
  REQUIRE(watch.wait_for("attn check b: running its checks") != std::string::npos);
  const long daemon = pid_from(pid_file);
  REQUIRE(daemon > 0);
  watch.signal(SIGINT);
  const int status = watch.finish();
  REQUIRE(status != -1);
  CHECK(WIFSIGNALED(status));  // as before: attn dies of the signal, after stopping what it ran
  CHECK(WTERMSIG(status) == SIGINT);
  const std::string state = process_state(daemon);
  CHECK((state == "gone" || state == "Z"));  // killed; reaped once watch_driver's parent (init) gets to it
  if (state != "gone" && state != "Z") kill(static_cast<pid_t>(daemon), SIGKILL);
}
