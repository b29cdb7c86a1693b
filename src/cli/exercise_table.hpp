// The exercise table: lessons/exercises/exercises.txt, read into Exercise rows, and where each
// exercise's files are (ExercisePaths).
//
// exercises.txt is the one table of exercises. CMake reads it to make one small program per
// exercise (tests/exercises/CMakeLists.txt); these functions read it at run time from the source
// tree this attn was configured from. The list, the hints and the build targets therefore come
// from the same lines and cannot drift apart.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

#include "cli/subprocess.hpp"  // SetupError

namespace attn::cli {

struct Exercise {
  std::size_t number = 0;  // 1-based, the teaching order
  std::string name;        // what the learner types: "softmax-rows"
  std::string lesson;      // the lesson it practises, as `attn list` names it
  std::string file;        // its files' name: "softmax_rows.cpp" (stub, working copy, solution)
  std::string writes;      // one line: what the learner writes
  std::string hint;        // its lines in the table joined with single spaces; wrapped when printed

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
  std::string learner(const Exercise& e) const;     // lessons/exercises/<file>: the learner's working copy (git-ignored)
  std::string solution(const Exercise& e) const;    // lessons/exercises/solutions/<file>
  std::string shipped(const Exercise& e) const;     // lessons/exercises/shipped/<file>: the stub, never edited
  std::string base(const Exercise& e) const;        // lessons/exercises/.base/<file>: the stub the copy was written from
  std::string test(const Exercise& e) const;        // tests/exercises/test_<file>
  std::string program(const Exercise& e) const;     // <bin_dir>/exercise_<stem>
};

// The rows of a table, numbered in order. A row is one line, `name | lesson | file | what you
// write` (only the first three '|' split: the last field may hold more), and its hint the
// indented lines below it, any text at all, joined with single spaces. Lines starting with '#'
// and blank lines are skipped. Throws std::runtime_error("<origin>:<line>: ...") for a row
// without four non-empty fields or without a hint, and for a hint line before the first row.
std::vector<Exercise> parse_exercises(std::istream& in, const std::string& origin);

// The table at paths.table(). Throws SetupError when it is missing or malformed.
std::vector<Exercise> load_exercises(const ExercisePaths& paths);

// nullptr when no exercise has that name.
const Exercise* find_exercise(const std::vector<Exercise>& all, const std::string& name);

// The nearest name within 3 edits, or "" when none is close.
std::string closest_exercise(const std::vector<Exercise>& all, const std::string& name);

// The exercise the learner named, or a UsageError with a suggestion (exit status 2).
const Exercise& lookup(const std::vector<Exercise>& all, const std::string& name);

}  // namespace attn::cli
