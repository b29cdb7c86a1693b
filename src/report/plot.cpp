// The text plot of a curve (see plot.hpp).
#include "report/plot.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace attn::report {

std::string render_curve(const TensorItem& curve, std::size_t width, std::size_t rows) {
  rows = std::max<std::size_t>(rows, 2);
  const std::vector<float>& v = curve.values;
  const std::size_t n = v.size();
  double lo = INFINITY, hi = -INFINITY;
  for (float x : v)
    if (std::isfinite(x)) lo = std::min(lo, static_cast<double>(x)), hi = std::max(hi, static_cast<double>(x));
  if (n == 0 || !std::isfinite(lo)) return "  (no finite values to plot)\n";

  const std::string top = fixed(hi, 4), bottom = fixed(lo, 4);
  const std::size_t label = std::max(top.size(), bottom.size());
  // "  <label> |" before the points, and room after them for " <x name>" on the axis line.
  const std::size_t room = std::max<std::size_t>(width, 24 + curve.curve_x.size()) - label - 5 - curve.curve_x.size();
  const std::size_t columns = std::max<std::size_t>(1, std::min(n, room));
  // Column c covers points [c * n / columns, (c + 1) * n / columns): their mean, or NaN for none finite.
  std::vector<double> means(columns, NAN);
  for (std::size_t c = 0; c < columns; ++c) {
    double sum = 0.0;
    std::size_t count = 0;
    for (std::size_t i = c * n / columns; i < (c + 1) * n / columns; ++i)
      if (std::isfinite(v[i])) sum += v[i], ++count;
    if (count) means[c] = sum / static_cast<double>(count);
  }
  std::vector<std::string> grid(rows, std::string(columns, ' '));
  for (std::size_t c = 0; c < columns; ++c) {
    if (std::isnan(means[c])) continue;
    // Row 0 is the top (largest values); a flat curve sits on the bottom row.
    const double frac = hi > lo ? (means[c] - lo) / (hi - lo) : 0.0;
    const auto r = static_cast<std::size_t>(std::lround((1.0 - frac) * static_cast<double>(rows - 1)));
    grid[std::min(r, rows - 1)][c] = '*';
  }
  std::string out;
  for (std::size_t r = 0; r < rows; ++r) {
    std::string tag = r == 0 ? top : r + 1 == rows ? bottom : "";
    tag = std::string(label - tag.size(), ' ') + tag;
    std::string line = "  " + tag + " |" + grid[r];
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  out += "  " + std::string(label, ' ') + " +" + std::string(columns, '-') + "\n";
  const std::string first = "1", last = std::to_string(n);
  std::string axis = "  " + std::string(label + 2, ' ') + first;
  const std::size_t end_col = label + 4 + columns;  // where the last column ends
  if (axis.size() + 1 + last.size() <= end_col) axis += std::string(end_col - axis.size() - last.size(), ' ');
  else axis += " ";
  axis += last + " " + curve.curve_x;
  return out + axis + "\n";
}

}  // namespace attn::report
