// The file outputs of a run (--dump, --npz, --html, --svg), one row each: its option, what it
// checks before the lesson runs, and how it writes the finished report under temporary names for
// render (render.hpp) to move into place. Adding one is its sink (src/report/<name>_sink.*), a row
// of its option (output_options.cpp) and a row here.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/output_options.hpp"
#include "report/stage.hpp"

namespace attn::cli {

// One output, written in full under temporary names and not yet in place. Destroyed before
// commit() (a later output failed, or a signal came), it leaves nothing behind.
class StagedOutput {
 public:
  virtual ~StagedOutput() = default;
  // Moves it into place; UsageError naming its option when that fails.
  virtual void commit() = 0;
  // After commit(): whether take_back() can remove it again, and removing it (a later output
  // failed). Those that can land first; the rest (a dump replaces the previous one) after them.
  virtual bool can_take_back() const { return false; }
  virtual void take_back() {}
  // The files the text lists at its end (the pictures of --svg), once committed.
  virtual std::vector<std::string> pictures() const { return {}; }
};

struct FileSink {
  const char* flag;                                        // "--dump"
  const std::optional<std::string> OutputOptions::*path;  // where it writes; unset: not asked for
  // Before the lesson runs: its target can be written, and apart from the other outputs'.
  // UsageError in the one-line form; creates nothing.
  void (*check)(const OutputOptions& options);
  // After the lesson ran: the report written under temporary names (UsageError on failure).
  std::unique_ptr<StagedOutput> (*stage)(const report::Report& report, const OutputOptions& options);
};

// In the order they are checked and written.
const std::vector<FileSink>& file_sinks();

}  // namespace attn::cli
