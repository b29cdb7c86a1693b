// An attention-weight tensor (..., rows, cols) as the matrices a picture draws: one panel per
// index of the leading axes, so (B, h, T, T) gives B * h panels [b, h], in row-major order.
//
// All panels of one tensor share one colour scale. It runs from 0 (or the smallest value, if a
// value is negative) to the largest finite value, so heads can be compared by eye, an exact 0 is
// always the darkest colour, and the top colour means "the largest weight in this tensor".
#pragma once

#include <string>
#include <vector>

#include "report/stage.hpp"

namespace attn::report {

struct Panel {
  std::vector<std::size_t> index;  // the leading indices: {} for (T, S), {b} for (B, T, T), {b, h}
  const float* values = nullptr;   // rows * cols values, row-major
};

struct PanelSet {
  std::size_t rows = 0, cols = 0;
  std::vector<Panel> panels;
  Labels row_labels, col_labels;  // cleaned labels; indices "0", "1", ... when the tensor has none
  double lo = 0.0, hi = 1.0;      // the shared scale
  bool has_nan = false;           // a fully masked row gives NaN weights (0/0)
};

// Views `t` (which must outlive the result). A vector (n,) is one row; a 0-d tensor has no panel.
PanelSet panels_of(const TensorItem& t);

// Where `v` sits on the scale, in [0, 1]; +inf is 1, -inf is 0, NaN stays NaN.
double scale_position(double v, const PanelSet& set);

// "[0, 1]": the panel's index in PyTorch's notation ("" for a lone matrix).
std::string index_str(const std::vector<std::size_t>& index);

// What the leading axes are called: "[b]" for (B, T, T), "[b, h]" for (B, h, T, T), "[i, j, k]"
// beyond.
std::string index_names(std::size_t leading_axes);

}  // namespace attn::report
