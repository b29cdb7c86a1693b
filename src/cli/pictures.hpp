// The picture options of `attn lesson` (--step, --color, --svg; docs/pictures.md): their checks,
// the SVG files, and the terminal text with heatmaps, paced by keys under --step. render.cpp
// calls these; they live apart so that the other sinks' code and this one do not tangle.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli/render.hpp"
#include "report/stage.hpp"
#include "report/text_sink.hpp"

namespace attn::cli {

// Before the lesson runs: --step without a terminal (or with --format json), --svg-panels
// without --svg. (Their values were checked when parsed: output_options.hpp.) Throws UsageError.
void check_pictures(const OutputOptions& options);
// --svg DIR (its row's check in cli/sinks.cpp): --shapes-only beside it, or a directory attn
// cannot write. Throws UsageError; creates nothing.
void check_svg(const OutputOptions& options);

// After the lesson ran, before anything is written: refuses --head when no attention tensor of
// the run has a head axis or N is past the last head, and (with --svg) a matrix too large to
// draw, a --svg-panels pick that matches no panel, and more than report::kMaxSvgFiles pictures.
void check_pictures_of(const report::Report& report, const OutputOptions& options);

// The --svg pictures of a run, written under temporary names in their directory (created with
// its missing parents) and not yet in place: commit() moves them there. Destroyed before that (a
// later output failed), or on a signal, it removes them and the directories it made.
class StagedPictures {
 public:
  // The checks above, then the files ({} without --svg). If writing fails, the files and
  // directories this run made are removed before the UsageError is thrown.
  StagedPictures(const report::Report& report, const OutputOptions& options);
  ~StagedPictures();
  StagedPictures(const StagedPictures&) = delete;
  StagedPictures& operator=(const StagedPictures&) = delete;
  // Renames them into place; UsageError, with none of them left, when that fails.
  void commit();
  // After commit(): removes them and the directories made for them (a later output failed).
  void take_back();
  // Their file names ({} without --svg).
  const std::vector<std::string>& names() const;

 private:
  struct Files;
  std::unique_ptr<Files> files_;
};

// The lesson as text on standard output, with heatmaps coloured and laid out for the terminal,
// all at once or (--step) one stage at a time; then the list of pictures written, if any.
void show_text(const report::Report& report, const OutputOptions& options, report::TextOptions text,
               const std::vector<std::string>& pictures);

}  // namespace attn::cli
