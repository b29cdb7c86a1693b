#include "report/dump_sink.hpp"

#include <fcntl.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "report/dump_files.hpp"
#include "report/staging.hpp"

namespace fs = std::filesystem;

namespace attn::report {

namespace {

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
  const fs::path target(without_trailing_slash(dir));
  // A symbolic link that leads nowhere (a loop, or a target that is gone) or a path attn may not
  // look into: refused now, not after the lesson ran and its dump was staged.
  const bool link = fs::is_symlink(fs::symlink_status(target, ec));
  const bool reached = fs::exists(target, ec);
  if (ec) throw std::runtime_error("cannot be reached: " + ec.message());
  if (link && !reached) throw std::runtime_error("is a symbolic link to nothing (its target is gone)");
  if (reached) {
    if (!fs::is_directory(target, ec)) throw std::runtime_error("exists and is not a directory");
    if (!fs::is_empty(target, ec) && !is_previous_dump(target))
      throw std::runtime_error("exists and is not a dump attn wrote (attn replaces only its own: manifest.json and .npy files)");
  }
  // Missing parents (out/ in --dump out/causal) are created when the dump is staged, so the
  // nearest one that exists must be a directory that takes new ones.
  check_parent_writable(target.string());
}

StagedDump::StagedDump(const Report& report, const std::string& command, const std::string& dir) {
  check_dump_target(dir);
  const fs::path target = fs::absolute(fs::path(without_trailing_slash(dir)));
  const fs::path tmp = staging_path(target.string());
  target_ = target.string();
  tmp_ = tmp.string();
  // What failed, said about DIR: the temporary name would only puzzle the learner. The destructor
  // does not run for a constructor that throws, so this cleans up itself (parents_ as a member).
  auto fail = [&](const std::string& what, const std::string& why) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw std::runtime_error("could not write " + what + ": " + why);
  };
  parents_ = std::make_unique<MadeDirs>(target.parent_path().string());  // throws, having removed what it made
  on_signal_ = RemovedOnSignal::tree(tmp_);  // before the directory exists
  remove_stale_staging(target_);
  std::error_code ec;
  fs::remove_all(tmp, ec);
  if (!fs::create_directory(tmp, ec) || ec) fail(dir, ec ? ec.message() : "cannot create a directory there");
  // The files (dump_files.hpp: the same list --npz stores), written one at a time.
  for (const DumpFile& file : dump_files(report, command)) {
    std::ofstream out(tmp / file.name, std::ios::binary | std::ios::trunc);
    const std::string bytes = file.bytes();
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) fail(file.name, std::strerror(errno ? errno : EIO));
  }
}

void StagedDump::commit() {
  const SignalsHeld held;  // the swap and the old dump's removal, as one step
  move_into_place(tmp_, target_);
  committed_ = true;
  on_signal_.forget();
  parents_->keep();
}

StagedDump::~StagedDump() {
  if (committed_) return;
  std::error_code ec;
  fs::remove_all(tmp_, ec);
}  // then parents_ removes the directories it made, and on_signal_ forgets the temporary one

void write_dump(const Report& report, const std::string& command, const std::string& dir) {
  StagedDump(report, command, dir).commit();
}

}  // namespace attn::report
