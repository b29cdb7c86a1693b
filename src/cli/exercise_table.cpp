#include "cli/exercise_table.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "lesson_kit/options.hpp"
#include "lesson_kit/registry.hpp"

namespace attn::cli {

namespace fs = std::filesystem;

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

}  // namespace

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

ExercisePaths ExercisePaths::for_binary_in(const std::string& running_from) {
  ExercisePaths p = configured();
  std::error_code ec;
  const fs::path here = fs::weakly_canonical(running_from, ec);
  const fs::path built = fs::weakly_canonical(p.build_dir, ec);
  if (here.empty() || here == built) return p;
  // Elsewhere is fine for an installed attn (cmake --install: ~/.local/bin), which follows the
  // clone it was built for. A binary in another build tree (its CMakeCache.txt) or inside another
  // clone was copied or moved with a repository.
  const fs::path beside = here.parent_path();
  const bool clone_here = fs::exists(beside / "lessons" / "exercises" / "exercises.txt", ec);
  if (!clone_here && !fs::exists(here / "CMakeCache.txt", ec)) return p;
  throw UsageError("this attn was built in " + built.string() + " for the exercises of " + p.source_dir +
                   ", but runs from " + here.string() + ": it would build and check " + p.source_dir + "'s files" +
                   (clone_here ? ", not " + beside.string() + "'s. Build this clone's own: cmake -S " + beside.string() +
                                     " -B " + (beside / "build").string() + " && cmake --build " +
                                     (beside / "build").string() + " -j2."
                               : ". Run the attn in " + built.string() + "."));
}

std::string ExercisePaths::table() const { return source_dir + "/lessons/exercises/exercises.txt"; }
std::string ExercisePaths::learner(const Exercise& e) const { return source_dir + "/lessons/exercises/" + e.file; }
std::string ExercisePaths::solution(const Exercise& e) const {
  return source_dir + "/lessons/exercises/solutions/" + e.file;
}
std::string ExercisePaths::shipped(const Exercise& e) const {
  return source_dir + "/lessons/exercises/shipped/" + e.file;
}
std::string ExercisePaths::base(const Exercise& e) const { return source_dir + "/lessons/exercises/.base/" + e.file; }
std::string ExercisePaths::test(const Exercise& e) const { return source_dir + "/tests/exercises/test_" + e.file; }
std::string ExercisePaths::program(const Exercise& e) const { return bin_dir + "/" + e.target(); }

std::vector<Exercise> parse_exercises(std::istream& in, const std::string& origin) {
  std::vector<Exercise> all;
  std::size_t row_line = 0;  // the line of the last row, for "has no hint"
  auto finish_row = [&] {
    if (!all.empty() && all.back().hint.empty())
      throw std::runtime_error(origin + ":" + std::to_string(row_line) + ": exercise '" + all.back().name +
                               "' has no hint (write it on the indented lines below its row)");
  };
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    const std::string t = trim(line);
    const auto where = origin + ":" + std::to_string(number) + ": ";
    if (t.empty()) continue;
    if (line[0] == ' ' || line[0] == '\t') {
      // A line of the hint of the row above: any text at all ('|', ';', '#' included), joined
      // to the lines before it with one space.
      if (all.empty()) throw std::runtime_error(where + "an indented hint line before the first row");
      std::string& hint = all.back().hint;
      hint += (hint.empty() ? "" : " ") + t;
      continue;
    }
    if (t[0] == '#') continue;
    finish_row();
    // name | lesson | file | what you write: the first three '|' split, so the last field may hold one.
    std::vector<std::string> fields;
    std::size_t from = 0;
    for (int k = 0; k < 3; ++k) {
      const auto bar = t.find('|', from);
      if (bar == std::string::npos) break;
      fields.push_back(trim(t.substr(from, bar - from)));
      from = bar + 1;
    }
    fields.push_back(trim(t.substr(from)));
    if (fields.size() != 4)
      throw std::runtime_error(where + "expected 4 fields separated by '|' (name | lesson | file | what you write), "
                               "then the hint on the indented lines below, got " + std::to_string(fields.size()));
    for (const auto& f : fields)
      if (f.empty()) throw std::runtime_error(where + "a field is empty");
    Exercise e;
    e.number = all.size() + 1;
    e.name = fields[0];
    e.lesson = fields[1];
    e.file = fields[2];
    e.writes = fields[3];
    if (e.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
      throw std::runtime_error(where + "name '" + e.name + "' may hold only a-z, 0-9 and '-'");
    if (e.file.size() <= 4 || e.file.substr(e.file.size() - 4) != ".cpp" ||
        e.stem().find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
      throw std::runtime_error(where + "file '" + e.file + "' must be <a-z, 0-9, _>.cpp");
    if (find_exercise(all, e.name)) throw std::runtime_error(where + "exercise '" + e.name + "' appears twice");
    all.push_back(std::move(e));
    row_line = number;
  }
  finish_row();
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

// The exercise the learner named, or a UsageError with a suggestion (exit status 2).
const Exercise& lookup(const std::vector<Exercise>& all, const std::string& name) {
  if (const Exercise* e = find_exercise(all, name)) return *e;
  const std::string near = closest_exercise(all, name);
  if (!near.empty()) throw UsageError("unknown exercise '" + name + "' (did you mean '" + near + "'?)");
  throw UsageError("unknown exercise '" + name + "' (see attn exercises for the list)");
}

}  // namespace attn::cli
