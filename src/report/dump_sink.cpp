#include "report/dump_sink.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "io/npy.hpp"
#include "report/manifest.hpp"

namespace fs = std::filesystem;

namespace attn::report {

namespace {

// "out/" and "out//" name the directory "out": without this, the path's last component is empty
// and the dump would be staged beside a parent that does not exist.
fs::path without_trailing_slash(const std::string& dir) {
  fs::path p(dir);
  while (!p.has_filename() && p.has_relative_path()) p = p.parent_path();
  return p;
}

// True for a directory attn's --dump wrote: manifest.json in attn's format and .npy files, nothing
// else. Only such a directory is replaced; anything else a learner keeps there is refused.
bool is_previous_dump(const fs::path& dir) {
  std::error_code ec;
  bool manifest = false;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path name = it->path().filename();
    if (!it->is_regular_file(ec) || it->is_symlink(ec)) return false;
    if (name == "manifest.json") {
      std::ifstream in(it->path(), std::ios::binary);
      std::string head(64, '\0');
      in.read(&head[0], static_cast<std::streamsize>(head.size()));
      manifest = head.find("\"format\": \"attn-manifest-") != std::string::npos;
    } else if (name.extension() != ".npy") {
      return false;
    }
  }
  return !ec && manifest;
}

// The nearest ancestor of `p` (itself included) that exists.
fs::path nearest_existing(fs::path p) {
  std::error_code ec;
  while (p.has_relative_path() && !fs::exists(p, ec)) p = p.parent_path();
  return p;
}

// Removes the directories of `made` (outermost first) that are still empty, innermost first.
void remove_if_empty(const std::vector<std::string>& made) {
  std::error_code ec;
  for (auto it = made.rbegin(); it != made.rend(); ++it) fs::remove(*it, ec);  // fails, harmlessly, if not empty
}

// Puts the staged dump at `target`. A previous dump there is swapped with the new one in a single
// rename (renameat2 with RENAME_EXCHANGE), so `target` always holds one whole dump, the old or the
// new, and the old one, now at `staged`, is deleted. A filesystem that cannot swap gets the old
// dump moved aside first (and put back if the new one cannot be moved in).
void move_into_place(const fs::path& staged, const fs::path& target) {
  std::error_code ec;
  if (fs::exists(target, ec) && !fs::is_empty(target, ec)) {
    if (!is_previous_dump(target)) throw std::runtime_error("exists and is not a dump attn wrote");  // changed meanwhile
    if (::renameat2(AT_FDCWD, staged.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
      fs::remove_all(staged, ec);  // the previous dump, swapped out
      return;
    }
    const fs::path aside = staged.string() + "-previous";
    fs::rename(target, aside, ec);
    if (ec) throw std::runtime_error("could not move the previous dump aside: " + ec.message());
    fs::rename(staged, target, ec);
    if (ec) {
      std::error_code back;
      fs::rename(aside, target, back);
      throw std::runtime_error("could not move the dump into place: " + ec.message());
    }
    fs::remove_all(aside, ec);
    return;
  }
  if (fs::exists(target, ec)) fs::remove(target, ec);  // an empty directory, checked before
  fs::rename(staged, target, ec);
  if (ec) throw std::runtime_error("could not move the dump into place: " + ec.message());
}

}  // namespace

void check_dump_target(const std::string& dir) {
  std::error_code ec;
  const fs::path target = without_trailing_slash(dir);
  if (fs::exists(target, ec)) {
    if (!fs::is_directory(target, ec)) throw std::runtime_error("exists and is not a directory");
    if (!fs::is_empty(target, ec) && !is_previous_dump(target))
      throw std::runtime_error("exists and is not a dump attn wrote (attn replaces only its own: manifest.json and .npy files)");
  }
  // Missing parents (out/ in --dump out/causal) are created when the dump is staged, so the
  // nearest one that exists must be a directory that takes new ones.
  const fs::path parent = nearest_existing(fs::absolute(target, ec).parent_path());
  if (!fs::is_directory(parent, ec)) throw std::runtime_error(parent.string() + " is not a directory");
  if (::access(parent.c_str(), W_OK | X_OK) != 0)
    throw std::runtime_error("its parent directory " + parent.string() + " is not writable");
}

StagedDump::StagedDump(const Report& report, const std::string& command, const std::string& dir) {
  check_dump_target(dir);
  const fs::path target = fs::absolute(without_trailing_slash(dir));
  const fs::path tmp = target.parent_path() / ("." + target.filename().string() + ".tmp-" + std::to_string(::getpid()));
  target_ = target.string();
  tmp_ = tmp.string();
  // What failed, said about DIR: the temporary name would only puzzle the learner. The destructor
  // does not run for a constructor that throws, so this cleans up itself.
  auto fail = [&](const std::string& what, const std::string& why) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    remove_if_empty(made_parents_);
    throw std::runtime_error("could not write " + what + ": " + why);
  };
  std::error_code ec;
  for (fs::path p = target.parent_path(); p.has_relative_path() && !fs::exists(p, ec); p = p.parent_path())
    made_parents_.insert(made_parents_.begin(), p.string());
  for (const auto& p : made_parents_)
    if (!fs::create_directory(p, ec) && ec) fail(p, ec.message());
  fs::remove_all(tmp, ec);
  if (!fs::create_directory(tmp, ec) || ec) fail(dir, ec ? ec.message() : "cannot create a directory there");
  // A shapes-only run kept no values (Report::keep_values): its dump is the manifest alone, with
  // every name and shape, and no .npy file that would have to pretend to hold numbers.
  const bool values = report.keep_values;
  for (const Stage& s : report.stages())
    for (std::size_t i = 0; values && i < s.items.size(); ++i)
      if (const auto* t = std::get_if<TensorItem>(&s.items[i])) {
        const std::string name = tensor_file_name(s, i);
        try {
          write_npy((tmp / name).string(), t->shape, t->values.data());
        } catch (const std::exception&) {
          fail(name, std::strerror(errno ? errno : EIO));
        }
      }
  std::ofstream manifest(tmp / "manifest.json", std::ios::binary);
  manifest << manifest_json(report.header, command, report.stages(), values ? ValueMode::Files : ValueMode::None);
  manifest.close();
  if (!manifest) fail("manifest.json", std::strerror(errno ? errno : EIO));
}

void StagedDump::commit() {
  move_into_place(tmp_, target_);
  committed_ = true;
}

StagedDump::~StagedDump() {
  if (committed_) return;
  std::error_code ec;
  fs::remove_all(tmp_, ec);
  remove_if_empty(made_parents_);
}

void write_dump(const Report& report, const std::string& command, const std::string& dir) {
  StagedDump(report, command, dir).commit();
}

}  // namespace attn::report
