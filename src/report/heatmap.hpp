// Attention weights drawn in the terminal: a grid of cells, queries down the side and keys along
// the top, one grid per head, with a scale to read the colours back as numbers.
//
//   heatmap of attn_weights (rows attend to columns)
//              Your
//              : journey
//              : : starts
//      Your | @@    |
//   journey | %%##  |
//    starts | ##++++|
//   scale: blank is exactly 0.0000; .:-=+*#%@ climb in 9 equal steps to 1.0000
//
// --heatmap-scale row stretches each row from its own min to its own max (the legend then says
// so instead of naming numbers); --head mean|N draws the heads' mean or one head (panels.hpp).
// With colour the cells are painted with viridis (24-bit or 256 colours); without it the
// characters above carry the picture, so a pipe or a log stays readable. Panels of a multi-head
// tensor sit side by side when the width allows and wrap below otherwise. No line is longer than
// the width: columns and rows beyond what fits are summarised (first and last ones, with ~ between).
#pragma once

#include <string>

#include "report/colormap.hpp"
#include "report/panels.hpp"
#include "report/stage.hpp"

namespace attn::report {

struct HeatmapOptions {
  std::size_t width = 80;                // columns available; below kMinHeatmapWidth counts as that
  ColorDepth color = ColorDepth::none;   // none: the character ramp
  int decimals = 4;                      // the scale's numbers (at most 4 are used)
  std::size_t max_rows = 32;             // more rows: the first and last 16
  std::size_t max_cols = 32;             // more columns: as many as fit, at most this many
  PanelView view;                        // --heatmap-scale and --head (panels.hpp)
};

inline constexpr std::size_t kMinHeatmapWidth = 32;
// Grids drawn per tensor at most (as --svg writes at most 64 files); a line counts the rest.
inline constexpr std::size_t kMaxHeatmapPanels = 64;
// The marks of the ramp, lowest first. The blank is kept for exactly the bottom of the scale (a
// masked weight), so that any weight above 0, however small, leaves a mark.
inline constexpr const char* kRamp = " .:-=+*#%@";
// The first character of a marked cell (TensorItem::marked), its shade in the second: "[@", "[.".
inline constexpr char kMark = '[';

// The heatmap(s) of an attention tensor (..., rows, cols), each line ending in '\n'; "" when the
// tensor has no values.
std::string render_heatmap(const TensorItem& t, const HeatmapOptions& opts);

}  // namespace attn::report
