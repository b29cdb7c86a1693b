#include "cli/exercise_workspace.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace attn::cli {

namespace fs = std::filesystem;

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SetupError("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  const std::string tmp = path + ".attn-tmp";
  {
    std::ofstream outf(tmp, std::ios::binary | std::ios::trunc);
    if (!outf || !(outf << text) || !outf.flush()) throw SetupError("cannot write " + tmp);
  }
  fs::rename(tmp, path, ec);
  if (ec) throw SetupError("cannot replace " + path + ": " + ec.message());
}

void write_copy_from_stub(const ExercisePaths& paths, const Exercise& e) {
  const std::string stub = read_all(paths.shipped(e));
  write_file(paths.base(e), stub);
  write_file(paths.learner(e), stub);
}

std::string prepare_copy(const ExercisePaths& paths, const Exercise& e) {
  std::error_code ec;
  if (!fs::exists(paths.shipped(e), ec)) return "";
  if (!fs::exists(paths.learner(e), ec)) {
    write_copy_from_stub(paths, e);  // first use, or a deleted copy
    return "";
  }
  const std::string stub = read_all(paths.shipped(e));
  if (!fs::exists(paths.base(e), ec)) {
    // A copy written before bases were kept, or the .base directory removed: take it as made
    // from the stub of today, so that the next change to the stub is noticed.
    write_file(paths.base(e), stub);
    return "";
  }
  const std::string base = read_all(paths.base(e));
  if (base == stub) return "";
  const std::string copy = read_all(paths.learner(e));
  if (copy == base || copy == stub) {
    // Nothing of the learner's in it: the new stub replaces it (and is its base from now on).
    if (copy != stub) write_file(paths.learner(e), stub);
    write_file(paths.base(e), stub);
    return "";
  }
  return "note: the stub of " + e.name + " (lessons/exercises/shipped/" + e.file +
         ") has changed since your copy was written; your copy is as you left it, and attn reset " + e.name +
         " writes the new stub (keeping yours in the build tree's exercise-resets/).";
}

std::string prepare_workspace(const ExercisePaths& paths, const std::vector<Exercise>& all) {
  std::string notes;
  for (const Exercise& e : all) {
    const std::string note = prepare_copy(paths, e);
    if (!note.empty()) notes += note + "\n";
  }
  return notes;
}

}  // namespace attn::cli
