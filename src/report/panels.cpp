#include "report/panels.hpp"

#include <cmath>
#include <cstring>
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

std::size_t head_count(const Shape& shape) { return shape.size() == 4 ? shape[1] : 0; }

namespace {

// Whether every row of every panel spreads its weight evenly over the keys it sees: each w > 0 of a
// row with k of them within kNearUniform of 1/k. Rows with one key (k = 1) are uniform trivially and
// do not count: at least one row must have two keys or more, or there is nothing to stretch.
bool near_uniform(const PanelSet& set, std::size_t per_panel) {
  if (set.cols < 2 || per_panel == 0) return false;
  bool some_spread = false;
  for (const Panel& panel : set.panels)
    for (std::size_t r = 0; r < set.rows; ++r) {
      const float* row = panel.values + r * set.cols;
      std::size_t k = 0;
      for (std::size_t c = 0; c < set.cols; ++c) {
        if (!std::isfinite(row[c]) || row[c] < 0.0f) return false;  // not attention weights
        k += row[c] > 0.0f;
      }
      if (k < 2) continue;
      some_spread = true;
      for (std::size_t c = 0; c < set.cols; ++c)
        if (row[c] > 0.0f && std::fabs(static_cast<double>(k) * row[c] - 1.0) > kNearUniform) return false;
    }
  return some_spread;
}

}  // namespace

bool batch_repeats_one_entry(const TensorItem& t) {
  if (t.shape.size() < 3 || t.shape[0] < 2 || t.values.empty()) return false;
  const std::size_t per_entry = t.values.size() / t.shape[0];
  if (per_entry == 0 || per_entry * t.shape[0] != t.values.size()) return false;
  const float* first = t.values.data();
  for (std::size_t b = 1; b < t.shape[0]; ++b)
    if (std::memcmp(first, first + b * per_entry, per_entry * sizeof(float)) != 0) return false;
  return true;
}

std::string batch_drawn_once_line(std::size_t batch) {
  if (batch <= 2) return "batch entry 1 repeats entry 0: drawn once";
  return "batch entries 1-" + std::to_string(batch - 1) + " repeat entry 0: drawn once";
}

PanelSet panels_of(const TensorItem& t, const PanelView& view) {
  PanelSet set;
  const std::size_t rank = t.shape.size();
  if (rank == 0 || t.values.empty()) return set;
  set.cols = t.shape[rank - 1];
  set.rows = rank >= 2 ? t.shape[rank - 2] : 1;
  const std::size_t lead = rank >= 2 ? rank - 2 : 0;
  const std::size_t per_panel = set.rows * set.cols;
  const std::size_t count = per_panel == 0 ? 0 : t.values.size() / per_panel;
  const std::size_t heads = head_count(t.shape);
  if (view.heads == PanelView::Heads::mean && heads > 0) {
    // (B, h, T, S) -> (B, T, S): each batch entry's heads averaged, summed in double.
    const std::size_t batch = t.shape[0];
    auto mean = std::make_shared<std::vector<float>>(batch * per_panel, 0.0f);  // (B, T, S)
    for (std::size_t b = 0; b < batch; ++b)
      for (std::size_t i = 0; i < per_panel; ++i) {
        double sum = 0.0;
        for (std::size_t h = 0; h < heads; ++h) sum += t.values[(b * heads + h) * per_panel + i];
        (*mean)[b * per_panel + i] = static_cast<float>(sum / static_cast<double>(heads));
      }
    set.owned = mean;
    for (std::size_t b = 0; b < batch; ++b) {
      Panel panel;
      panel.values = mean->data() + b * per_panel;
      panel.index = {b};
      set.panels.push_back(std::move(panel));
    }
    set.head_mean = true;
    set.note = "mean of " + std::to_string(heads) + " heads";
  } else {
    for (std::size_t p = 0; p < count; ++p) {
      Panel panel;
      panel.values = t.values.data() + p * per_panel;
      panel.index.assign(lead, 0);
      for (std::size_t rest = p, a = lead; a-- > 0;) {  // the last leading axis varies fastest
        panel.index[a] = rest % t.shape[a];
        rest /= t.shape[a];
      }
      if (view.heads == PanelView::Heads::one && heads > 0 && panel.index[1] != view.head) continue;
      set.panels.push_back(std::move(panel));
    }
    if (view.heads == PanelView::Heads::one && heads > 0)
      set.note = "head " + std::to_string(view.head) + " of " + std::to_string(heads);
  }
  // Equal batch entries: entry 0's panels stand for them all (the scale is the same either way).
  if (view.repeated_batch_once && batch_repeats_one_entry(t)) {
    std::vector<Panel> kept;
    for (Panel& panel : set.panels)
      if (!panel.index.empty() && panel.index[0] == 0) kept.push_back(std::move(panel));
    set.panels = std::move(kept);
    set.batch_drawn_once = t.shape[0];
  }
  // A vector's labels name its entries: they belong to the columns.
  set.row_labels = labels_or_indices(rank >= 2 ? t.row_labels : Labels{}, set.rows);
  set.col_labels = labels_or_indices(rank >= 2 ? t.col_labels : (t.col_labels.empty() ? t.row_labels : t.col_labels),
                                     set.cols);

  set.nan_cause = t.nan_cause;
  // The shared scale covers the panels drawn (one head, or the mean, when the view picks those).
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const Panel& panel : set.panels)
    for (std::size_t i = 0; i < per_panel; ++i) {
      const float v = panel.values[i];
      if (std::isnan(v)) set.has_nan = true;
      if (!std::isfinite(v)) continue;
      lo = std::fmin(lo, v);
      hi = std::fmax(hi, v);
    }
  if (!(lo <= hi)) lo = 0.0, hi = 1.0;  // nothing finite at all
  set.lo = std::fmin(lo, 0.0);
  set.hi = hi > set.lo ? hi : set.lo + 1.0;  // all zero: any span will do, everything is at the bottom

  set.auto_row = view.scale == HeatmapScale::automatic && near_uniform(set, per_panel);
  if (view.scale == HeatmapScale::row || set.auto_row) {
    set.per_row = true;
    for (Panel& panel : set.panels)
      for (std::size_t r = 0; r < set.rows; ++r) {
        // The row's range covers the weights it gives; an exact 0 (a masked key) stays out of it
        // and is drawn at the very bottom, so a causal row's own weights still spread over the ramp.
        double rlo = std::numeric_limits<double>::infinity(), rhi = -rlo;
        bool zero = false;
        for (std::size_t c = 0; c < set.cols; ++c) {
          const double v = panel.values[r * set.cols + c];
          if (!std::isfinite(v)) continue;
          if (v == 0.0) {
            zero = true;
            continue;
          }
          rlo = std::fmin(rlo, v);
          rhi = std::fmax(rhi, v);
        }
        if (!(rlo <= rhi)) rlo = rhi = 0.0;  // all NaN, or all 0: drawn as such
        // Weights equal but for float32 rounding (1e-5 relative) are one value: stretched, their
        // last bits would paint marks that another CPU's BLAS paints differently.
        if (rhi - rlo <= 1e-5 * std::fabs(rhi)) rlo = rhi;
        if (rlo == rhi && rhi != 0.0 && !zero) set.has_flat_row = true;  // with zeros, its one weight is the top
        panel.row_lo.push_back(rlo);
        panel.row_hi.push_back(rhi);
        panel.row_zero.push_back(zero);
      }
  }
  return set;
}

double scale_position(double v, const PanelSet& set, const Panel& panel, std::size_t row) {
  if (!set.per_row || row >= panel.row_lo.size()) return scale_position(v, set);
  if (std::isnan(v)) return v;
  if (std::isinf(v)) return v > 0 ? 1.0 : 0.0;
  const double lo = panel.row_lo[row], hi = panel.row_hi[row];
  const bool zeros = row < panel.row_zero.size() && panel.row_zero[row];
  if (v == 0.0 && zeros) return 0.0;  // a masked key, outside the row's range: the bottom
  if (!(hi > lo)) return zeros ? 1.0 : 0.5;  // its one weight beside zeros is the top; one value throughout: mid
  const double t = (v - lo) / (hi - lo);
  // The row's smallest weight sits just above the bottom, so it keeps a mark: the bottom itself
  // (blank, darkest) is left to exact zeros.
  constexpr double kAboveBottom = 1e-9;
  return t <= 0.0 ? kAboveBottom : t > 1.0 ? 1.0 : t;
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
