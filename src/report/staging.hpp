// What --dump DIR, --npz PATH and --html FILE share in writing their output where it belongs: the
// parents to create (and to remove again when the output never lands) and the check that the
// nearest existing one takes new entries. Each writes into a temporary entry beside the target
// and renames it at the end (dump_sink.hpp, npz_sink.hpp, html_sink.hpp).
#pragma once

#include <string>
#include <vector>

namespace attn::report {

// `path` without trailing slashes: "out/" and "out//" name "out" (the last component would
// otherwise be empty, and the output staged beside a parent that does not exist).
std::string without_trailing_slash(const std::string& path);

// Throws std::runtime_error with the reason unless the nearest existing ancestor of `target`'s
// parent is a directory that takes new entries (so the missing parents can be created).
void check_parent_writable(const std::string& target);

// Creates the missing parents of `target` (absolute), outermost first, and returns them in that
// order; throws std::runtime_error naming the one that could not be made (after removing those
// made before it).
std::vector<std::string> make_parents(const std::string& target);

// Removes the directories of `made` (outermost first) that are still empty, innermost first.
void remove_if_empty(const std::vector<std::string>& made);

// The temporary entry an output is written to beside `target` (absolute): "<dir>/.<name>.tmp-<pid>".
std::string staging_path(const std::string& target);

// Throws std::runtime_error with the reason unless `path` can take a single output file: not a
// name ending in '/', not a directory (`example`, "causal.npz", is the file name suggested), not
// anything but a regular file, in a parent that takes new entries.
void check_file_target(const std::string& path, const std::string& example);

// One output file (--npz's archive, --html's page) written to staging_path(path) and renamed over
// `path` by commit(): a reader sees the old file or the new one, never half of one. Creating it
// creates the missing parents; destroying it uncommitted removes the temporary file and them.
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
  std::vector<std::string> made_parents_;  // directories created above the target, outermost first
  bool committed_ = false;
};

}  // namespace attn::report
