#include "report/svg_heatmap.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "report/colormap.hpp"
#include "report/svg_text.hpp"

namespace attn::report {

using svg::num;
using svg::text_width;
using svg::xml;

namespace {

std::string panel_caption(const std::vector<std::size_t>& index, const PanelSet& set) {
  if (index.size() == 1) return "batch " + std::to_string(index[0]) + (set.head_mean ? ", " + set.note : "");
  if (index.size() == 2) return "batch " + std::to_string(index[0]) + ", head " + std::to_string(index[1]);
  return index_str(index);
}


// The label of N * 10^E, from the integers, so that no binary rounding shows ("0.30000000000000004").
// `scientific`: "2e-4", "1.5e-3" instead of decimals.
std::string decimal_label(long long N, int E, bool scientific) {
  if (N == 0) return "0";
  while (N % 10 == 0) N /= 10, ++E;
  const std::string sign = N < 0 ? "-" : "";
  std::string digits = std::to_string(N < 0 ? -N : N);
  if (scientific) {
    const int p = static_cast<int>(digits.size()) - 1 + E;
    return sign + digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "") + "e" + std::to_string(p);
  }
  if (E >= 0) return sign + digits + std::string(static_cast<std::size_t>(E), '0');
  const auto decimals = static_cast<std::size_t>(-E);
  if (digits.size() <= decimals) digits.insert(0, decimals - digits.size() + 1, '0');
  return sign + digits.substr(0, digits.size() - decimals) + "." + digits.substr(digits.size() - decimals);
}

}  // namespace

std::vector<Tick> round_ticks(double lo, double hi) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(hi > lo)) return {{lo, std::isfinite(lo) ? fixed(lo, 4) : "nan"}};
  // A span lost in the size of its ends (1e20 to 1e20 + 1e6) has no round steps a double can
  // count: its two ends, as they are.
  if ((std::fabs(lo) + std::fabs(hi)) / (hi - lo) > 1e12) return {{lo, scientific(lo, 6)}, {hi, scientific(hi, 6)}};
  // A step is mant * 10^exp; the ticks are the multiples k of it inside [lo, hi].
  struct Choice {
    long long mant = 1;
    int exp = 0;
    long long first = 0, last = -1;
    long long count() const { return last - first + 1; }
  };
  auto choice = [&](long long mant, int exp) {
    Choice c{mant, exp};
    const double step = static_cast<double>(mant) * std::pow(10.0, exp);
    const double slack = 1e-9;  // an end that is a multiple up to rounding counts as one
    c.first = static_cast<long long>(std::ceil(lo / step - slack));
    c.last = static_cast<long long>(std::floor(hi / step + slack));
    return c;
  };
  auto in_range = [](const Choice& c) { return c.count() >= 4 && c.count() <= 7; };
  auto miss = [](const Choice& c) { return c.count() < 4 ? 4 - c.count() : c.count() > 7 ? c.count() - 7 : 0; };
  const int top = static_cast<int>(std::floor(std::log10(hi - lo)));
  std::vector<Choice> round, quarter;  // 1, 2, 5 steps; 2.5 steps
  for (int e = top - 2; e <= top + 1; ++e) {
    for (long long m : {1, 2, 5}) round.push_back(choice(m, e));
    quarter.push_back(choice(25, e - 1));
  }
  // The count nearest 5, the larger on a tie (more numbers to read the colours by).
  auto better = [](const Choice& a, const Choice& b) {
    const long long da = std::llabs(a.count() - 5), db = std::llabs(b.count() - 5);
    return da != db ? da < db : a.count() > b.count();
  };
  const Choice* best = nullptr;
  for (const auto* set : {&round, &quarter}) {
    for (const Choice& c : *set)
      if (in_range(c) && (!best || better(c, *best))) best = &c;
    if (best) break;
  }
  if (!best)
    for (const Choice& c : round)
      if (!best || miss(c) < miss(*best)) best = &c;
  // Decimals for steps from 0.001 up, exponents below (a weight of 0.0002 reads better as 2e-4).
  const bool scientific = static_cast<double>(best->mant) * std::pow(10.0, best->exp) < 1e-3 * (1 - 1e-9);
  std::vector<Tick> ticks;
  for (long long k = best->first; k <= best->last; ++k) {
    const long long N = k * best->mant;
    ticks.push_back({static_cast<double>(N) * std::pow(10.0, best->exp), decimal_label(N, best->exp, scientific)});
  }
  return ticks;
}

std::string svg_picture(const Header& h, const Stage& s, std::size_t total_stages, const TensorItem& t,
                        const PanelSet& set, const Panel& panel) {
  const std::size_t R = set.rows, C = set.cols;
  // With --heatmap-scale row each row has its own ends, so the colour bar is a place in the row's
  // range: 0 at its min, 1 at its max.
  const std::string row_scale_words =
      std::string(set.auto_row ? "every weight within " + std::to_string(static_cast<int>(kNearUniform * 100)) +
                                     "% of uniform, so each row"
                               : "each row") + " from its smallest weight to its largest (bright); exactly 0 is the darkest";
  const double bar_lo = set.per_row ? 0.0 : set.lo, bar_hi = set.per_row ? 1.0 : set.hi;
  std::vector<Tick> ticks = round_ticks(bar_lo, bar_hi);
  if (set.per_row)
    for (Tick& k : ticks) k.label += k.value == 0.0 ? " = row min" : k.value == 1.0 ? " = row max" : "";
  const double label_font = 12.0, axis_font = 12.0;
  // Cells as large as reads well: 48 px for a handful of tokens, smaller for long sentences.
  const double cell = std::clamp(std::floor(560.0 / static_cast<double>(std::max(R, C))), 12.0, 48.0);
  const bool annotate = cell >= 30.0;
  const double value_font = std::min(12.0, std::floor(cell * 0.3));
  const double tick_font = std::min(label_font, std::floor(cell * 0.75));

  double row_label_w = 0.0, col_label_w = 0.0;
  for (const auto& l : set.row_labels) row_label_w = std::max(row_label_w, text_width(l, tick_font));
  for (const auto& l : set.col_labels) col_label_w = std::max(col_label_w, text_width(l, tick_font));

  // The words for the axes and the bar; a tensor marked by hand (tests) gets attention's defaults.
  const std::string row_title = t.row_axis.empty() ? "queries" : t.row_axis;
  const std::string col_title = t.col_axis.empty() ? "keys" : t.col_axis;
  std::vector<std::string> bar_titles = {t.value_name.empty() ? "attention weight" : t.value_name};
  if (set.per_row) bar_titles.push_back("place in its row's range");
  const std::string training =
      t.training.kind == Training::Kind::untrained
          ? "untrained weights: drawn at random, nothing learned yet; the pattern shows the mechanism, not meaning"
      : t.training.kind == Training::Kind::trained
          ? "weights trained for " + std::to_string(t.training.steps) + " step" + (t.training.steps == 1 ? "" : "s")
          : "";

  const std::string title = t.name + index_str(panel.index) + (panel.index.empty() ? "" : ": " + panel_caption(panel.index, set));
  const std::string subtitle = h.invocation() + ", stage " + std::to_string(s.index) + "/" +
                               std::to_string(total_stages) + ": " + s.title;
  const bool attends = t.row_axis != "layers";  // a (layers, heads) map of scores is the other kind
  const std::string axes = (attends ? "rows attend to columns" : t.row_axis + " down, " + t.col_axis + " across") + "; shape " + std::to_string(R) + " x " + std::to_string(C) +
                           (set.per_row ? "; " + row_scale_words
                            : set.panels.size() > 1 ? "; one colour scale for all " + std::to_string(set.panels.size()) +
                                                        " matrices of " + t.name + " " + shape_str(t.shape)
                                                    : "");

  // Top to bottom: three or four header lines, the column axis's title, the slanted column labels
  // (their height is their measured width times sin 45), then the grid.
  const double margin = 16.0;
  const double header_bottom = training.empty() ? 64.0 : 82.0;
  const double col_title_y = header_bottom + 22.0;  // its baseline
  const double top = col_title_y + 6.0 + col_label_w * 0.7071 + tick_font + 6.0;
  // Left to right: the row axis's title (turned a quarter), the row labels, the grid, the bar,
  // its tick labels, the bar's title (turned likewise).
  const double row_title_x = margin + axis_font * 0.8;  // its baseline, turned
  const double left = margin + axis_font * 1.2 + 8.0 + row_label_w + 10.0;
  const double grid_w = cell * static_cast<double>(C), grid_h = cell * static_cast<double>(R);
  double bar_title_w = 0.0;
  for (const auto& line : bar_titles) bar_title_w = std::max(bar_title_w, text_width(line, axis_font));
  const double row_title_w = text_width(row_title, axis_font);
  const double bar_x = left + grid_w + 24.0, bar_w = 14.0, bar_h = std::max({grid_h, 120.0, bar_title_w + 8.0});
  double tick_w = 0.0;
  for (const Tick& k : ticks) tick_w = std::max(tick_w, text_width(k.label, label_font));
  const double bar_title_x = bar_x + bar_w + 7.0 + tick_w + 8.0 + axis_font * 0.8;  // the first line's baseline
  const double line_step = axis_font * 1.3;
  double width = bar_title_x + line_step * static_cast<double>(bar_titles.size() - 1) + axis_font * 0.4 + margin;
  width = std::max({width, margin * 2 + text_width(title, 15.0), margin * 2 + text_width(subtitle, 12.0),
                    margin * 2 + text_width(axes, 11.0), margin * 2 + text_width(training, 11.0)});
  // The last column's slanted label reaches past the grid on the right.
  width = std::max(width, left + grid_w + col_label_w * 0.7071 + margin);
  // The column title sits over the grid's middle, moved right if it would pass the left margin.
  const double col_title_w = text_width(col_title, axis_font);
  const double col_title_x = std::max(left + grid_w / 2.0, margin + col_title_w / 2.0);
  width = std::max(width, col_title_x + col_title_w / 2.0 + margin);
  // The row title is centred on the grid. Longer than the grid, it may rise beside the slanted
  // column labels (they start right of it) up to under the column title, and then runs down.
  const double row_title_room = col_title_y + 8.0;
  const double row_title_mid = std::max(top + grid_h / 2.0, row_title_room + row_title_w / 2.0);
  const double body_bottom = std::max({top + grid_h, top + bar_h, row_title_mid + row_title_w / 2.0});
  const double height = body_bottom + (set.has_nan ? 44.0 : 24.0);

  std::string o;
  o += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) + "\" height=\"" + num(height) +
       "\" viewBox=\"0 0 " + num(width) + " " + num(height) +
       "\" font-family=\"DejaVu Sans, Verdana, Arial, sans-serif\">\n";
  o += "<title>" + xml(title + " - " + subtitle + (training.empty() ? "" : " - " + training)) + "</title>\n";
  o += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  o += "<text x=\"" + num(margin) + "\" y=\"26\" font-size=\"15\" font-weight=\"bold\" fill=\"#111\">" + xml(title) + "</text>\n";
  o += "<text x=\"" + num(margin) + "\" y=\"46\" font-size=\"12\" fill=\"#333\">" + xml(subtitle) + "</text>\n";
  o += "<text x=\"" + num(margin) + "\" y=\"64\" font-size=\"11\" fill=\"#666\">" + xml(axes) + "</text>\n";
  if (!training.empty())
    o += "<text class=\"training\" x=\"" + num(margin) + "\" y=\"82\" font-size=\"11\" font-weight=\"bold\" fill=\"" +
         (t.training.kind == Training::Kind::untrained ? "#a34700" : "#2e6b30") + "\">" + xml(training) + "</text>\n";

  // The axes' titles: the columns' over their labels, the rows' turned a quarter to read upwards.
  o += "<g font-size=\"" + num(axis_font) + "\" fill=\"#333\" text-anchor=\"middle\">\n";
  o += "<text class=\"col-axis\" x=\"" + num(col_title_x) + "\" y=\"" + num(col_title_y) + "\">" + xml(col_title) +
       "</text>\n";
  o += "<text class=\"row-axis\" x=\"" + num(row_title_x) + "\" y=\"" + num(row_title_mid) + "\" transform=\"rotate(-90 " +
       num(row_title_x) + " " + num(row_title_mid) + ")\">" + xml(row_title) + "</text>\n";
  o += "</g>\n";

  // Column tick labels, slanted up to the right from above each column.
  o += "<g font-size=\"" + num(tick_font) + "\" fill=\"#111\">\n";
  for (std::size_t c = 0; c < C; ++c) {
    const double x = left + cell * (static_cast<double>(c) + 0.5), y = top - 6.0;
    o += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" transform=\"rotate(-45 " + num(x) + " " + num(y) + ")\">" +
         xml(set.col_labels[c]) + "</text>\n";
  }
  for (std::size_t r = 0; r < R; ++r) {
    const double y = top + cell * (static_cast<double>(r) + 0.5);
    o += "<text x=\"" + num(left - 8.0) + "\" y=\"" + num(y) + "\" dy=\"0.35em\" text-anchor=\"end\">" +
         xml(set.row_labels[r]) + "</text>\n";
  }
  o += "</g>\n";

  // The cells; a tooltip names the pair and the exact value.
  o += "<g font-size=\"" + num(value_font) + "\" text-anchor=\"middle\">\n";
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t c = 0; c < C; ++c) {
      const float v = panel.values[r * C + c];
      const double x = left + cell * static_cast<double>(c), y = top + cell * static_cast<double>(r);
      const bool nan = std::isnan(v);  // an exact 0 (masked) prints as "0", a small weight as "0.00"
      const Rgb fill = nan ? Rgb{224, 224, 224} : viridis(scale_position(v, set, panel, r));
      const std::string value = nan ? "nan" : fixed(v, 4);
      o += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(cell) + "\" height=\"" + num(cell) +
           "\" fill=\"" + hex(fill) + "\"><title>" + xml(set.row_labels[r] + " -> " + set.col_labels[c] + ": " + value) +
           "</title></rect>\n";
      if (annotate) {
        const char* ink = nan ? "#b00020" : luma(fill) < 0.5 ? "#ffffff" : "#000000";
        o += "<text x=\"" + num(x + cell / 2) + "\" y=\"" + num(y + cell / 2) + "\" dy=\"0.35em\" fill=\"" + ink + "\">" +
             (nan ? std::string("nan") : v == 0.0f ? std::string("0") : fixed(v, 2)) + "</text>\n";
      }
    }
  o += "</g>\n";
  o += "<rect x=\"" + num(left) + "\" y=\"" + num(top) + "\" width=\"" + num(grid_w) + "\" height=\"" + num(grid_h) +
       "\" fill=\"none\" stroke=\"#444\" stroke-width=\"1\"/>\n";

  // The colour bar: the same map, bottom (lowest) to top (highest), ticked at round values; its
  // tooltip gives the exact ends.
  o += "<defs><linearGradient id=\"scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n";
  for (int k = 0; k <= 32; ++k)
    o += "<stop offset=\"" + fixed(k / 32.0, 4) + "\" stop-color=\"" + hex(viridis(k / 32.0)) + "\"/>\n";
  o += "</linearGradient></defs>\n";
  o += "<rect x=\"" + num(bar_x) + "\" y=\"" + num(top) + "\" width=\"" + num(bar_w) + "\" height=\"" + num(bar_h) +
       "\" fill=\"url(#scale)\" stroke=\"#444\" stroke-width=\"1\"><title>scale: " +
       (set.per_row ? row_scale_words
                    : "from " + fixed(set.lo, 4) + " (dark) to " + fixed(set.hi, 4) + " (bright), the largest value drawn") +
       "</title></rect>\n";
  o += "<g class=\"bar-ticks\" font-size=\"" + num(label_font) + "\" fill=\"#111\">\n";
  for (const Tick& k : ticks) {
    const double y = top + bar_h * (1.0 - (k.value - bar_lo) / (bar_hi - bar_lo));
    o += "<line x1=\"" + num(bar_x + bar_w) + "\" y1=\"" + num(y) + "\" x2=\"" + num(bar_x + bar_w + 4) + "\" y2=\"" +
         num(y) + "\" stroke=\"#444\"/>\n";
    o += "<text x=\"" + num(bar_x + bar_w + 7) + "\" y=\"" + num(y) + "\" dy=\"0.35em\">" + xml(k.label) + "</text>\n";
  }
  o += "</g>\n";
  o += "<g font-size=\"" + num(axis_font) + "\" fill=\"#333\" text-anchor=\"middle\">\n";
  for (std::size_t i = 0; i < bar_titles.size(); ++i) {
    const double x = bar_title_x + line_step * static_cast<double>(i), y = top + bar_h / 2.0;
    o += "<text class=\"bar-title\" x=\"" + num(x) + "\" y=\"" + num(y) + "\" transform=\"rotate(-90 " + num(x) + " " +
         num(y) + ")\">" + xml(bar_titles[i]) + "</text>\n";
  }
  o += "</g>\n";
  if (set.has_nan)
    o += "<text x=\"" + num(margin) + "\" y=\"" + num(height - 14) + "\" font-size=\"11\" fill=\"#b00020\">" +
         xml("grey cells are nan" + (set.nan_cause.empty() ? "" : ": " + set.nan_cause)) + "</text>\n";
  o += "</svg>\n";
  return o;
}

}  // namespace attn::report
