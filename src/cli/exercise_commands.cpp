#include "cli/exercise_commands.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/compile_hints.hpp"
#include "cli/exercise_workspace.hpp"
#include "lesson_kit/options.hpp"
#include "report/text.hpp"
#include "report/text_sink.hpp"

namespace attn::cli {

namespace fs = std::filesystem;

namespace {

constexpr int kListTimeoutS = 10;    // attn exercises: per exercise, for a quick overview

bool newer(const fs::path& a, const fs::path& b) {
  std::error_code ec1, ec2;
  const auto ta = fs::last_write_time(a, ec1), tb = fs::last_write_time(b, ec2);
  return !ec1 && !ec2 && ta > tb;
}

}  // namespace

std::string relative(const ExercisePaths& paths, const std::string& path) {
  const std::string prefix = paths.source_dir + "/";
  return path.compare(0, prefix.size(), prefix) == 0 ? path.substr(prefix.size()) : path;
}

std::string keep(std::string text) {
  std::replace(text.begin(), text.end(), ' ', report::kKeep);
  return text;
}
std::string wrap_keeping(const std::string& text, const std::string& first, const std::string& rest) {
  std::string out = report::wrap(text, 80, first, rest);
  std::replace(out.begin(), out.end(), report::kKeep, ' ');
  return out;
}

void require_build(const ExercisePaths& paths) {
  if (paths.bin_dir.empty())
    throw SetupError("this build has no exercise programs (BUILD_TESTING: ON vs OFF); reconfigure with "
                     "cmake -S " + paths.source_dir + " -B " + paths.build_dir + " -DBUILD_TESTING=ON");
  if (!fs::exists(fs::path(paths.build_dir) / "CMakeCache.txt"))
    throw SetupError("the build directory is missing (" + paths.build_dir +
                     ": a configured build tree vs not found); create it again with cmake -S " + paths.source_dir +
                     " -B " + paths.build_dir);
}

std::uint64_t CheckLimits::memory_bytes() const { return kCanLimitMemory ? memory_mib << 20 : 0; }

// ---- progress ----------------------------------------------------------------------------

Progress progress(const ExercisePaths& paths, const Exercise& e) {
  const fs::path program = paths.program(e);
  if (paths.bin_dir.empty() || !fs::exists(program)) return Progress::NotBuilt;
  // A program older than its sources says nothing about them: do not run it, say so.
  if (newer(paths.learner(e), program) || newer(paths.test(e), program)) return Progress::Stale;
  const Child run =
      run_child({program.string()}, Output::Discard, {kListTimeoutS, CheckLimits{}.memory_bytes(), CheckLimits{}.max_processes});
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
    const std::string notes = prepare_workspace(paths, all);  // first use: the working copies
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
    std::istringstream note_lines(notes);
    for (std::string note; std::getline(note_lines, note);) out << wrap_keeping(note, "", "  ");
    return 0;
  });
}

const Exercise* next_unsolved(const std::vector<Exercise>& all, const std::vector<bool>& passes, std::size_t from) {
  for (std::size_t k = 1; k <= all.size(); ++k) {
    const std::size_t i = (from + k) % all.size();
    if (!passes[i]) return &all[i];
  }
  return nullptr;
}

std::vector<bool> passing(const ExercisePaths& paths, const std::vector<Exercise>& all) {
  std::vector<bool> passes(all.size());
  for (std::size_t i = 0; i < all.size(); ++i) passes[i] = progress(paths, all[i]) == Progress::Passes;
  return passes;
}

namespace {

// True when the compiler reported an error in `file` ("<file>:<line>:<col>: error:"): the
// learner's own mistake, which a full build would only repeat.
bool error_in_file(const std::string& output, const std::string& file) {
  std::istringstream lines(strip_colors(output));
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(file + ":", 0) == 0 && line.find(": error:") != std::string::npos) return true;
  return false;
}

// True when a compiler (or linker) of the build stopped because a memory allocation was refused,
// as g++ ("virtual memory exhausted", "cc1plus: out of memory allocating ...") and clang ("LLVM
// ERROR: out of memory") say it.
bool compiler_out_of_memory(const std::string& output) {
  std::istringstream lines(strip_colors(output));
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("virtual memory exhausted", 0) == 0 || line.find(": out of memory allocating ") != std::string::npos ||
        line.rfind("LLVM ERROR: out of memory", 0) == 0)
      return true;
  return false;
}

}  // namespace

Outcome check_one(const ExercisePaths& paths, const std::vector<Exercise>& all, const Exercise& e, std::ostream& out,
                  const CheckLimits& limits, Mode mode, std::vector<bool>& passes) {
  const std::string file = relative(paths, paths.learner(e));
  const std::string head = "attn check " + e.name + ": ";
  const std::string again = mode == Mode::Watch ? "save " + file + " again" : keep("attn check " + e.name) + " again";
  auto verdict = [&](const std::string& text) { out << wrap_keeping(head + text, "", "  "); };

  // The working copy, written from the stub on first use (or after it was deleted); a note when
  // the learner's edited copy comes from an older stub.
  const std::string note = prepare_copy(paths, e);
  if (!note.empty()) out << wrap_keeping(note, "", "  ");
  // Missing still: its stub is missing too. A deleted file would reach the learner as make's
  // "No rule to make target" line.
  if (!fs::exists(paths.learner(e))) {
    if (!passes.empty()) passes[e.number - 1] = false;
    const std::string stub = relative(paths, paths.shipped(e));
    const std::string missing = file + " is missing (the file you edit for " + e.name +
                                ": a file vs not found), and so is its stub " + stub + "; git checkout " + stub +
                                " restores the stub, and ";
    if (mode == Mode::Check) throw SetupError(missing + "attn check " + e.name + " then writes your copy from it");
    verdict(missing + "the next check writes your copy from it.");
    return Outcome::BuildFailed;
  }
  if (!fs::exists(paths.test(e)))
    throw SetupError(relative(paths, paths.test(e)) + " is missing (the checks of " + e.name +
                     ": a file vs not found); it comes with attn: git checkout " + relative(paths, paths.test(e)) +
                     " restores it");

  // Build this exercise's program and nothing else: one small file to compile, one link.
  out << head << "building " << file << "\n";
  out.flush();
  if (!out) return Outcome::ReaderGone;
  // With Makefiles, `cmake --build --target T` first walks every library T depends on: about 1.2 s
  // of CPU with nothing to do. CMake's T/fast target builds T alone. That is right once T has
  // been built in full and its tests have not changed since (the libraries come from the default
  // build); otherwise, and whenever the fast build fails for a reason other than an error in the
  // learner's file, the full build runs.
  const fs::path program = paths.program(e);
  const bool fast = fs::exists(fs::path(paths.build_dir) / "Makefile") && fs::exists(program) &&
                    !newer(paths.test(e), program);
  auto build_target = [&](const std::string& target) {
    RunLimits build_limits;
    build_limits.timeout_s = limits.build_time_limit_s;
    build_limits.memory_bytes = limits.build_memory_bytes();
    build_limits.max_processes = limits.build_max_processes;
    build_limits.gentle_stop = true;
    return run_child({paths.cmake, "--build", paths.build_dir, "--target", target}, Output::Capture, build_limits,
                     nullptr, "the build");
  };
  Child build = build_target(fast ? e.target() + "/fast" : e.target());
  if (fast && !build.timed_out && !build.too_many && build.status != 0 &&
      !error_in_file(build.output, paths.learner(e)) && !compiler_out_of_memory(build.output))
    build = build_target(e.target());
  if (build.timed_out)
    throw SetupError("the build of " + e.target() + " was stopped after " + std::to_string(limits.build_time_limit_s) +
                     " s (--build-time-limit: a build that finishes vs still running); " + file +
                     " and the build tree are as they were, so attn check " + e.name + " starts it again");
  if (build.too_many)
    throw SetupError("the build of " + e.target() + " was stopped: it had more than " +
                     std::to_string(limits.build_max_processes) +
                     " processes running at once (a build that runs one compiler at a time vs a runaway); " + file +
                     " and the build tree are as they were");
  if (build.status != 0) {
    // The compiler's messages, without make's "[ 52%] Built target ..." lines around them.
    std::ostream& err = mode == Mode::Watch ? out : std::cerr;
    std::istringstream lines(build.output);
    for (std::string line; std::getline(lines, line);)
      if (line.find("] Built target ") == std::string::npos) err << line << "\n";
    // A known beginner mistake in the first error gets one line saying what to write instead.
    const std::string hint = compile_hint(first_compiler_error(build.output));
    if (!hint.empty()) err << report::wrap("hint: " + hint, 80, "", "  ");
    if (!passes.empty()) passes[e.number - 1] = false;
    if (compiler_out_of_memory(build.output)) {
      // The limit is per process: what ran out was one compiler (or linker), not the build.
      const std::string mib = std::to_string(limits.build_memory_mib);
      auto why = [&](const std::string& option) {
        return "the compiler ran out of the " + mib + " MiB of memory it may use (" + option +
               "): look for a template that instantiates itself without end, or a very large computation done "
               "while compiling, in " + file;
      };
      if (mode == Mode::Check) throw SetupError("the build of " + e.target() + " failed: " + why("--build-memory-limit " + mib));
      verdict("the build failed: " + why(keep("--build-memory-limit " + mib)) + ". Then " + again + ".");
      return Outcome::BuildFailed;
    }
    if (mode == Mode::Check)
      throw SetupError("the build of " + e.target() + " failed (" + file +
                       ": code that compiles vs the compiler messages above)");
    verdict("the build failed: fix the first error above and " + again + ".");
    return Outcome::BuildFailed;
  }

  // doctest's report, as it comes: which case failed, expected and actual. A program printing
  // in a loop is cut to its beginning and end.
  out << head << "running its checks\n\n";
  out.flush();
  if (!out) return Outcome::ReaderGone;
  // --no-intro: doctest's version banner says nothing to a learner. Its output goes through a
  // pipe here, so its colours are asked for when attn's own output is a terminal.
  std::vector<std::string> argv = {paths.program(e), "--no-intro=true"};
  if (&out == &std::cout && isatty(STDOUT_FILENO) == 1) argv.push_back("--force-colors=true");
  RunLimits run_limits;
  run_limits.timeout_s = limits.time_limit_s;
  run_limits.memory_bytes = limits.memory_bytes();
  run_limits.max_processes = limits.max_processes;
  const Child run = run_child(argv, Output::Capture, run_limits, &out);
  if (run.reader_gone) return Outcome::ReaderGone;
  out << "\n";
  if (!passes.empty()) passes[e.number - 1] = false;
  const std::string unchanged = " " + file + " is as you left it.";
  if (run.too_many) {
    verdict("stopped: it had more than " + std::to_string(limits.max_processes) +
            " processes running at once, where an exercise needs one. Look for fork() or system() in a loop in " +
            file + "." + unchanged);
    return Outcome::Failed;
  }
  const std::string time_limit = std::to_string(limits.time_limit_s);
  const std::string mib = std::to_string(limits.memory_mib);
  // Its memory at the limit when the clock stopped it: an allocation was refused (the next one
  // would not fit) and the program went on without ending, waiting or retrying.
  const bool stalled_at_memory = run.timed_out && limits.memory_bytes() != 0 &&
                                 run.peak_bytes >= limits.memory_bytes() / 10 * 9;
  if (stalled_at_memory) {
    verdict("stopped after " + time_limit + " s (" + keep("--time-limit " + time_limit) + "), still running, with its memory at " +
            std::to_string(run.peak_bytes >> 20) + " of the " + mib + " MiB it may use (" + keep("--memory-limit " + mib) +
            "), so an allocation was most likely refused and the program went on waiting instead of ending. Look for a tensor made with a "
            "size far too large, or one that grows in a loop, in " + file + "." + unchanged);
    return Outcome::Failed;
  }
  if (run.timed_out) {
    verdict("stopped after " + time_limit + " s (" + keep("--time-limit " + time_limit) +
            "), still running: look for a loop that never ends in " + file + "." + unchanged);
    return Outcome::Failed;
  }
  // What the program left running when it ended was stopped; the learner is told, since the
  // report above came from the program alone.
  const std::string left =
      run.left_running == 0 ? ""
      : " It left " + (run.left_running == 1 ? std::string("a process") : std::to_string(run.left_running) + " processes") +
            " running when it ended; attn stopped " + (run.left_running == 1 ? "it." : "them.");
  const bool out_of_memory = limits.memory_bytes() != 0 && run.status != 0 &&
                             run.output.find("bad_alloc") != std::string::npos;
  if (out_of_memory) {
    verdict("stopped: it asked for more than its " + std::to_string(limits.memory_mib) + " MiB of memory (" +
            keep("--memory-limit " + std::to_string(limits.memory_mib)) +
            "). Look for a tensor made with a size far too large, or one that grows in a loop, in " + file + "." +
            left + unchanged);
    return Outcome::Failed;
  }
  if (run.status > 128) {
    const int sig = run.status - 128;
    const std::string cause = crash_cause(sig);
    verdict("the program crashed (signal " + std::to_string(sig) + ", " + strsignal(sig) + ")" +
            (cause.empty() ? ", in " + file + "." : ". " + cause + ", in " + file + ".") + left + unchanged);
    return Outcome::Failed;
  }
  const std::string cut = run.marker.empty() ? "" : " Its output was cut (see above).";
  if (run.status != 0) {
    verdict("not solved yet." + cut + left + " Read the first failure above, " +
            (mode == Mode::Watch ? "edit " + file + " and save it: each save is checked." : "edit " + file + ", and " + again + ".") +
            " Stuck? " + keep("attn hint " + e.name));
    return Outcome::Failed;
  }
  // Solved: only now is the solution worth opening, to compare.
  const std::string compare = " Compare with the solution: " + keep(relative(paths, paths.solution(e))) + ".";
  const std::string solved = "solved, every check passes." + cut + left + compare;
  const Exercise* next = nullptr;
  if (passes.empty()) {
    // Only as far as the first that does not pass: usually the very next one, so a pass costs one
    // more stat (or one short run), not a run of every exercise.
    for (std::size_t k = 1; k < all.size() && !next; ++k) {
      const Exercise& other = all[(e.number - 1 + k) % all.size()];
      if (progress(paths, other) != Progress::Passes) next = &other;
    }
  } else {
    passes[e.number - 1] = true;
    next = next_unsolved(all, passes, e.number - 1);
  }
  if (!next)
    verdict(solved + " That was the last exercise: all " +
            std::to_string(all.size()) + " pass.");
  else if (mode == Mode::Watch)
    verdict(solved);
  else
    verdict(solved + " Next: " + keep("attn check " + next->name) + " (lesson " +
            next->lesson + ")");
  return Outcome::Passed;
}

int check_exercise(const ExercisePaths& paths, const std::string& name, std::ostream& out, const CheckLimits& limits) {
  return guarded([&] {
    const auto all = load_exercises(paths);
    const Exercise& e = lookup(all, name);
    require_build(paths);
    // "Next:" skips the exercises that already pass. Running their programs takes a moment, so
    // it is done only when this one passes, after its check.
    std::vector<bool> passes;  // empty: found by check_one only if this one passes
    const Outcome o = check_one(paths, all, e, out, limits, Mode::Check, passes);
    // A reader that left (attn check NAME | head) ends the check quietly, like a lesson: the
    // program is stopped and nothing more is said. main() sees EPIPE and exits 0.
    if (o == Outcome::ReaderGone) {
      errno = EPIPE;
      return 0;
    }
    return o == Outcome::Passed ? 0 : 1;
  });
}

std::string crash_cause(int signal) {
  switch (signal) {
    case SIGSEGV:
    case SIGBUS:
      return "Often an index past the end of a tensor (one made with the wrong shape, or a loop bound off by "
             "one), or a reference to a tensor that no longer exists";
    case SIGFPE:
      return "An arithmetic fault: an integer division or remainder by zero (a size or a count that came out 0)";
    case SIGABRT:
      return "The program stopped itself: an exception nothing caught, a failed assert, or the C++ library "
             "finding memory written past a tensor's end";
    case SIGILL:
      return "An illegal instruction: a trap the compiler put where code must never run (some compilers "
             "put one at the end of a function that should return a value and has no return)";
    default:
      return "";
  }
}

int print_hint(const ExercisePaths& paths, const std::string& name, std::ostream& out) {
  return guarded([&] {
    const auto all = load_exercises(paths);
    const Exercise& e = lookup(all, name);
    prepare_copy(paths, e);  // the file it names is there to open
    out << wrap_keeping("Hint for " + e.name + ": " + e.writes, "", "  ")
        << "Edit " << relative(paths, paths.learner(e)) << " (lesson " << e.lesson << ").\n\n"
        << report::wrap(e.hint, 80, "  ", "  ") << "\nCheck it with: attn check " << e.name << "\n";
    return 0;
  });
}

// ---- attn reset ---------------------------------------------------------------------------

int reset_exercise(const ExercisePaths& paths, const std::string& name, std::ostream& out) {
  return guarded([&] {
    const auto all = load_exercises(paths);
    const Exercise& e = lookup(all, name);
    const std::string file = relative(paths, paths.learner(e));
    if (!fs::exists(paths.shipped(e)))
      throw SetupError("the stub of " + e.name + " is missing (" + paths.shipped(e) + ": the file vs not found); git checkout " +
                       relative(paths, paths.shipped(e)) + " restores it");
    const std::string shipped = read_all(paths.shipped(e));
    if (fs::exists(paths.learner(e)) && read_all(paths.learner(e)) == shipped) {
      write_file(paths.base(e), shipped);  // the copy is today's stub, whatever its base said
      out << "attn reset " << e.name << ": " << file << " is already as shipped; nothing to do.\n";
      return 0;
    }
    // The learner's version is kept, not thrown away: a reset may be a mistake.
    std::string kept;
    if (fs::exists(paths.learner(e))) {
      const fs::path dir = fs::path(paths.build_dir) / "exercise-resets";
      std::error_code ec;
      fs::create_directories(dir, ec);
      const fs::path copy = dir / e.file;
      write_file(copy.string(), read_all(paths.learner(e)));
      kept = " Your version is saved as " + relative(paths, copy.string()) + ".";
    }
    write_copy_from_stub(paths, e);
    out << wrap_keeping("attn reset " + e.name + ": " + file + " is back as shipped, with its // TODO." + kept +
                            " Check it with " + keep("attn check " + e.name) + ".",
                        "", "  ");
    return 0;
  });
}

}  // namespace attn::cli
