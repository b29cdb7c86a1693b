#include "report/dump_sink.hpp"

#include <unistd.h>

#include <cerrno>
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

}  // namespace

void check_dump_target(const std::string& dir) {
  std::error_code ec;
  const fs::path target = without_trailing_slash(dir);
  if (fs::exists(target, ec)) {
    if (!fs::is_directory(target, ec)) throw std::runtime_error("exists and is not a directory");
    if (!fs::is_empty(target, ec)) throw std::runtime_error("exists and is not empty (attn never overwrites a dump)");
  }
  const fs::path parent = fs::absolute(target, ec).parent_path();
  if (!fs::is_directory(parent, ec)) throw std::runtime_error("its parent directory " + parent.string() + " does not exist");
  // The dump is staged beside DIR, so the parent must take a new directory.
  if (::access(parent.c_str(), W_OK | X_OK) != 0)
    throw std::runtime_error("its parent directory " + parent.string() + " is not writable");
}

StagedDump::StagedDump(const Report& report, const std::string& command, const std::string& dir) {
  check_dump_target(dir);
  const fs::path target = fs::absolute(without_trailing_slash(dir));
  const fs::path tmp = target.parent_path() / ("." + target.filename().string() + ".tmp-" + std::to_string(::getpid()));
  target_ = target.string();
  tmp_ = tmp.string();
  // What failed, said about DIR: the temporary name would only puzzle the learner.
  auto fail = [&](const std::string& what, const std::string& why) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw std::runtime_error("could not write " + what + ": " + why);
  };
  std::error_code ec;
  fs::remove_all(tmp, ec);
  if (!fs::create_directory(tmp, ec) || ec) fail(dir, ec ? ec.message() : "cannot create a directory there");
  for (const Stage& s : report.stages())
    for (std::size_t i = 0; i < s.items.size(); ++i)
      if (const auto* t = std::get_if<TensorItem>(&s.items[i])) {
        const std::string name = tensor_file_name(s, i);
        try {
          write_npy((tmp / name).string(), t->shape, t->values.data());
        } catch (const std::exception&) {
          fail(name, std::strerror(errno ? errno : EIO));
        }
      }
  std::ofstream manifest(tmp / "manifest.json", std::ios::binary);
  manifest << manifest_json(report.header, command, report.stages(), false);
  manifest.close();
  if (!manifest) fail("manifest.json", std::strerror(errno ? errno : EIO));
}

void StagedDump::commit() {
  std::error_code ec;
  const fs::path target(target_);
  if (fs::exists(target, ec)) fs::remove(target, ec);  // an empty directory, checked before
  fs::rename(tmp_, target, ec);
  if (ec) throw std::runtime_error("could not move the dump into place: " + ec.message());
  committed_ = true;
}

StagedDump::~StagedDump() {
  if (committed_) return;
  std::error_code ec;
  fs::remove_all(tmp_, ec);
}

void write_dump(const Report& report, const std::string& command, const std::string& dir) {
  StagedDump(report, command, dir).commit();
}

}  // namespace attn::report
