// A compact text plot of a curve (TensorItem::curve_x), such as a training loss per step:
//
//   2.0794 |*
//          | ***
//          |    *****
//   0.0512 |         ************************
//          +---------------------------------
//           1                             300 step
//
// Each column is the mean of its share of the points (or one point when there are fewer points
// than columns), each row a slice of the value range from the smallest to the largest finite
// value. Non-finite points are left out of the picture.
#pragma once

#include <string>

#include "report/stage.hpp"

namespace attn::report {

// At most `width` characters a line (at least 24), `rows` rows of points (at least 2).
std::string render_curve(const TensorItem& curve, std::size_t width = 80, std::size_t rows = 8);

}  // namespace attn::report
