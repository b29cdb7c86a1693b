// attn model DIR [--summary]: read a Hugging Face checkpoint folder strictly and describe it
// (docs/checkpoints.md). main.cpp registers the options and calls run_model_command.
#pragma once

#include <ostream>
#include <string>

namespace attn::cli {

struct ModelCommandOptions {
  std::string dir;
  bool allow_nonfinite = false;  // report NaN/inf weights instead of refusing them
  bool headers_only = false;     // check names, shapes and offsets; do not read the values
};

// Checks everything, builds the whole summary, then writes it to `out` (nothing is written when
// the checkpoint is refused). Throws UsageError, one line naming the file, for every refusal.
int run_model_command(const ModelCommandOptions& options, std::ostream& out);

// The footer of attn model --help: the limits, from their constants.
std::string model_limits_help();

}  // namespace attn::cli
