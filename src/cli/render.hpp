// Where a finished lesson goes: the terminal text, and whatever other sinks the options ask for.
// Kept apart from main.cpp so that adding a sink does not touch (or recompile) the CLI11 wiring.
#pragma once

#include "cli/output_options.hpp"
#include "report/stage.hpp"

namespace attn::cli {


// Refuses, before the lesson runs, output options that cannot work together or where they point
// (a --dump target that exists and is not a dump attn wrote, an --npz PATH that is a directory,
// two outputs writing to one place, --full-json without --format json). Each option's own value
// was checked when it was parsed (output_options.hpp).
void check_output(const OutputOptions& options);

// --stage, after the lesson ran and before anything is written: keeps only the selected stages
// in `report` (their numbers and values untouched), or throws UsageError when a number is past
// the lesson's last stage or words are in no title. Nothing to do without --stage.
void select_stages(report::Report& report, const OutputOptions& options);

// Renders `report` to every requested sink. Everything that can be refused (a bad path, a
// missing terminal) is checked before the first byte is written.
void render(const report::Report& report, const OutputOptions& options);

// After render: each failed check named on stderr, and the exit status that says so (3), or 0.
constexpr int kExitCheckFailed = 3;
int failed_checks_status(const report::Report& report);

}  // namespace attn::cli
