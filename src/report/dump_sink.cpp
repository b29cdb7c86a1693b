#include "report/dump_sink.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

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

}  // namespace

void check_dump_target(const std::string& dir) {
  std::error_code ec;
  const fs::path target = without_trailing_slash(dir);
  if (fs::exists(target, ec)) {
    if (!fs::is_directory(target, ec)) throw std::runtime_error("exists and is not a directory");
    if (!fs::is_empty(target, ec) && !is_previous_dump(target))
      throw std::runtime_error("exists and is not a dump attn wrote (attn replaces only its own: manifest.json and .npy files)");
  }
  // Missing parents (out/ in --dump out/causal) are created when the dump is written; the nearest
  // one that exists must be a directory.
  const fs::path existing = nearest_existing(fs::absolute(target, ec).parent_path());
  if (!fs::is_directory(existing, ec)) throw std::runtime_error(existing.string() + " is not a directory");
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

// The missing directories above the dump, created before it is staged and removed again (when
// still empty) unless released, so a failed run leaves no empty out/ behind either.
struct CreatedParents {
  std::vector<fs::path> made;  // outermost first
  bool keep = false;
  explicit CreatedParents(const fs::path& parent) {
    for (fs::path p = parent; p.has_relative_path() && !fs::exists(p); p = p.parent_path()) made.insert(made.begin(), p);
    for (std::size_t i = 0; i < made.size(); ++i) {
      std::error_code ec;
      if (!fs::create_directory(made[i], ec) && ec) {
        const std::string why = "could not create " + made[i].string() + ": " + ec.message();
        made.resize(i);
        undo();
        throw std::runtime_error(why);
      }
    }
  }
  void undo() {
    std::error_code ec;
    for (auto it = made.rbegin(); it != made.rend(); ++it) fs::remove(*it, ec);  // only if empty
  }
  ~CreatedParents() {
    if (!keep) undo();
  }
};

// Puts the staged dump at `target`. A previous dump there is swapped with the new one in a single
// rename (renameat2 with RENAME_EXCHANGE), so `target` always holds one whole dump, the old or the
// new, and the old one, now at `staged`, is deleted. A filesystem that cannot swap gets the old
// dump moved aside first (put back if the new one cannot be moved in).
void move_into_place(const fs::path& staged, const fs::path& target) {
  std::error_code ec;
  if (fs::exists(target, ec) && !fs::is_empty(target, ec)) {
    if (!is_previous_dump(target)) throw std::runtime_error("exists and is not a dump attn wrote");  // changed meanwhile
    if (::renameat2(AT_FDCWD, staged.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
      fs::remove_all(staged, ec);  // the previous dump, swapped out
      return;
    }
    const fs::path aside = staged.string() + "-previous";
    fs::rename(target, aside);  // on failure nothing has moved
    fs::rename(staged, target, ec);
    if (ec) {
      std::error_code back;
      fs::rename(aside, target, back);
      throw std::runtime_error("could not move the new dump into place: " + ec.message());
    }
    fs::remove_all(aside, ec);
    return;
  }
  if (fs::exists(target, ec)) fs::remove(target);  // an empty directory, checked before
  fs::rename(staged, target);
}

}  // namespace

void write_dump(const Report& report, const std::string& command, const std::string& dir) {
  check_dump_target(dir);
  const fs::path target = fs::absolute(without_trailing_slash(dir));
  CreatedParents parents(target.parent_path());
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
  move_into_place(tmp.path, target);
  tmp.keep = true;
  parents.keep = true;
}

}  // namespace attn::report
