// --dump DIR: every tensor a lesson shows as a float32 .npy file, plus manifest.json (with
// --shapes-only, manifest.json alone: names and shapes, no values).
// Everything is written into a temporary directory beside DIR and renamed to DIR at the end,
// so a run that fails half-way, or is stopped by a signal, leaves nothing behind. Missing parents
// of DIR are created (and removed again if the dump never lands); a previous dump in DIR is
// replaced in one atomic swap, as re-running a notebook cell replaces its output. The files are
// dump_files.hpp's list, which --npz (npz_sink.hpp) stores in one archive.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "report/stage.hpp"
#include "report/staging.hpp"

namespace attn::report {

// Refuses a DIR that cannot become the dump (exists and is neither an empty directory nor a dump
// attn wrote, or its nearest existing ancestor is not a writable directory): throws
// std::runtime_error with the reason. Called before anything is written.
void check_dump_target(const std::string& dir);

// A dump written into its temporary directory beside `dir` but not yet in place, so that other
// outputs (--svg) can be written before it appears: commit() renames it to `dir` (swapping out a
// previous dump there); if commit() is never called (a later step failed), the destructor removes
// it and the parents it created (a signal does the same: interrupt.hpp). Errors are
// std::runtime_error naming `dir` and the file, never the temporary path.
class StagedDump {
 public:
  StagedDump(const Report& report, const std::string& command, const std::string& dir);
  ~StagedDump();
  StagedDump(const StagedDump&) = delete;
  StagedDump& operator=(const StagedDump&) = delete;
  void commit();

 private:
  std::string target_, tmp_;
  std::unique_ptr<MadeDirs> parents_;  // directories created above `dir`
  RemovedOnSignal on_signal_;          // the temporary directory, until it is renamed or removed
  bool committed_ = false;
};

// Writes the whole dump of `report` to `dir` atomically (see above).
void write_dump(const Report& report, const std::string& command, const std::string& dir);

}  // namespace attn::report
