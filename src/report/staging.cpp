#include "report/staging.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
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

MadeDirs::MadeDirs(const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> missing;
  for (fs::path p = fs::absolute(fs::path(without_trailing_slash(dir)), ec); p.has_relative_path() && !fs::exists(p, ec);
       p = p.parent_path())
    missing.insert(missing.begin(), p.string());
  if (missing.empty()) return;
  on_signal_ = RemovedOnSignal::empty_dirs(missing.front(), missing.back());  // before the first is made
  for (const std::string& d : missing) {
    if (!fs::create_directory(d, ec) && ec) {
      const std::string what = "could not write " + d + ": " + ec.message();
      remove();
      throw std::runtime_error(what);
    }
    made_.push_back(d);
  }
}

void MadeDirs::keep() {
  kept_ = true;
  on_signal_.forget();
}

void MadeDirs::remove() {
  std::error_code ec;
  for (auto it = made_.rbegin(); it != made_.rend(); ++it) fs::remove(*it, ec);  // fails, harmlessly, if not empty
  on_signal_.forget();
}

std::string staging_path(const std::string& target) {
  const fs::path t(target);
  return (t.parent_path() / ("." + t.filename().string() + ".tmp-" + std::to_string(::getpid()))).string();
}

void remove_stale_staging(const std::string& target) {
  const fs::path t(fs::absolute(fs::path(target)));
  const std::string prefix = "." + t.filename().string() + ".tmp-";
  std::error_code ec;
  std::vector<fs::path> stale;
  for (fs::directory_iterator it(t.parent_path(), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    // A pid as getpid() writes it: decimal digits, no sign, no leading zero, within pid_t.
    if (digits.size() > 9 || digits[0] == '0' || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (pid == ::getpid()) continue;
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive, or someone else's (EPERM)
    stale.push_back(it->path());
  }
  for (const fs::path& p : stale) fs::remove_all(p, ec);
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
    : target_(fs::absolute(fs::path(path)).string()),
      tmp_(staging_path(target_)),
      parents_(fs::path(target_).parent_path().string()),
      on_signal_(RemovedOnSignal::tree(tmp_)) {
  remove_stale_staging(target_);
}

void StagedFile::commit(const std::string& what) {
  std::error_code ec;
  fs::rename(tmp_, target_, ec);
  if (ec) throw std::runtime_error("could not move the " + what + " into place: " + ec.message());
  committed_ = true;
  on_signal_.forget();
  parents_.keep();
}

StagedFile::~StagedFile() {
  if (committed_) return;
  std::error_code ec;
  fs::remove(tmp_, ec);
  on_signal_.forget();
}  // then parents_ removes the directories it made

}  // namespace attn::report
