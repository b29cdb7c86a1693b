// --svg's picture of one attention panel: an annotated heatmap (a value in each cell, tokens as
// tick labels, a colour bar with round ticks, a title naming the lesson, the stage and the head).
#pragma once

#include <string>
#include <vector>

#include "report/panels.hpp"
#include "report/stage.hpp"

namespace attn::report {

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

}  // namespace attn::report
