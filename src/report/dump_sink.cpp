#include "report/dump_sink.hpp"

#include <unistd.h>

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
}

namespace {

// A directory that removes itself unless released: the half-written dump of a failed run.
struct TempDir {
  fs::path path;
  bool keep = false;
  ~TempDir() {
    if (!keep) {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  }
};

}  // namespace

void write_dump(const Report& report, const std::string& command, const std::string& dir) {
  check_dump_target(dir);
  const fs::path target = fs::absolute(without_trailing_slash(dir));
  TempDir tmp{target.parent_path() / (target.filename().string() + ".tmp-" + std::to_string(::getpid()))};
  fs::remove_all(tmp.path);
  fs::create_directory(tmp.path);
  for (const Stage& s : report.stages())
    for (std::size_t i = 0; i < s.items.size(); ++i)
      if (const auto* t = std::get_if<TensorItem>(&s.items[i]))
        write_npy((tmp.path / tensor_file_name(s, i)).string(), t->shape, t->values.data());
  {
    std::ofstream manifest(tmp.path / "manifest.json", std::ios::binary);
    manifest << manifest_json(report.header, command, report.stages(), false);
    if (!manifest) throw std::runtime_error("could not write manifest.json");
  }
  std::error_code ec;
  if (fs::exists(target, ec)) fs::remove(target);  // an empty directory, checked above
  fs::rename(tmp.path, target);
  tmp.keep = true;
}

}  // namespace attn::report
