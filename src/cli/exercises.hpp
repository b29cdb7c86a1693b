// The exercise commands: `attn exercises`, `attn check NAME`, `attn hint NAME`, `attn reset NAME`,
// `attn watch [NAME]`.
//
// lessons/exercises/exercises.txt is the one table of exercises. CMake reads it to make one
// small program per exercise (tests/exercises/CMakeLists.txt); these functions read it at run
// time from the source tree this attn was configured from. The list, the hints and the build
// targets therefore come from the same lines and cannot drift apart.
//
// No CLI11 here: main.cpp parses the command line and calls these. An unknown exercise name
// throws UsageError (exit 2, like an unknown lesson); a missing build tree or table prints one
// `attn: error: ...` line and returns 1.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace attn::cli {

struct Exercise {
  std::size_t number = 0;  // 1-based, the teaching order
  std::string name;        // what the learner types: "softmax-rows"
  std::string lesson;      // the lesson it practises, as `attn list` names it
  std::string file;        // the learner file in lessons/exercises/: "softmax_rows.cpp"
  std::string writes;      // one line: what the learner writes
  std::string hint;

  std::string stem() const;    // "softmax_rows"
  std::string target() const;  // the CMake target `attn check` builds: "exercise_softmax_rows"
};

// Where things are, as CMake baked them in (ExercisePaths::configured()). Tests may point
// them elsewhere.
struct ExercisePaths {
  std::string source_dir;  // the repository
  std::string build_dir;   // the build tree attn was built in
  std::string bin_dir;     // where the exercise programs land; empty when the build has no tests
  std::string cmake;       // the cmake that configured the build

  static ExercisePaths configured();
  // configured(), refused (UsageError) when this attn runs from another build tree or from inside
  // another clone (a copied or moved repository): it would build and check the files of the clone
  // CMake configured, not those beside it. An installed attn (no build tree, no clone around it)
  // follows the clone it was built for. `running_from`: the directory of the running
  // binary (/proc/self/exe), given so that a test can name another.
  static ExercisePaths for_binary_in(const std::string& running_from);

  std::string table() const;                        // lessons/exercises/exercises.txt
  std::string learner(const Exercise& e) const;     // lessons/exercises/<file>
  std::string solution(const Exercise& e) const;    // lessons/exercises/solutions/<file>
  std::string shipped(const Exercise& e) const;     // lessons/exercises/shipped/<file>: what attn reset restores
  std::string test(const Exercise& e) const;        // tests/exercises/test_<file>
  std::string program(const Exercise& e) const;     // <bin_dir>/exercise_<stem>
};

// The rows of a table, numbered in order. Throws std::runtime_error("<origin>:<line>: ...")
// for a row without exactly five non-empty fields.
std::vector<Exercise> parse_exercises(std::istream& in, const std::string& origin);

// The table at paths.table(). Throws std::runtime_error when it is missing or malformed.
std::vector<Exercise> load_exercises(const ExercisePaths& paths);

// nullptr when no exercise has that name.
const Exercise* find_exercise(const std::vector<Exercise>& all, const std::string& name);

// The nearest name within 3 edits, or "" when none is close.
std::string closest_exercise(const std::vector<Exercise>& all, const std::string& name);

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

// attn watch [NAME]: checks the first exercise that does not pass (or NAME), then re-checks it
// each time its file is saved (inotify on lessons/exercises/), and moves on to the next that does
// not pass once it does. Ends when every exercise passes (0), on q or Ctrl-D typed at a terminal
// (0), or on SIGINT/SIGTERM while waiting (128 + the signal, after one line of progress). Input
// that is not a terminal is read for the same commands; its end only stops the reading.
int watch_exercises(const ExercisePaths& paths, const std::string& start, std::ostream& out,
                    const CheckLimits& limits = {});

// attn hint NAME: the hint, never the solution.
int print_hint(const ExercisePaths& paths, const std::string& name, std::ostream& out);

// What usually makes an exercise program die by `signal`, in a sentence for the learner ("" when
// nothing useful can be said): SIGSEGV/SIGBUS an index past a tensor's end, SIGFPE an integer
// division by zero, SIGABRT an uncaught exception or failed assert, SIGILL a compiler's trap.
std::string crash_cause(int signal);

}  // namespace attn::cli
