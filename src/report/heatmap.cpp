#include "report/heatmap.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "report/panels.hpp"
#include "report/stage.hpp"
#include "report/text_sink.hpp"
#include "report/text_width.hpp"

namespace attn::report {

namespace {

constexpr std::size_t kCell = 2;        // two characters are about as wide as one line is tall
constexpr std::size_t kLabelMax = 12;   // longer token labels are cut, ending in '~'
constexpr std::size_t kPanelGap = 3;    // spaces between panels side by side
constexpr std::size_t kLeftOut = std::numeric_limits<std::size_t>::max();  // a "~" row or column

// A line under construction. Its width on screen is counted apart from its bytes, because
// colour escapes take bytes but no columns.
struct Line {
  std::string text;
  std::size_t width = 0;
  void add(const std::string& s, std::size_t w) {
    text += s;
    width += w;
  }
  void add(const std::string& s) { add(s, display_width(s)); }
  void pad_to(std::size_t w) {
    if (width < w) add(std::string(w - width, ' '));
  }
};

// The indices to show out of n: all of them when n <= k, otherwise the first and last ones with
// kLeftOut between (k counts only the shown ones).
std::vector<std::size_t> pick(std::size_t n, std::size_t k) {
  std::vector<std::size_t> out;
  if (n <= k) {
    for (std::size_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  const std::size_t head = (k + 1) / 2, tail = k / 2;
  for (std::size_t i = 0; i < head; ++i) out.push_back(i);
  out.push_back(kLeftOut);
  for (std::size_t i = n - tail; i < n; ++i) out.push_back(i);
  return out;
}

// Everything the panels of one tensor share: which rows and columns are shown, how wide the row
// labels are, the column labels of the staircase above the grid, and the panel's width.
struct Layout {
  std::vector<std::size_t> rows, cols;
  std::size_t label_width = 1;
  std::vector<std::string> col_text;  // per shown column, "" for a left-out one
  std::size_t width = 0;
  bool fits = false;
};

std::size_t grid_left(const Layout& l) { return l.label_width + 2; }  // "label |"

Layout layout_for(const PanelSet& set, std::size_t width, const HeatmapOptions& opts) {
  Layout l;
  l.rows = pick(set.rows, std::max<std::size_t>(2, opts.max_rows));
  std::size_t label_max = 1;
  for (std::size_t r : l.rows)
    if (r != kLeftOut) label_max = std::max(label_max, display_width(set.row_labels[r]));
  // Labels are worth more than columns: first as many columns as fit with labels of up to 12
  // characters, then up to 6, and only as a last resort 3 (or whatever room is left).
  const std::size_t most = std::min(set.cols, std::max<std::size_t>(1, opts.max_cols));
  const std::size_t fewest = std::min<std::size_t>(set.cols, 2);
  for (std::size_t label_cap : {kLabelMax, std::size_t{6}, std::size_t{3}}) {
    for (std::size_t k = most; k >= fewest && k > 0; --k) {
      const bool last_resort = label_cap == 3 && k == fewest;
      l.cols = pick(set.cols, k);
      l.label_width = std::min(label_max, label_cap);
      const std::size_t x0 = grid_left(l);
      std::size_t w = x0 + l.cols.size() * kCell + 1;  // the grid and its right border
      l.col_text.assign(l.cols.size(), "");
      bool ok = w <= width;
      for (std::size_t j = 0; ok && j < l.cols.size(); ++j) {
        if (l.cols[j] == kLeftOut) continue;
        const std::string& label = set.col_labels[l.cols[j]];
        const std::size_t at = x0 + j * kCell;
        const std::size_t wanted = std::min(display_width(label), label_cap);
        const std::size_t room = width > at ? width - at : 0;
        if (room == 0 || (room < wanted && !last_resort)) ok = false;
        l.col_text[j] = fit_label(label, std::min(room, label_cap));
        w = std::max(w, at + display_width(l.col_text[j]));
      }
      if (ok && w <= width) {
        l.width = w;
        l.fits = true;
        return l;
      }
      if (k == fewest) break;
    }
  }
  return l;
}

std::string number(double v, int decimals) { return fixed(v, std::clamp(decimals, 0, 4)); }

// One cell: two ramp characters, or two blanks painted with the colour; "??" for NaN. A marked
// cell (TensorItem::marked) keeps its shade in its second character and starts with kMark; in
// colour it is the colour with "[]" written over it, dark on a light cell and light on a dark one.
void cell(Line& line, float v, const PanelSet& set, const Panel& panel, std::size_t row, ColorDepth color,
          bool marked = false) {
  const double t = scale_position(v, set, panel, row);
  if (std::isnan(t)) {
    line.add(marked ? std::string(1, kMark) + "?" : "??");
    return;
  }
  if (color == ColorDepth::none) {
    const std::size_t mark = t <= 0.0 ? 0 : 1 + std::min<std::size_t>(8, static_cast<std::size_t>(t * 9.0));
    line.add(marked ? std::string(1, kMark) + kRamp[mark] : std::string(kCell, kRamp[mark]));
    return;
  }
  if (marked) {
    line.add(viridis_background(t, color) + (t > 0.5 ? "\x1b[30m" : "\x1b[97m") + "[]" + kReset, kCell);
    return;
  }
  line.add(viridis_background(t, color) + std::string(kCell, ' ') + kReset, kCell);
}

// The lines of one panel, each exactly `l.width` wide (padded), so panels can sit side by side.
std::vector<Line> draw_panel(const PanelSet& set, const Panel& panel, const Layout& l, ColorDepth color,
                             bool titled, const std::string& name, const std::vector<char>& marks) {
  std::vector<Line> lines;
  const std::size_t x0 = grid_left(l);
  if (titled) {
    Line title;
    // The mean of the heads says so on each panel: "attn_weights[0], mean of 4 heads".
    title.add(fit_label(set.head_mean ? name + index_str(panel.index) + ", " + set.note : index_str(panel.index),
                        l.width));
    lines.push_back(title);
  }
  // Columns numbered with at most two digits (a layer x head map's heads, key positions): a line
  // of tens and a line of units, each digit above its column, instead of a staircase as tall as
  // the columns are many.
  bool numeric = l.cols.size() > 0;
  for (std::size_t j = 0; j < l.cols.size(); ++j)
    if (l.cols[j] != kLeftOut && (l.col_text[j].empty() || l.col_text[j].size() > 2 ||
                                  l.col_text[j].find_first_not_of("0123456789") != std::string::npos))
      numeric = false;
  if (numeric) {
    Line tens, units;
    bool any_tens = false;
    tens.pad_to(x0);
    units.pad_to(x0);
    for (std::size_t j = 0; j < l.cols.size(); ++j) {
      const std::string& t = l.col_text[j];
      tens.pad_to(x0 + j * kCell + 1);
      units.pad_to(x0 + j * kCell + 1);
      if (l.cols[j] == kLeftOut) {
        units.add("~");
        continue;
      }
      if (t.size() == 2) tens.add(t.substr(0, 1)), any_tens = true;
      units.add(t.substr(t.size() - 1));
    }
    if (any_tens) lines.push_back(tens);
    lines.push_back(units);
  }
  // Labels of one character each (letters): one line, each above its column, instead of a
  // staircase as tall as the grid.
  bool single = !numeric && l.cols.size() > 0;
  for (std::size_t j = 0; single && j < l.cols.size(); ++j)
    if (l.cols[j] != kLeftOut && display_width(l.col_text[j]) != 1) single = false;
  if (single) {
    Line labels;
    for (std::size_t j = 0; j < l.cols.size(); ++j) {
      labels.pad_to(x0 + j * kCell);
      labels.add(l.cols[j] == kLeftOut ? "~" : l.col_text[j]);
    }
    lines.push_back(labels);
  }
  // The staircase: column j's label starts above column j, with ':' leading down from the labels
  // of the columns before it, as a plot's slanted tick labels would.
  for (std::size_t j = 0; !numeric && !single && j < l.cols.size(); ++j) {
    if (l.cols[j] == kLeftOut) continue;
    Line line;
    line.pad_to(x0);
    for (std::size_t i = 0; i < j; ++i) {
      if (l.cols[i] == kLeftOut) continue;
      line.pad_to(x0 + i * kCell);
      line.add(":");
    }
    line.pad_to(x0 + j * kCell);
    line.add(l.col_text[j]);
    lines.push_back(line);
  }
  for (std::size_t r : l.rows) {
    Line line;
    const std::string label = r == kLeftOut ? "~" : fit_label(set.row_labels[r], l.label_width);
    line.pad_to(l.label_width - display_width(label));
    line.add(label + " |");
    for (std::size_t c : l.cols) {
      if (r == kLeftOut || c == kLeftOut) line.add(std::string(kCell, '~'));
      else cell(line, panel.values[r * set.cols + c], set, panel, r, color, !marks.empty() && marks[r * set.cols + c]);
    }
    line.add("|");
    lines.push_back(line);
  }
  for (Line& line : lines) line.pad_to(l.width);
  return lines;
}

std::string trim_right(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// Said when the row scale was chosen for the learner (HeatmapScale::automatic): why, and the way out.
std::string auto_reason(const PanelSet& set) {
  return set.auto_row ? "every weight is within " + std::to_string(static_cast<int>(kNearUniform * 100)) +
                            "% of uniform (1/k over the k keys its row sees), so " : "";
}
std::string auto_escape(const PanelSet& set) {
  return set.auto_row ? "; --heatmap-scale global draws them as they are" : "";
}

std::string legend(const PanelSet& set, const Layout& l, std::size_t width, const HeatmapOptions& opts) {
  const bool row = set.per_row;
  const std::string lo = row ? "row min" : number(set.lo, opts.decimals),
                    hi = row ? "row max" : number(set.hi, opts.decimals);
  std::string out, notes;
  if (opts.color == ColorDepth::none) {
    notes = row ? "scale: " + auto_reason(set) + "each row from its smallest weight (.) to its largest (@), " +
                      std::string(kRamp + 1) + " in 9 equal steps; blank is exactly 0" + auto_escape(set)
                : "scale: blank is exactly " + lo + "; " + std::string(kRamp + 1) + " climb in 9 equal steps to " + hi;
  } else {
    // The bar shows the colours a cell can take: in 256 colours every step of the palette's ramp
    // once (each an equal band of the scale), in true colour ten samples of the continuous map.
    const std::size_t swatches = opts.color == ColorDepth::xterm256 ? xterm256_viridis_ramp().size() : 10;
    Line bar;
    bar.add("scale: " + lo + " ");
    const bool steps = opts.color == ColorDepth::xterm256;
    for (std::size_t i = 0; i < swatches; ++i) {
      const double t = steps ? (i + 0.5) / static_cast<double>(swatches) : i / 9.0;  // a band's middle, or a sample
      bar.add(viridis_background(t, opts.color) + " " + kReset, 1);
    }
    bar.add(" " + hi);
    if (steps) bar.add(" (" + std::to_string(swatches) + " equal steps)");
    if (bar.width <= width) out += bar.text + "\n";
    else notes = "scale: dark purple is " + lo + ", yellow is " + hi;  // a very narrow terminal
    if (row)
      notes = "scale: " + auto_reason(set) + "each row from its smallest weight to its largest (bright); exactly 0 "
              "is the darkest" + auto_escape(set);
  }
  const bool left_out = l.rows.size() != set.rows || l.cols.size() != set.cols;
  if (!notes.empty()) out += wrap(notes, width, "", "  ");
  // One line (or more, wrapped) per further mark, so each reads on its own.
  if (set.has_flat_row) out += wrap("a row with one value throughout is drawn mid-scale", width, "", "  ");
  if (set.has_nan) out += wrap("?? is nan" + (set.nan_cause.empty() ? "" : ": " + set.nan_cause), width, "", "  ");
  if (left_out)
    out += wrap("~ stands for rows or columns left out (" + std::to_string(set.rows) + " x " +
                    std::to_string(set.cols) + " in all)",
                width, "", "  ");
  return out;
}

// The legend of the marked cells: what they are, and how many of them are their row's largest
// weight (ties included) in each panel drawn.
std::string marks_legend(const TensorItem& t, const PanelSet& set, std::size_t drawn, std::size_t width,
                         ColorDepth color) {
  if (t.marked.empty() || t.marked_what.empty()) return "";
  std::vector<std::string> counts;
  std::size_t total = 0;
  for (const auto& cell : t.marked) total += cell.first < set.rows && cell.second < set.cols;
  for (std::size_t p = 0; p < drawn; ++p) {
    const Panel& panel = set.panels[p];
    std::size_t largest = 0;
    for (const auto& cell : t.marked) {
      const std::size_t r = cell.first, c = cell.second;
      if (r >= set.rows || c >= set.cols) continue;
      const float* row = panel.values + r * set.cols;
      float most = -std::numeric_limits<float>::infinity();
      for (std::size_t k = 0; k < set.cols; ++k)
        if (!std::isnan(row[k])) most = std::max(most, row[k]);
      largest += !std::isnan(row[c]) && row[c] >= most;
    }
    counts.push_back(std::to_string(largest) + " of " + std::to_string(total) +
                     (drawn > 1 ? " in " + index_str(panel.index) : ""));
  }
  std::string joined;
  for (std::size_t i = 0; i < counts.size(); ++i)
    joined += (i == 0 ? "" : i + 1 == counts.size() ? " and " : ", ") + counts[i];
  const std::string glyph = color == ColorDepth::none ? std::string(1, kMark) : "[]";
  return wrap(glyph + " marks " + t.marked_what + "; " + joined + " marked cells are their row's largest weight",
              width, "", "  ");
}

}  // namespace

std::string render_heatmap(const TensorItem& t, const HeatmapOptions& opts) {
  PanelView view = opts.view;
  view.repeated_batch_once = true;  // one grid per head, not B copies of it
  const PanelSet set = panels_of(t, view);
  if (set.panels.empty() || set.rows == 0 || set.cols == 0) return "";
  const std::size_t width = std::max(opts.width, kMinHeatmapWidth);
  const std::size_t leading = t.shape.size() >= 2 ? t.shape.size() - 2 : 0;
  const bool many = set.panels.size() > 1 || leading > 0;
  const bool mean = set.head_mean;

  // Attention weights: rows attend to columns. A map of another kind (a score per layer and head)
  // names its axes instead.
  const bool attends = t.row_axis != "layers";  // a (layers, heads) map of scores is the other kind
  const std::string axes = attends ? " (rows attend to columns)" : " (" + t.row_axis + " down, " + t.col_axis + " across)";
  std::string out = many ? wrap("heatmaps of " + t.name + " " + shape_str(t.shape) +
                                    (set.note.empty() ? "" : ", " + set.note) + ", one per " +
                                    index_names(leading - (mean ? 1 : 0)) + axes,
                                width, "", "  ")
                         : wrap("heatmap of " + t.name + axes, width, "", "  ");
  if (set.batch_drawn_once) out += wrap(batch_drawn_once_line(set.batch_drawn_once), width, "", "  ");
  // The marked cells, as a flag per (row, column) of a panel.
  std::vector<char> marks;
  if (!t.marked.empty()) {
    marks.assign(set.rows * set.cols, 0);
    for (const auto& [r, c] : t.marked)
      if (r < set.rows && c < set.cols) marks[r * set.cols + c] = 1;
  }
  Layout l = layout_for(set, width, opts);
  if (!l.fits) return out + wrap("(too narrow to draw: the grid needs more columns)", width, "", "");
  // A long batch would print a grid per entry (65,536 entries: megabytes): the first panels are
  // drawn, as --svg draws at most that many files, and a line says how many were left out.
  const std::size_t drawn = std::min(set.panels.size(), kMaxHeatmapPanels);
  if (many) {
    // Panel titles such as "[12, 3]" must fit too.
    for (std::size_t i = 0; i < drawn; ++i) {
      const Panel& p = set.panels[i];
      l.width = std::max(l.width, std::min(width, display_width(mean ? t.name + index_str(p.index) + ", " + set.note
                                                                    : index_str(p.index))));
    }
  }

  const std::size_t per_band = std::max<std::size_t>(1, (width + kPanelGap) / (l.width + kPanelGap));
  for (std::size_t first = 0; first < drawn; first += per_band) {
    if (first > 0) out += "\n";
    const std::size_t last = std::min(drawn, first + per_band);
    std::vector<std::vector<Line>> band;
    for (std::size_t p = first; p < last; ++p)
      band.push_back(draw_panel(set, set.panels[p], l, opts.color, many, t.name, marks));
    for (std::size_t i = 0; i < band.front().size(); ++i) {
      std::string line;
      for (std::size_t p = 0; p < band.size(); ++p) line += (p ? std::string(kPanelGap, ' ') : "") + band[p][i].text;
      out += trim_right(line) + "\n";
    }
  }
  if (drawn < set.panels.size())
    out += wrap("... and " + std::to_string(set.panels.size() - drawn) + " more grids like these, left out (the first " +
                    std::to_string(drawn) + " of " + std::to_string(set.panels.size()) +
                    " are drawn; the scale covers them all)",
                width, "", "  ");
  return out + legend(set, l, width, opts) + marks_legend(t, set, drawn, width, opts.color);
}

}  // namespace attn::report
