// --svg DIR: every attention-weight matrix as an SVG picture, like the articles' annotated
// heatmaps: the value in each cell, tokens as tick labels, a colour bar, and a title naming the
// lesson, the stage and the head. A curve (a training loss) becomes a line plot.
//
// One file per matrix, per (batch, head) for a multi-head tensor, named
//   <lesson>-stage<NN>-<tensor>[-b<i>][-h<j>].svg     e.g. heads-stage09-attn_weights-b0-h1.svg
// (with --head mean, one per batch entry: heads-stage09-attn_weights-mean-b0.svg)
// NN is the stage number, zero-padded to two digits (more when a lesson has 100 stages or more);
// the tensor name keeps letters, digits, '_' and '-' (anything else becomes '_'). The names depend
// only on the lesson and its options, so re-running a command replaces the same files.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/interrupt.hpp"
#include "report/panels.hpp"
#include "report/stage.hpp"
#include "report/svg_curve.hpp"
#include "report/svg_heatmap.hpp"

namespace attn::report {

// Matrices with more rows or columns than this are refused: past it the picture would be tens
// of megabytes of cells too small to read.
inline constexpr std::size_t kMaxSvgSide = 256;

// At most this many files per run: one per (batch, head) of every attention tensor adds up fast
// (--batch 100 --heads 64 would be 6400), and nobody opens that many. --svg-panels picks fewer.
inline constexpr std::size_t kMaxSvgFiles = 64;

// --svg-panels "b0,h1,b2-h3": which panels to draw. Each item names a batch entry, a head or both,
// as in the file names; a panel is drawn when some item matches every axis it names (an axis the
// tensor does not have is not compared). No items: every panel.
struct PanelSelection {
  struct Pick {
    long batch = -1, head = -1;  // -1: any
    std::string text;            // as typed, for messages
  };
  std::vector<Pick> picks;
  bool selects(const std::vector<std::size_t>& index) const;
  bool selects(const Pick& pick, const std::vector<std::size_t>& index) const;
};
// The option's text is parsed by the command line (cli/output_options.hpp: parse_panel_selection).

// The first pick of `selection` that matches no panel of `report` ("b5"), with `available` set
// to what there is ("b0..b1, h0..h3"), or "" when every pick draws something. `count` gets the
// number of files --svg would write.
// `view` (--head) decides which panels there are.
std::string svg_unmatched_pick(const Report& report, const PanelSelection& selection, std::size_t& count,
                               std::string& available, const PanelView& view = {});

// Why `dir` cannot take the pictures, or "" when it can: an existing directory attn may write
// in, or a path whose nearest existing ancestor is one (the missing directories are created).
std::string svg_dir_problem(const std::string& dir);
// The first attention matrix too large to draw, as "attn_weights (1, 300, 300)", or "".
std::string svg_size_problem(const Report& report);

std::string svg_file_name(const std::string& lesson, std::size_t stage, std::size_t total_stages,
                          const std::string& tensor, const std::vector<std::size_t>& index);

// Writes the pictures of every attention tensor and every curve of each stage it is given. Each
// file is written to its temporary name beside its place (staging.hpp, staging_path:
// "<dir>/.<name>.tmp-<pid>", registered for removal on a signal) and stays there until commit()
// renames them all into place: the pictures of a run that fails, or is stopped by a signal, never
// appear. Destroyed before commit(), it removes what it wrote.
class SvgSink : public Sink {
 public:
  explicit SvgSink(std::string dir, PanelSelection selection = {}, PanelView view = {})
      : dir_(std::move(dir)), selection_(std::move(selection)), view_(view) {}
  ~SvgSink() override;
  SvgSink(const SvgSink&) = delete;
  SvgSink& operator=(const SvgSink&) = delete;
  void begin(const Header& header, std::size_t total_stages) override;
  void stage(const Stage& stage, std::size_t total_stages) override;
  void end() override {}
  // Renames every picture into place, in order (a file of the same name is replaced). Throws
  // std::runtime_error "could not write <dir>/<name>: <reason>", having removed this run's pictures.
  void commit();
  const std::vector<std::string>& written() const { return written_; }  // file names, in order

 private:
  std::string dir_;
  PanelSelection selection_;
  PanelView view_;  // --heatmap-scale and --head
  Header header_;
  std::vector<std::string> written_;
  std::vector<std::string> staged_;                // the temporary name of each, until commit()
  std::vector<RemovedOnSignal> removed_on_signal_; // one per staged file
  bool committed_ = false;
};

}  // namespace attn::report
