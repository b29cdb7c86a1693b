// The picture options of `attn lesson` (--step, --color, --svg; docs/pictures.md): their checks,
// the SVG files, and the terminal text with heatmaps, paced by keys under --step. render.cpp
// calls these; they live apart so that the other sinks' code and this one do not tangle.
#pragma once

#include <string>
#include <vector>

#include "cli/render.hpp"
#include "report/stage.hpp"
#include "report/text_sink.hpp"

namespace attn::cli {

// Before the lesson runs: a --color value other than auto|always|never, --step without a
// terminal (or with --format json), --svg with --shapes-only or a directory attn cannot write.
// Throws UsageError; creates nothing.
void check_pictures(const OutputOptions& options);

// After the lesson ran: refuses a matrix too large to draw, then creates the --svg directory and
// writes the SVG files. Returns their names ({} without --svg).
std::vector<std::string> write_pictures(const report::Report& report, const OutputOptions& options);

// The lesson as text on standard output, with heatmaps coloured and laid out for the terminal,
// all at once or (--step) one stage at a time; then the list of pictures written, if any.
void show_text(const report::Report& report, const OutputOptions& options, report::TextOptions text,
               const std::vector<std::string>& pictures);

}  // namespace attn::cli
