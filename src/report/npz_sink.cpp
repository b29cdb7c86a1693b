#include "report/npz_sink.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "report/dump_files.hpp"
#include "report/staging.hpp"
#include "report/zip_store.hpp"

namespace fs = std::filesystem;

namespace attn::report {

void check_npz_target(const std::string& path) {
  // "out/" names a directory whether or not it exists yet: the archive needs a file name.
  if (without_trailing_slash(path) != path) throw std::runtime_error("ends in '/', so it names a directory; give a file name such as out/causal.npz");
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st)) throw std::runtime_error("is a directory; give a file name such as " + (fs::path(path) / "causal.npz").string());
  if (fs::exists(st) && !fs::is_regular_file(st)) throw std::runtime_error("exists and is not a regular file");
  check_parent_writable(path);
}

StagedNpz::StagedNpz(const Report& report, const std::string& command, const std::string& path) {
  check_npz_target(path);
  const auto files = dump_files(report, command);
  // Zip32's limits, from the sizes alone, before anything is written. The lessons' size limits do
  // not keep an archive under 4 GiB by themselves (a printed tensor may hold 2^24 values, 64 MiB,
  // and a run at those sizes shows many tensors), so this is checked, not assumed.
  std::vector<ZipMemberSize> sizes;
  for (const DumpFile& f : files) sizes.emplace_back(f.name, f.size());
  check_zip_store(sizes);

  const fs::path target = fs::absolute(fs::path(path));
  const fs::path tmp = target.parent_path() / ("." + target.filename().string() + ".tmp-" + std::to_string(::getpid()));
  target_ = target.string();
  tmp_ = tmp.string();
  made_parents_ = make_parents(target_);  // throws, having removed what it made
  // The destructor does not run for a constructor that throws, so this cleans up itself. What
  // failed is said about PATH or the member: the temporary name would only puzzle the learner.
  auto fail = [](const std::string& what) {
    throw std::runtime_error("could not write " + what + ": " + std::strerror(errno ? errno : EIO));
  };
  try {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(path);
    ZipStoreWriter zip(out);
    for (const DumpFile& f : files) {
      zip.add(f.name, f.bytes());  // one member's bytes at a time
      if (!out) fail(f.name);
    }
    zip.finish();
    out.close();
    if (!out) fail(path);
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp, ec);
    remove_if_empty(made_parents_);
    throw;
  }
}

void StagedNpz::commit() {
  // rename(2) replaces a file at `target_` atomically: a reader sees the old archive or the new.
  std::error_code ec;
  fs::rename(tmp_, target_, ec);
  if (ec) throw std::runtime_error("could not move the archive into place: " + ec.message());
  committed_ = true;
}

StagedNpz::~StagedNpz() {
  if (committed_) return;
  std::error_code ec;
  fs::remove(tmp_, ec);
  remove_if_empty(made_parents_);
}

void write_npz(const Report& report, const std::string& command, const std::string& path) {
  StagedNpz(report, command, path).commit();
}

}  // namespace attn::report
