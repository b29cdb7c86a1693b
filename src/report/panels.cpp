#include "report/panels.hpp"

#include <cmath>
#include <limits>

#include "report/text_width.hpp"

namespace attn::report {

namespace {

Labels labels_or_indices(const Labels& given, std::size_t n) {
  Labels out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(given.size() == n ? clean_label(given[i]) : std::to_string(i));
  return out;
}

}  // namespace

PanelSet panels_of(const TensorItem& t) {
  PanelSet set;
  const std::size_t rank = t.shape.size();
  if (rank == 0 || t.values.empty()) return set;
  set.cols = t.shape[rank - 1];
  set.rows = rank >= 2 ? t.shape[rank - 2] : 1;
  const std::size_t lead = rank >= 2 ? rank - 2 : 0;
  const std::size_t per_panel = set.rows * set.cols;
  const std::size_t count = per_panel == 0 ? 0 : t.values.size() / per_panel;
  for (std::size_t p = 0; p < count; ++p) {
    Panel panel;
    panel.values = t.values.data() + p * per_panel;
    panel.index.assign(lead, 0);
    for (std::size_t rest = p, a = lead; a-- > 0;) {  // the last leading axis varies fastest
      panel.index[a] = rest % t.shape[a];
      rest /= t.shape[a];
    }
    set.panels.push_back(std::move(panel));
  }
  // A vector's labels name its entries: they belong to the columns.
  set.row_labels = labels_or_indices(rank >= 2 ? t.row_labels : Labels{}, set.rows);
  set.col_labels = labels_or_indices(rank >= 2 ? t.col_labels : (t.col_labels.empty() ? t.row_labels : t.col_labels),
                                     set.cols);

  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (float v : t.values) {
    if (std::isnan(v)) set.has_nan = true;
    if (!std::isfinite(v)) continue;
    lo = std::fmin(lo, v);
    hi = std::fmax(hi, v);
  }
  if (!(lo <= hi)) lo = 0.0, hi = 1.0;  // nothing finite at all
  set.lo = std::fmin(lo, 0.0);
  set.hi = hi > set.lo ? hi : set.lo + 1.0;  // all zero: any span will do, everything is at the bottom
  return set;
}

double scale_position(double v, const PanelSet& set) {
  if (std::isnan(v)) return v;
  if (std::isinf(v)) return v > 0 ? 1.0 : 0.0;
  const double t = (v - set.lo) / (set.hi - set.lo);
  return t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
}

std::string index_str(const std::vector<std::size_t>& index) {
  if (index.empty()) return "";
  std::string s = "[";
  for (std::size_t i = 0; i < index.size(); ++i) s += (i ? ", " : "") + std::to_string(index[i]);
  return s + "]";
}

std::string index_names(std::size_t leading_axes) {
  if (leading_axes == 0) return "";
  if (leading_axes == 1) return "[b]";
  if (leading_axes == 2) return "[b, h]";
  std::string s = "[";
  for (std::size_t i = 0; i < leading_axes; ++i) s += (i ? ", " : "") + std::string(1, static_cast<char>('i' + i));
  return s + "]";
}

}  // namespace attn::report
