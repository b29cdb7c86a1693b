// An attention-weight tensor (..., rows, cols) as the matrices a picture draws: one panel per
// index of the leading axes, so (B, h, T, T) gives B * h panels [b, h], in row-major order.
//
// All panels of one tensor share one colour scale. It runs from 0 (or the smallest value, if a
// value is negative) to the largest finite value, so heads can be compared by eye, an exact 0 is
// always the darkest colour, and the top colour means "the largest weight in this tensor".
// Two view options change that (--heatmap-scale and --head, docs/pictures.md): a per-row scale
// stretches each row from its own min to its own max, so the small differences of flat
// (untrained) weights show; and a (B, h, T, S) tensor can be drawn as one head or as the mean of
// its heads, one panel per batch entry.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "report/stage.hpp"

namespace attn::report {

// How the panels of a tensor are made and coloured.
// global: one scale for the tensor; row: each row its own; automatic (the default): global, unless
// every weight is within kNearUniform of its row's uniform value, where global would draw a wall
// of one shade: then row, and PanelSet::auto_row says why.
enum class HeatmapScale { automatic, global, row };
// Near uniform: every weight w > 0 of a row with k of them has |k w - 1| <= this. On the global
// scale such weights span at most 2 * 0.15 / 1.15 = 26% of the top value, fewer than 2.4 of the
// ramp's 9 steps: a wall of one or two shades.
inline constexpr double kNearUniform = 0.15;
struct PanelView {
  HeatmapScale scale = HeatmapScale::automatic;
  enum class Heads { all, mean, one } heads = Heads::all;
  std::size_t head = 0;  // with Heads::one
  // A tensor of rank 3 or more whose batch entries (axis 0) all hold the same values, bit for
  // bit (Raschka's torch.stack((inputs, inputs))), gives the panels of entry 0 alone, and
  // PanelSet::batch_drawn_once says so. The text heatmap asks for it; --svg does not, so that
  // every [b, h] file --svg-panels can pick is still written.
  bool repeated_batch_once = false;
};

// The head axis: a tensor of rank 4 is (B, h, T, S), as index_names() calls its leading axes.
// Returns h, or 0 when `shape` has no head axis.
std::size_t head_count(const Shape& shape);

struct Panel {
  std::vector<std::size_t> index;  // the leading indices: {} for (T, S), {b} for (B, T, T), {b, h}
  const float* values = nullptr;   // rows * cols values, row-major
  std::vector<double> row_lo, row_hi;  // with HeatmapScale::row: each row's finite min and max,
                                       // exact zeros (masked keys) left out
  std::vector<char> row_zero;          // with HeatmapScale::row: the row holds an exact zero
};

struct PanelSet {
  std::size_t rows = 0, cols = 0;
  std::vector<Panel> panels;
  Labels row_labels, col_labels;  // cleaned labels; indices "0", "1", ... when the tensor has none
  double lo = 0.0, hi = 1.0;      // the shared scale
  bool has_nan = false;           // some value is NaN (drawn ??); TensorItem::nan_cause says why
  std::string nan_cause;          // the tensor's nan_cause
  bool per_row = false;           // HeatmapScale::row: Panel::row_lo/row_hi are the scale
  bool auto_row = false;          // per_row chosen by HeatmapScale::automatic: every weight near uniform
  bool has_flat_row = false;      // per_row, and some row has one value throughout (drawn mid-scale)
  bool head_mean = false;         // the panels are {b}: each batch entry's heads averaged
  std::string note;               // what the view did to the tensor: "mean of 4 heads", "head 2 of 4", ""
  std::size_t batch_drawn_once = 0;  // with PanelView::repeated_batch_once: B when the B > 1 batch
                                     // entries were equal and only entry 0's panels are kept, else 0
  // The panels' values when the view computed them (the mean), shared so that a copy of the set
  // still points at live values.
  std::shared_ptr<const std::vector<float>> owned;
};

// Views `t` (which must outlive the result). A vector (n,) is one row; a 0-d tensor has no panel.
// Heads::mean and Heads::one apply only to a tensor with a head axis (others are drawn whole);
// Heads::mean gives one panel {b} per batch entry, the average over the heads; Heads::one keeps
// the panels [b, head] (a head past the last gives no panel).
PanelSet panels_of(const TensorItem& t, const PanelView& view = {});

// Whether a tensor of rank 3 or more has B > 1 entries along axis 0 that all hold entry 0's
// values, bit for bit.
bool batch_repeats_one_entry(const TensorItem& t);

// "batch entry 1 repeats entry 0: drawn once" (B = 2), "batch entries 1-3 repeat entry 0: drawn
// once" (B = 4): the line a picture of such a tensor adds.
std::string batch_drawn_once_line(std::size_t batch);

// Where `v` sits on the shared scale, in [0, 1]; +inf is 1, -inf is 0, NaN stays NaN.
double scale_position(double v, const PanelSet& set);
// Where `v`, in row `row` of `panel`, sits on the scale in use (per row or shared).
double scale_position(double v, const PanelSet& set, const Panel& panel, std::size_t row);

// "[0, 1]": the panel's index in PyTorch's notation ("" for a lone matrix).
std::string index_str(const std::vector<std::size_t>& index);

// What the leading axes are called: "[b]" for (B, T, T), "[b, h]" for (B, h, T, T), "[i, j, k]"
// beyond.
std::string index_names(std::size_t leading_axes);

}  // namespace attn::report
