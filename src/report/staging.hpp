// What --dump DIR, --npz PATH, --html FILE and --svg DIR share in writing their output where it
// belongs: the parents to create (and to remove again when the output never lands) and the check
// that the nearest existing one takes new entries. Each writes into a temporary entry beside the
// target (staging_path) and renames it at the end (dump_sink.hpp, npz_sink.hpp, html_sink.hpp,
// svg_sink.hpp). A signal that ends the run removes the temporary entries and the directories
// made for them (interrupt.hpp); what SIGKILL leaves, the next run writing the same target
// removes (remove_stale_staging).
#pragma once

#include <string>
#include <vector>

#include "report/interrupt.hpp"

namespace attn::report {

// `path` without trailing slashes: "out/" and "out//" name "out" (the last component would
// otherwise be empty, and the output staged beside a parent that does not exist).
std::string without_trailing_slash(const std::string& path);

// Throws std::runtime_error with the reason unless the nearest existing ancestor of `target`'s
// parent is a directory that takes new entries (so the missing parents can be created).
void check_parent_writable(const std::string& target);

// The directories made for an output: `dir` and its missing parents, created outermost first.
// They are registered for removal on a signal (interrupt.hpp) before the first one is made; the
// destructor removes those still empty, innermost first, unless keep() was called (the output
// landed in them).
class MadeDirs {
 public:
  MadeDirs() = default;
  // Throws std::runtime_error "could not write <directory>: <reason>", having removed what it made.
  explicit MadeDirs(const std::string& dir);
  ~MadeDirs() {
    if (!kept_) remove();
  }
  MadeDirs(MadeDirs&&) = default;
  MadeDirs& operator=(MadeDirs&&) = delete;
  MadeDirs(const MadeDirs&) = delete;
  MadeDirs& operator=(const MadeDirs&) = delete;
  void keep();
  // Removes the ones still empty now (also after keep(): an output that landed was taken back).
  void remove();
  const std::vector<std::string>& made() const { return made_; }  // outermost first

 private:
  std::vector<std::string> made_;
  RemovedOnSignal on_signal_;
  bool kept_ = false;
};

// The temporary entry an output is written to beside `target` (absolute): "<dir>/.<name>.tmp-<pid>".
std::string staging_path(const std::string& target);

// Removes the temporary entries beside `target` that runs killed by SIGKILL (or a crash) left:
// exactly "<dir>/.<name>.tmp-<pid>" for a pid that is no longer a process. A live process's entry,
// this run's own and every other name are left alone; a failure to remove one is ignored.
void remove_stale_staging(const std::string& target);

// Throws std::runtime_error with the reason unless `path` can take a single output file: not a
// name ending in '/', not a directory (`example`, "causal.npz", is the file name suggested), not
// anything but a regular file, in a parent that takes new entries.
void check_file_target(const std::string& path, const std::string& example);

// One output file (--npz's archive, --html's page) written to staging_path(path) and renamed over
// `path` by commit(): a reader sees the old file or the new one, never half of one. Creating it
// creates the missing parents and removes stale staging of `path`; destroying it uncommitted, or a
// signal before commit(), removes the temporary file and the parents.
class StagedFile {
 public:
  explicit StagedFile(const std::string& path);  // throws, having removed what it made
  ~StagedFile();
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;
  const std::string& tmp() const { return tmp_; }
  // rename(2); throws "could not move the <what> into place: <reason>".
  void commit(const std::string& what);

 private:
  std::string target_, tmp_;
  MadeDirs parents_;           // directories created above the target
  RemovedOnSignal on_signal_;  // the temporary file, until it is renamed or removed
  bool committed_ = false;
};

}  // namespace attn::report
