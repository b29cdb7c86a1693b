#include "report/npz_sink.hpp"

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

void check_npz_target(const std::string& path) { check_file_target(path, "causal.npz"); }

StagedNpz::StagedNpz(const Report& report, const std::string& command, const std::string& path) {
  check_npz_target(path);
  const auto files = dump_files(report, command);
  // Zip32's limits, from the sizes alone, before anything is written. The lessons' size limits do
  // not keep an archive under 4 GiB by themselves (a printed tensor may hold 2^24 values, 64 MiB,
  // and a run at those sizes shows many tensors), so this is checked, not assumed.
  std::vector<ZipMemberSize> sizes;
  for (const DumpFile& f : files) sizes.emplace_back(f.name, f.size());
  check_zip_store(sizes);

  file_.emplace(path);  // the missing parents made; removed again with the file unless committed
  // What failed is said about PATH or the member: the temporary name would only puzzle the learner.
  auto fail = [](const std::string& what) {
    throw std::runtime_error("could not write " + what + ": " + std::strerror(errno ? errno : EIO));
  };
  std::ofstream out(file_->tmp(), std::ios::binary | std::ios::trunc);
  if (!out) fail(path);
  ZipStoreWriter zip(out);
  for (const DumpFile& f : files) {
    zip.add(f.name, f.bytes());  // one member's bytes at a time
    if (!out) fail(f.name);
  }
  zip.finish();
  out.close();
  if (!out) fail(path);
}

// rename(2) replaces a file at PATH atomically: a reader sees the old archive or the new.
void StagedNpz::commit() { file_->commit("archive"); }

void write_npz(const Report& report, const std::string& command, const std::string& path) {
  StagedNpz(report, command, path).commit();
}

}  // namespace attn::report
