#include "cli/exercises.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "lesson_kit/options.hpp"
#include "lesson_kit/registry.hpp"
#include "report/text_sink.hpp"

namespace attn::cli {

namespace fs = std::filesystem;

namespace {

// A problem with the setup (no table, no build tree), not with what the learner typed: one
// line on stderr and status 1, where a bad name is a UsageError and status 2.
struct SetupError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// How long one exercise program may run: its checks take well under a second, so a program
// still running after this is stuck (an endless loop in the learner's code).
constexpr int kCheckTimeoutS = 60;   // attn check: the learner is watching
constexpr int kListTimeoutS = 10;    // attn exercises: per exercise, for a quick overview

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// ---- child processes ---------------------------------------------------------------------

enum class Output { Inherit, Capture, Discard };

struct Child {
  int status = -1;         // exit status, or 128 + signal
  bool timed_out = false;
  std::string output;      // stdout and stderr together, with Output::Capture
};

// Runs argv[0] (an absolute path) without a shell, so paths with spaces need no quoting.
// timeout_s 0 means wait as long as it takes (a build).
Child run_child(const std::vector<std::string>& argv, Output mode, int timeout_s) {
  int pipe_fd[2] = {-1, -1};
  if (mode == Output::Capture && pipe(pipe_fd) != 0) throw SetupError(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) throw SetupError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // main() ignores SIGPIPE for its own quiet exit; a child must not inherit that, or
    // `attn check x | head` would leave it writing into a closed pipe.
    std::signal(SIGPIPE, SIG_DFL);
    const int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) dup2(devnull, 0);  // nothing here reads the terminal
    if (mode == Output::Capture) {
      dup2(pipe_fd[1], 1);
      dup2(pipe_fd[1], 2);
      close(pipe_fd[0]);
      close(pipe_fd[1]);
    } else if (mode == Output::Discard && devnull >= 0) {
      dup2(devnull, 1);
      dup2(devnull, 2);
    }
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    const std::string msg = "attn: error: cannot run " + argv[0] + ": " + std::strerror(errno) + "\n";
    (void)!write(2, msg.data(), msg.size());
    _exit(127);
  }

  Child child;
  if (mode == Output::Capture) {
    close(pipe_fd[1]);
    char buf[4096];
    for (;;) {
      const ssize_t n = read(pipe_fd[0], buf, sizeof buf);
      if (n > 0) child.output.append(buf, static_cast<std::size_t>(n));
      else if (n == 0 || errno != EINTR) break;
    }
    close(pipe_fd[0]);
  }
  int wstatus = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  for (;;) {
    const pid_t done = waitpid(pid, &wstatus, timeout_s > 0 ? WNOHANG : 0);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw SetupError(std::string("waitpid: ") + std::strerror(errno));
    if (timeout_s > 0 && std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &wstatus, 0);
      child.timed_out = true;
      break;
    }
    if (timeout_s > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  child.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  return child;
}

// ---- names -------------------------------------------------------------------------------

// The exercise the learner named, or a UsageError with a suggestion (exit status 2).
const Exercise& lookup(const std::vector<Exercise>& all, const std::string& name) {
  if (const Exercise* e = find_exercise(all, name)) return *e;
  const std::string near = closest_exercise(all, name);
  if (!near.empty()) throw UsageError("unknown exercise '" + name + "' (did you mean '" + near + "'?)");
  throw UsageError("unknown exercise '" + name + "' (see attn exercises for the list)");
}

bool newer(const fs::path& a, const fs::path& b) {
  std::error_code ec1, ec2;
  const auto ta = fs::last_write_time(a, ec1), tb = fs::last_write_time(b, ec2);
  return !ec1 && !ec2 && ta > tb;
}

// "lessons/exercises/rnn_step.cpp": paths as a learner at the repository root types them.
std::string relative(const ExercisePaths& paths, const std::string& path) {
  const std::string prefix = paths.source_dir + "/";
  return path.compare(0, prefix.size(), prefix) == 0 ? path.substr(prefix.size()) : path;
}

// A command the wrap must not break: keep() turns its spaces into a byte wrap() does not split
// at, and wrap_keeping() turns them back after wrapping.
constexpr char kKeep = '\x01';
std::string keep(std::string text) {
  std::replace(text.begin(), text.end(), ' ', kKeep);
  return text;
}
std::string wrap_keeping(const std::string& text, const std::string& first, const std::string& rest) {
  std::string out = report::wrap(text, 80, first, rest);
  std::replace(out.begin(), out.end(), kKeep, ' ');
  return out;
}

// The build tree must exist (attn check builds in it) and have exercise programs configured.
void require_build(const ExercisePaths& paths) {
  if (paths.bin_dir.empty())
    throw SetupError("this build has no exercise programs (BUILD_TESTING: ON vs OFF); reconfigure with "
                     "cmake -S " + paths.source_dir + " -B " + paths.build_dir + " -DBUILD_TESTING=ON");
  if (!fs::exists(fs::path(paths.build_dir) / "CMakeCache.txt"))
    throw SetupError("the build directory is missing (" + paths.build_dir +
                     ": a configured build tree vs not found); create it again with cmake -S " + paths.source_dir +
                     " -B " + paths.build_dir);
}

// Runs a top-level command, turning SetupError into one line on stderr and status 1.
template <class F>
int guarded(F&& body) {
  try {
    return body();
  } catch (const SetupError& e) {
    std::cout.flush();
    std::cerr << "attn: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

// ---- the table ---------------------------------------------------------------------------

std::string Exercise::stem() const { return file.size() > 4 ? file.substr(0, file.size() - 4) : file; }
std::string Exercise::target() const { return "exercise_" + stem(); }

ExercisePaths ExercisePaths::configured() {
  ExercisePaths p;
  p.source_dir = ATTN_SOURCE_DIR;
  p.build_dir = ATTN_BUILD_DIR;
  p.cmake = ATTN_CMAKE_COMMAND;
#ifdef ATTN_EXERCISE_BIN_DIR
  p.bin_dir = ATTN_EXERCISE_BIN_DIR;  // set by tests/exercises/CMakeLists.txt, absent without tests
#endif
  return p;
}

std::string ExercisePaths::table() const { return source_dir + "/lessons/exercises/exercises.txt"; }
std::string ExercisePaths::learner(const Exercise& e) const { return source_dir + "/lessons/exercises/" + e.file; }
std::string ExercisePaths::solution(const Exercise& e) const {
  return source_dir + "/lessons/exercises/solutions/" + e.file;
}
std::string ExercisePaths::test(const Exercise& e) const { return source_dir + "/tests/exercises/test_" + e.file; }
std::string ExercisePaths::program(const Exercise& e) const { return bin_dir + "/" + e.target(); }

std::vector<Exercise> parse_exercises(std::istream& in, const std::string& origin) {
  std::vector<Exercise> all;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    std::vector<std::string> fields;
    std::stringstream ss(t);
    for (std::string f; std::getline(ss, f, '|');) fields.push_back(trim(f));
    const auto where = origin + ":" + std::to_string(number) + ": ";
    if (fields.size() != 5)
      throw std::runtime_error(where + "expected 5 fields separated by '|' (name | lesson | file | what you write | "
                               "hint), got " + std::to_string(fields.size()));
    for (const auto& f : fields)
      if (f.empty()) throw std::runtime_error(where + "a field is empty");
    Exercise e;
    e.number = all.size() + 1;
    e.name = fields[0];
    e.lesson = fields[1];
    e.file = fields[2];
    e.writes = fields[3];
    e.hint = fields[4];
    if (e.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
      throw std::runtime_error(where + "name '" + e.name + "' may hold only a-z, 0-9 and '-'");
    if (e.file.size() <= 4 || e.file.substr(e.file.size() - 4) != ".cpp" ||
        e.stem().find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
      throw std::runtime_error(where + "file '" + e.file + "' must be <a-z, 0-9, _>.cpp");
    if (find_exercise(all, e.name)) throw std::runtime_error(where + "exercise '" + e.name + "' appears twice");
    all.push_back(std::move(e));
  }
  return all;
}

std::vector<Exercise> load_exercises(const ExercisePaths& paths) {
  std::ifstream in(paths.table());
  if (!in) throw SetupError("the exercise table is missing (" + paths.table() + ": the table vs not found)");
  try {
    return parse_exercises(in, paths.table());
  } catch (const std::runtime_error& e) {
    throw SetupError(e.what());
  }
}

const Exercise* find_exercise(const std::vector<Exercise>& all, const std::string& name) {
  for (const auto& e : all)
    if (e.name == name) return &e;
  return nullptr;
}

std::string closest_exercise(const std::vector<Exercise>& all, const std::string& name) {
  std::vector<std::string> names;
  for (const auto& e : all) names.push_back(e.name);
  return closest_name(name, names);
}

// ---- progress ----------------------------------------------------------------------------

Progress progress(const ExercisePaths& paths, const Exercise& e) {
  const fs::path program = paths.program(e);
  if (paths.bin_dir.empty() || !fs::exists(program)) return Progress::NotBuilt;
  // A program older than its sources says nothing about them: do not run it, say so.
  if (newer(paths.learner(e), program) || newer(paths.test(e), program)) return Progress::Stale;
  const Child run = run_child({program.string()}, Output::Discard, kListTimeoutS);
  if (run.timed_out) return Progress::TimedOut;
  if (run.status == 0) return Progress::Passes;
  return run.status > 128 ? Progress::Crashes : Progress::Fails;
}

const char* progress_text(Progress p) {
  switch (p) {
    case Progress::NotBuilt: return "not checked yet";
    case Progress::Stale: return "edited: recheck";
    case Progress::Passes: return "passes";
    case Progress::Fails: return "fails";
    case Progress::Crashes: return "crashes";
    case Progress::TimedOut: return "times out";
  }
  return "?";
}

// ---- the commands ------------------------------------------------------------------------

int list_exercises(const ExercisePaths& paths, std::ostream& out) {
  return guarded([&] {
    const auto all = load_exercises(paths);
    std::size_t w_name = 4, w_lesson = 6, w_file = 4;
    for (const auto& e : all) {
      w_name = std::max(w_name, e.name.size());
      w_lesson = std::max(w_lesson, e.lesson.size());
      w_file = std::max(w_file, e.file.size());
    }
    auto pad = [](std::string s, std::size_t w) {
      s.resize(std::max(w, s.size()), ' ');
      return s;
    };
    out << wrap_keeping("Exercises, in teaching order. Edit the file, then run " + keep("attn check NAME") + "; " +
                            keep("attn hint NAME") + " gives a hint. The files are in " + paths.source_dir +
                            "/lessons/exercises/.",
                        "", "")
        << "\n";
    const std::string indent(6, ' ');
    out << "   #  " << pad("name", w_name) << "  " << pad("lesson", w_lesson) << "  " << pad("file", w_file)
        << "  now\n";
    std::size_t passing = 0;
    const Exercise* next = nullptr;
    for (const auto& e : all) {
      const Progress p = progress(paths, e);
      if (p == Progress::Passes) ++passing;
      else if (!next) next = &e;
      std::string number = std::to_string(e.number);
      out << std::string(number.size() < 4 ? 4 - number.size() : 0, ' ') << number << "  " << pad(e.name, w_name)
          << "  " << pad(e.lesson, w_lesson) << "  " << pad(e.file, w_file) << "  " << progress_text(p) << "\n"
          << report::wrap(e.writes, 80, indent, indent);
    }
    out << "\n" << passing << " of " << all.size() << " pass.";
    if (next) out << " Next: attn check " << next->name;
    out << "\n";
    out << wrap_keeping("\"passes\" and \"fails\" come from running each exercise's last build just now; "
                        "\"not checked yet\" means it was never built, \"edited: recheck\" that the file "
                        "changed since. " + keep("attn check NAME") + " builds and runs one.",
                        "", "");
    return 0;
  });
}

int check_exercise(const ExercisePaths& paths, const std::string& name, std::ostream& out) {
  return guarded([&] {
    const auto all = load_exercises(paths);
    const Exercise& e = lookup(all, name);
    require_build(paths);
    const std::string file = relative(paths, paths.learner(e));

    // Build this exercise's program and nothing else: one small file to compile, one link.
    out << "attn check " << e.name << ": building " << file << "\n";
    out.flush();
    const Child build = run_child({paths.cmake, "--build", paths.build_dir, "--target", e.target()}, Output::Capture, 0);
    if (build.status != 0) {
      // The compiler's messages, without make's "[ 52%] Built target ..." lines around them.
      std::istringstream lines(build.output);
      for (std::string line; std::getline(lines, line);)
        if (line.find("] Built target ") == std::string::npos) std::cerr << line << "\n";
      throw SetupError("the build of " + e.target() + " failed (" + file +
                       ": code that compiles vs the compiler messages above)");
    }

    // doctest's report goes straight to the terminal: which case failed, expected and actual.
    out << "attn check " << e.name << ": running its checks\n\n";
    out.flush();
    // --no-intro: doctest's version banner says nothing to a learner.
    const Child run = run_child({paths.program(e), "--no-intro=true"}, Output::Inherit, kCheckTimeoutS);
    out << "\n";
    const std::string head = "attn check " + e.name + ": ";
    auto verdict = [&](const std::string& text) { out << wrap_keeping(head + text, "", "  "); };
    if (run.timed_out) {
      verdict("still running after " + std::to_string(kCheckTimeoutS) +
              " s, so it was stopped. Look for a loop that never ends in " + file + ".");
      return 1;
    }
    if (run.status > 128) {
      verdict("the program crashed (signal " + std::to_string(run.status - 128) + ", " + strsignal(run.status - 128) +
              "). Often an index past the end of a tensor, for example one made with the wrong shape, in " +
              file + ".");
      return 1;
    }
    if (run.status != 0) {
      verdict("not solved yet. Read the first failure above, edit " + file + ", and run " +
              keep("attn check " + e.name) + " again. Stuck? " + keep("attn hint " + e.name));
      return 1;
    }
    if (e.number < all.size())
      verdict("solved, every check passes. Next: " + keep("attn check " + all[e.number].name) + " (lesson " +
              all[e.number].lesson + ")");
    else
      verdict("solved, every check passes. That was the last exercise.");
    return 0;
  });
}

int print_hint(const ExercisePaths& paths, const std::string& name, std::ostream& out) {
  return guarded([&] {
    const auto all = load_exercises(paths);
    const Exercise& e = lookup(all, name);
    out << wrap_keeping("Hint for " + e.name + ": " + e.writes, "", "  ")
        << "Edit " << relative(paths, paths.learner(e)) << " (lesson " << e.lesson << ").\n\n"
        << report::wrap(e.hint, 80, "  ", "  ") << "\nCheck it with: attn check " << e.name << "\n";
    return 0;
  });
}

}  // namespace attn::cli
