// The exercise commands: `attn exercises`, `attn check NAME`, `attn hint NAME`, `attn reset NAME`
// (`attn watch` is exercise_watch.hpp, built on check_one below).
//
// No CLI11 here: main.cpp parses the command line and calls these. An unknown exercise name
// throws UsageError (exit 2, like an unknown lesson); a missing build tree or table prints one
// `attn: error: ...` line and returns 1.
#pragma once

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "cli/exercise_table.hpp"
#include "cli/subprocess.hpp"

namespace attn::cli {

// What `attn exercises` says about one exercise, found without building anything.
enum class Progress {
  NotBuilt,  // no program yet: never checked
  Stale,     // the learner file or its tests changed after the last build
  Passes,    // the up-to-date program ran just now and every check passed
  Fails,     // ... and some check failed
  Crashes,   // ... and it died from a signal
  TimedOut,  // ... and it did not finish in time
};
Progress progress(const ExercisePaths& paths, const Exercise& e);
const char* progress_text(Progress p);

// attn exercises: the table with progress. Returns the exit status.
int list_exercises(const ExercisePaths& paths, std::ostream& out);

// What attn check allows the code it builds and runs (attn check --time-limit, --memory-limit,
// --build-time-limit, --build-memory-limit). An exercise's checks take well under a second and a
// few megabytes; its build, one compiler at a time, well under a gigabyte.
struct CheckLimits {
  int time_limit_s = 10;           // the program, wall clock (its checks take well under 1 s)
  std::uint64_t memory_mib = 1024; // the program's address space (not set in a sanitizer build)
  int build_time_limit_s = 600;    // cmake --build: a first build compiles the libraries too
  std::uint64_t build_memory_mib = 2048;  // the address space of each process of the build (the compiler)
  std::size_t max_processes = 256;        // the program and what it starts, running at once
  std::size_t build_max_processes = 1024; // the build's processes running at once
  std::uint64_t memory_bytes() const;  // 0 when no limit can be set (AddressSanitizer builds)
  std::uint64_t build_memory_bytes() const { return build_memory_mib << 20; }
};

// attn check NAME: builds the exercise's program alone (stopped after build_time_limit_s, each of
// its processes within build_memory_mib), runs it in its own process group under the time, memory
// and process limits, passes its output on cut to the first 16 KiB and the last 4 KiB (saying how
// much was cut), then one line of verdict naming what happened. The output is read until the
// program ends, not until every process that holds it open does; whatever the build or the
// program started (even in a new session) is stopped before attn check returns. 0 when every
// check passes; 0 and nothing more when the reader of `out` went away.
int check_exercise(const ExercisePaths& paths, const std::string& name, std::ostream& out,
                   const CheckLimits& limits = {});

// attn reset NAME: puts the shipped stub (lessons/exercises/shipped/<file>) back in place of the
// learner's file, after saving the learner's version in <build>/exercise-resets/<file>.
int reset_exercise(const ExercisePaths& paths, const std::string& name, std::ostream& out);

// attn hint NAME: the hint, never the solution.
int print_hint(const ExercisePaths& paths, const std::string& name, std::ostream& out);

// What usually makes an exercise program die by `signal`, in a sentence for the learner ("" when
// nothing useful can be said): SIGSEGV/SIGBUS an index past a tensor's end, SIGFPE an integer
// division by zero, SIGABRT an uncaught exception or failed assert, SIGILL a compiler's trap.
std::string crash_cause(int signal);

// ---- shared with attn watch (exercise_watch.cpp) ------------------------------------------

enum class Outcome { Passed, Failed, BuildFailed, ReaderGone };
enum class Mode { Check, Watch };

// Builds and runs one exercise, printing what attn check prints; the verdict's last words differ
// between attn check (run it again) and attn watch (save the file again). `passes` is updated for
// this exercise and read for "Next:"; when it is empty, the other exercises' progress is found
// (by running their up-to-date programs) only once this one passes, and only up to the first
// that does not pass.
Outcome check_one(const ExercisePaths& paths, const std::vector<Exercise>& all, const Exercise& e, std::ostream& out,
                  const CheckLimits& limits, Mode mode, std::vector<bool>& passes);

// The next exercise to work on after `from` (0-based), in teaching order and wrapping round to
// the beginning: the first that does not pass. nullptr when every one passes. `passes[i]` is
// what is known of exercise i.
const Exercise* next_unsolved(const std::vector<Exercise>& all, const std::vector<bool>& passes, std::size_t from);

// Which exercises pass now, as attn exercises sees them (up-to-date programs run just now).
std::vector<bool> passing(const ExercisePaths& paths, const std::vector<Exercise>& all);

// The build tree must exist (attn check builds in it) and have exercise programs configured;
// SetupError otherwise.
void require_build(const ExercisePaths& paths);

// "lessons/exercises/rnn_step.cpp": paths as a learner at the repository root types them.
std::string relative(const ExercisePaths& paths, const std::string& path);

// A command the wrap must not break: keep() turns its spaces into a byte wrap() does not split
// at, and wrap_keeping() wraps at 80 columns and turns them back.
std::string keep(std::string text);
std::string wrap_keeping(const std::string& text, const std::string& first, const std::string& rest);

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

}  // namespace attn::cli
