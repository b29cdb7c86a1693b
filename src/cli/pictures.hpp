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
// terminal (or with --format json), --svg with --shapes-only or a directory attn cannot write,
// --svg-panels without --svg or not of the form b0,h1,b2-h3, a --heatmap-scale other than
// global|row, a --head other than mean or a number.
// Throws UsageError; creates nothing.
void check_pictures(const OutputOptions& options);

// After the lesson ran, before anything is written: refuses --head when no attention tensor of
// the run has a head axis or N is past the last head, and (with --svg) a matrix too large to
// draw, a --svg-panels pick that matches no panel, and more than report::kMaxSvgFiles pictures.
void check_pictures_of(const report::Report& report, const OutputOptions& options);

// After the lesson ran: the checks above, then creates the --svg directory and writes the SVG
// files of the selected panels. Returns their names ({} without --svg). If writing fails, the
// files and directories this run made are removed before the UsageError is thrown.
std::vector<std::string> write_pictures(const report::Report& report, const OutputOptions& options);

// Removes pictures this run wrote (a later output failed).
void remove_pictures(const OutputOptions& options, const std::vector<std::string>& names);

// The lesson as text on standard output, with heatmaps coloured and laid out for the terminal,
// all at once or (--step) one stage at a time; then the list of pictures written, if any.
void show_text(const report::Report& report, const OutputOptions& options, report::TextOptions text,
               const std::vector<std::string>& pictures);

}  // namespace attn::cli
