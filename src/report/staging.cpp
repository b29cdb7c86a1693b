#include "report/staging.hpp"

#include <unistd.h>

#include <filesystem>
#include <stdexcept>

namespace fs = std::filesystem;

namespace attn::report {

namespace {

// The nearest ancestor of `p` (itself included) that exists.
fs::path nearest_existing(fs::path p) {
  std::error_code ec;
  while (p.has_relative_path() && !fs::exists(p, ec)) p = p.parent_path();
  return p;
}

}  // namespace

std::string without_trailing_slash(const std::string& path) {
  fs::path p(path);
  while (!p.has_filename() && p.has_relative_path()) p = p.parent_path();
  return p.string();
}

void check_parent_writable(const std::string& target) {
  std::error_code ec;
  const fs::path parent = nearest_existing(fs::absolute(fs::path(target), ec).parent_path());
  if (!fs::is_directory(parent, ec)) throw std::runtime_error(parent.string() + " is not a directory");
  if (::access(parent.c_str(), W_OK | X_OK) != 0)
    throw std::runtime_error("its parent directory " + parent.string() + " is not writable");
}

std::vector<std::string> make_parents(const std::string& target) {
  std::vector<std::string> made;
  std::error_code ec;
  for (fs::path p = fs::path(target).parent_path(); p.has_relative_path() && !fs::exists(p, ec); p = p.parent_path())
    made.insert(made.begin(), p.string());
  for (std::size_t i = 0; i < made.size(); ++i)
    if (!fs::create_directory(made[i], ec) && ec) {
      const std::string what = "could not write " + made[i] + ": " + ec.message();
      made.resize(i);
      remove_if_empty(made);
      throw std::runtime_error(what);
    }
  return made;
}

void remove_if_empty(const std::vector<std::string>& made) {
  std::error_code ec;
  for (auto it = made.rbegin(); it != made.rend(); ++it) fs::remove(*it, ec);  // fails, harmlessly, if not empty
}

std::string staging_path(const std::string& target) {
  const fs::path t(target);
  return (t.parent_path() / ("." + t.filename().string() + ".tmp-" + std::to_string(::getpid()))).string();
}

void check_file_target(const std::string& path, const std::string& example) {
  // "out/" names a directory whether or not it exists yet: the output needs a file name.
  if (without_trailing_slash(path) != path)
    throw std::runtime_error("ends in '/', so it names a directory; give a file name such as out/" + example);
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st)) throw std::runtime_error("is a directory; give a file name such as " + (fs::path(path) / example).string());
  if (fs::exists(st) && !fs::is_regular_file(st)) throw std::runtime_error("exists and is not a regular file");
  check_parent_writable(path);
}

StagedFile::StagedFile(const std::string& path)
    : target_(fs::absolute(fs::path(path)).string()), tmp_(staging_path(target_)), made_parents_(make_parents(target_)) {}

void StagedFile::commit(const std::string& what) {
  std::error_code ec;
  fs::rename(tmp_, target_, ec);
  if (ec) throw std::runtime_error("could not move the " + what + " into place: " + ec.message());
  committed_ = true;
}

StagedFile::~StagedFile() {
  if (committed_) return;
  std::error_code ec;
  fs::remove(tmp_, ec);
  remove_if_empty(made_parents_);
}

}  // namespace attn::report
