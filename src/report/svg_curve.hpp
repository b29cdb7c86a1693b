// --svg's picture of a curve: a line plot of a training loss (or any TensorItem::curve_x).
#pragma once

#include <string>

#include "report/stage.hpp"

namespace attn::report {

// The SVG document of a curve (TensorItem::curve_x, such as a loss per training step): the points
// joined by a line over x = 1..n, with grid lines and tick labels. The y axis is logarithmic when
// every finite point is positive and they span more than a factor of 20 (a loss falling from 3 to
// 0.002 would otherwise be a flat line after the first tenth), linear otherwise; non-finite points
// break the line. File name: svg_file_name(lesson, stage, total, tensor, {}).
std::string svg_curve(const Header& h, const Stage& s, std::size_t total_stages, const TensorItem& t);

}  // namespace attn::report
