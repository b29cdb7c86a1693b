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

// A colour bar's ticks: round values (k times a step of 1, 2 or 5 times a power of ten) inside
// [lo, hi], 4 to 7 of them where such a step exists (a step of 2.5 times a power of ten when none
// does, or the 1-2-5 count nearest 4..7 after that; just the two ends for a span too small
// beside its ends for a double to step through), each with its label written from integers, so
// without float noise: "0", "0.2", "1.5", "2e-4".
struct Tick {
  double value = 0.0;
  std::string label;
};
std::vector<Tick> round_ticks(double lo, double hi);

// The SVG document of one panel of `t`, shown in stage `s` of the lesson in `h`. Besides the
// cells, it names its axes (TensorItem::row_axis, col_axis) and what the colour bar measures
// (value_name; with --heatmap-scale row, a place in each row's own range, 0 to 1), and says
// "untrained weights" or "weights trained for N steps" as TensorItem::training has it.
std::string svg_picture(const Header& h, const Stage& s, std::size_t total_stages, const TensorItem& t,
                        const PanelSet& set, const Panel& panel);

// The SVG document of a curve (TensorItem::curve_x, such as a loss per training step): the points
// joined by a line over x = 1..n, with grid lines and tick labels. The y axis is logarithmic when
// every finite point is positive and they span more than a factor of 20 (a loss falling from 3 to
// 0.002 would otherwise be a flat line after the first tenth), linear otherwise; non-finite points
// break the line. File name: svg_file_name(lesson, stage, total, tensor, {}).
std::string svg_curve(const Header& h, const Stage& s, std::size_t total_stages, const TensorItem& t);

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
