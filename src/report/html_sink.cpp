#include "report/html_sink.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "report/colormap.hpp"
#include "report/html_assets.hpp"  // generated from src/report/html/ (scripts/embed_html.cmake)
#include "report/manifest.hpp"     // json_string
#include "report/panels.hpp"       // head_count
#include "report/staging.hpp"
#include "report/tensor_format.hpp"

namespace fs = std::filesystem;

namespace attn::report {

// Heatmap values in base64 float32, the text, the style sheet and script, and about 300 KB for the
// page's frame (titles, equations, shapes, labels, JSON punctuation) stay within the stated budget.
static_assert(kHtmlHeatmapValues * 16 / 3 + kHtmlTextBytes + sizeof(kHtmlPageCss) + sizeof(kHtmlPageJs) + (300u << 10) <=
                  kHtmlPageBudget,
              "the --html limits no longer fit the page budget");

namespace {

std::size_t count_of(const Shape& s) {
  std::size_t n = 1;
  for (std::size_t d : s) n *= d;
  return n;
}

std::string base64(const unsigned char* p, std::size_t n) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    const unsigned v = (p[i] << 16) | (p[i + 1] << 8) | p[i + 2];
    out += k[v >> 18], out += k[(v >> 12) & 63], out += k[(v >> 6) & 63], out += k[v & 63];
  }
  if (n - i == 1) {
    const unsigned v = p[i] << 16;
    out += k[v >> 18], out += k[(v >> 12) & 63], out += "==";
  } else if (n - i == 2) {
    const unsigned v = (p[i] << 16) | (p[i + 1] << 8);
    out += k[v >> 18], out += k[(v >> 12) & 63], out += k[(v >> 6) & 63], out += '=';
  }
  return out;
}

std::string num(double v) {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v < 0 ? "\"-inf\"" : "\"inf\"";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string list(const std::vector<std::string>& items) {
  std::string s = "[";
  for (std::size_t i = 0; i < items.size(); ++i) s += (i ? "," : "") + json_string(items[i]);
  return s + "]";
}

std::string shape_list(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

// "queries" -> "query", "keys" -> "key", "layers" -> "layer": what one row or column is called in
// a tooltip.
std::string one_of(const std::string& axis) {
  if (axis.size() > 3 && axis.compare(axis.size() - 3, 3, "ies") == 0) return axis.substr(0, axis.size() - 3) + "y";
  if (axis.size() > 1 && axis.back() == 's' && axis[axis.size() - 2] != 's') return axis.substr(0, axis.size() - 1);
  return axis;
}

// The model view's source: a model run's `attentions` (L, B, h, T, T), kept but not printed.
bool is_model_attentions(const TensorItem& t) {
  return t.name == "attentions" && t.shape.size() == 5 && t.shape[3] == t.shape[4] && !t.values.empty();
}

bool drawn_as_heatmap(const TensorItem& t) {
  return t.attention && t.curve_x.empty() && !t.shape.empty() && !t.values.empty() && t.values.size() == count_of(t.shape);
}

// A tensor as heatmap panels: the leading axes, then rows x cols.
struct Matrix {
  const TensorItem* t = nullptr;
  std::size_t panels = 1, rows = 1, cols = 1;
  bool tril = false;  // square, every value above the diagonal exactly 0 (a causal mask): only the lower triangle is kept
};

Matrix matrix_of(const TensorItem& t) {
  Matrix m;
  m.t = &t;
  const std::size_t r = t.shape.size();
  m.cols = t.shape[r - 1];
  m.rows = r >= 2 ? t.shape[r - 2] : 1;
  m.panels = m.rows != 0 && m.cols != 0 ? t.values.size() / (m.rows * m.cols) : 0;
  if (m.rows == m.cols && m.rows > 1) {
    m.tril = true;
    for (std::size_t p = 0; p < m.panels && m.tril; ++p)
      for (std::size_t i = 0; i < m.rows && m.tril; ++i)
        for (std::size_t j = i + 1; j < m.cols; ++j)
          if (t.values[(p * m.rows + i) * m.cols + j] != 0.0f) {
            m.tril = false;
            break;
          }
  }
  return m;
}

// Values kept of `m` when every heatmap keeps its first `side` tokens (0: all).
std::size_t cost(const Matrix& m, std::size_t side) {
  const std::size_t r = side ? std::min(m.rows, side) : m.rows, c = side ? std::min(m.cols, side) : m.cols;
  return m.panels * (m.tril ? r * (r + 1) / 2 : r * c);
}

std::vector<Matrix> matrices(const Report& report) {
  std::vector<Matrix> out;
  for (const Stage& s : report.stages())
    for (const Item& item : s.items)
      if (const auto* t = std::get_if<TensorItem>(&item); t && (drawn_as_heatmap(*t) || is_model_attentions(*t)))
        out.push_back(matrix_of(*t));
  return out;
}

// The largest number of tokens every heatmap may keep within kHtmlHeatmapValues (0: all of them,
// when they fit whole and no side passes kHtmlMaxSide).
std::size_t plan_side(const std::vector<Matrix>& ms, std::size_t& kept) {
  auto total = [&](std::size_t side) {
    std::size_t sum = 0;
    for (const Matrix& m : ms) sum += cost(m, side);
    return sum;
  };
  std::size_t largest = 0;
  for (const Matrix& m : ms) largest = std::max({largest, m.rows, m.cols});
  if (largest <= kHtmlMaxSide && total(0) <= kHtmlHeatmapValues) {
    kept = total(0);
    return 0;
  }
  std::size_t side = std::min(largest, kHtmlMaxSide);
  while (side > 1 && total(side) > kHtmlHeatmapValues) --side;
  kept = total(side);
  return side;
}

// The matrix's values as the page keeps them: each panel's first r rows and c columns (the lower
// triangle only, when tril), in base64 float32 (little-endian, as every browser's Float32Array
// reads it on the machines attn runs on).
std::string packed(const Matrix& m, std::size_t r, std::size_t c) {
  std::vector<float> v;
  v.reserve(cost(m, std::max(r, c)));
  const float* d = m.t->values.data();
  for (std::size_t p = 0; p < m.panels; ++p)
    for (std::size_t i = 0; i < r; ++i) {
      const float* row = d + (p * m.rows + i) * m.cols;
      v.insert(v.end(), row, row + (m.tril ? i + 1 : c));
    }
  return base64(reinterpret_cast<const unsigned char*>(v.data()), v.size() * sizeof(float));
}

// The run's tokens, as the manifest finds them: the row labels of the first labelled tensor.
const Labels* run_tokens(const Report& report) {
  for (const Stage& s : report.stages())
    for (const Item& item : s.items)
      if (const auto* t = std::get_if<TensorItem>(&item); t && !t->row_labels.empty()) return &t->row_labels;
  return nullptr;
}

std::vector<std::string> labels_or_indices(const Labels& l, std::size_t n, std::size_t keep) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < keep && i < n; ++i) out.push_back(l.size() == n ? l[i] : std::to_string(i));
  return out;
}

// What the leading axes of an attention tensor are called (panels.hpp: (B, h, T, S) is [b, h]).
std::vector<std::string> lead_names(const Shape& s) {
  const std::size_t lead = s.size() >= 2 ? s.size() - 2 : 0;
  if (lead == 1) return {"batch"};
  if (head_count(s)) return {"batch", "head"};
  std::vector<std::string> n;
  for (std::size_t i = 0; i < lead; ++i) n.push_back(std::string("axis ") + std::to_string(i));
  return n;
}

std::string training_text(const Training& t) {
  if (t.kind == Training::Kind::untrained) return "untrained weights (drawn from the seed)";
  if (t.kind == Training::Kind::trained) return "weights trained for " + with_commas(t.steps) + " steps";
  return "";
}

// The colour scale of a tensor, as panels.hpp sets it: 0 (or the smallest value, if negative) to
// the largest finite value, over the whole tensor (cut or not).
void scale_of(const TensorItem& t, double& lo, double& hi) {
  lo = 0.0, hi = -INFINITY;
  for (float v : t.values)
    if (std::isfinite(v)) lo = std::min<double>(lo, v), hi = std::max<double>(hi, v);
  if (!(hi > lo)) hi = lo + 1.0;
}

// {"rows": ..., "cols": ..., "f32": ...}: the heatmap part of an attention tensor's entry.
std::string heatmap_json(const Matrix& m, std::size_t side, std::size_t lead_axes, std::vector<std::string> names,
                         int head_axis, const Labels* tokens = nullptr) {
  const TensorItem& t = *m.t;
  // A tensor kept without labels (a model run's `attentions`) over the run's T tokens takes them.
  const Labels& row_labels = t.row_labels.empty() && tokens && tokens->size() == m.rows ? *tokens : t.row_labels;
  const std::size_t r = side ? std::min(m.rows, side) : m.rows, c = side ? std::min(m.cols, side) : m.cols;
  double lo, hi;
  scale_of(t, lo, hi);
  Shape lead(t.shape.begin(), t.shape.begin() + static_cast<long>(lead_axes));
  std::string j = "{\"lead\":" + shape_list(lead) + ",\"lead_names\":" + list(names) + ",\"head_axis\":" +
                  std::to_string(head_axis) + ",\"rows\":" + std::to_string(r) + ",\"cols\":" + std::to_string(c) +
                  ",\"full_rows\":" + std::to_string(m.rows) + ",\"full_cols\":" + std::to_string(m.cols) +
                  ",\"tril\":" + (m.tril ? "true" : "false") + ",\"lo\":" + num(lo) + ",\"hi\":" + num(hi);
  // A model run's `attentions` is kept rather than shown, so it names no axes: they are its queries and keys.
  const bool model = is_model_attentions(t);
  const std::string row_axis = !t.row_axis.empty() ? t.row_axis : model ? "queries" : "rows";
  const std::string col_axis = !t.col_axis.empty() ? t.col_axis : model ? "keys" : "columns";
  const std::string value = !t.value_name.empty() ? t.value_name : model ? "attention weight" : "value";
  j += ",\"row_axis\":" + json_string(row_axis) + ",\"col_axis\":" + json_string(col_axis) +
       ",\"row_one\":" + json_string(one_of(row_axis)) + ",\"col_one\":" + json_string(one_of(col_axis)) +
       ",\"value_name\":" + json_string(value);
  // Square weights without column labels are tokens against the same tokens.
  const Labels& cols = t.col_labels.empty() && m.rows == m.cols ? row_labels : t.col_labels;
  j += ",\"row_labels\":" + list(labels_or_indices(row_labels, m.rows, r)) +
       ",\"col_labels\":" + list(labels_or_indices(cols, m.cols, c)) +
       ",\"row_labelled\":" + (row_labels.size() == m.rows ? "true" : "false") +
       ",\"col_labelled\":" + (cols.size() == m.cols ? "true" : "false");
  const std::string training = training_text(t.training);
  if (!training.empty()) j += ",\"training\":" + json_string(training);
  if (r < m.rows || c < m.cols) {
    std::string note = "The page keeps the first " + std::to_string(r) + " of " + std::to_string(m.rows) + " " + row_axis;
    note += c < m.cols ? " and " + std::to_string(c) + " of " + std::to_string(m.cols) + " " + col_axis : " and every " + one_of(col_axis);
    note += " (its budget is " + with_commas(kHtmlHeatmapValues) + " heatmap values, " + std::to_string(kHtmlMaxSide) +
            " tokens a side). ";
    note += m.tril ? "The weights are causal: the " + one_of(row_axis) + " rows shown attend only to the " + col_axis +
                         " shown, so each row is whole."
                   : "Rows shown lose their later " + col_axis + ", so they do not add up to the whole.";
    note += " --dump DIR writes every value.";
    j += ",\"cut\":" + json_string(note);
  }
  return j + ",\"f32\":\"" + packed(m, r, c) + "\"}";
}

// The printed values of a tensor (PyTorch's format) and how many of its values they show.
std::string printed_json(const TensorItem& t, const HtmlOptions& o, std::size_t& text_used, std::size_t& without_text) {
  if (t.values.size() != count_of(t.shape) || t.values.empty()) return ",\"no_values\":\"values not computed in this run\"";
  if (!t.printed) return ",\"no_values\":\"kept for --dump, --npz and --format json; not printed\"";
  if (text_used >= kHtmlTextBytes) {
    ++without_text;
    return ",\"no_values\":" + json_string("values left out: the page's " + std::to_string(kHtmlTextBytes >> 10) +
                                           " KiB of printed values is spent (--dump DIR writes every value)");
  }
  PrintOptions p;
  p.precision = o.precision;
  const std::string text = format_tensor(t, p);
  text_used += text.size();
  std::string j = ",\"text\":" + json_string(text);
  std::size_t shown = 1;  // PyTorch keeps the first and last `edgeitems` of each longer axis
  for (std::size_t d : t.shape) shown *= std::min(d, 2 * p.edgeitems);
  if (t.values.size() > p.threshold && shown < t.values.size()) {
    j += ",\"summarised\":" + json_string("summarised as PyTorch prints it: " + with_commas(shown) + " of " +
                                          with_commas(t.values.size()) + " values shown, " +
                                          with_commas(t.values.size() - shown) + " left out");
  }
  return j;
}

std::string curve_json(const TensorItem& t) {
  const std::size_t n = std::min(t.values.size(), kHtmlCurvePoints);
  std::string j = ",\"curve_x\":" + json_string(t.curve_x) + ",\"curve\":[";
  for (std::size_t i = 0; i < n; ++i) j += (i ? "," : "") + num(t.values[i]);
  j += "]";
  if (n < t.values.size()) j += ",\"curve_note\":" + json_string("the first " + with_commas(n) + " of " + with_commas(t.values.size()) + " points");
  return j;
}

std::string table_json(const TableItem& tb) {
  constexpr std::size_t kHead = 32, kTail = 8;
  std::string j = "{\"kind\":\"table\",\"header\":" + list(tb.header) + ",\"rows\":[";
  const bool cut = tb.rows.size() > kHtmlTableRows;
  bool first = true;
  for (std::size_t i = 0; i < tb.rows.size(); ++i) {
    if (cut && i >= kHead && i < tb.rows.size() - kTail) continue;
    j += (first ? "" : ",") + list(tb.rows[i]);
    first = false;
  }
  j += "]";
  if (cut)
    j += ",\"gap_after\":" + std::to_string(kHead) + ",\"note\":" +
         json_string(std::to_string(tb.rows.size() - kHead - kTail) + " more rows like these (" + std::to_string(tb.rows.size()) +
                     " in all; the first " + std::to_string(kHead) + " and the last " + std::to_string(kTail) + " are shown)");
  return j + "}";
}

std::string check_json(const CheckItem& c) {
  // An unanswered question is drawn as a failed check: it fails the run as one does.
  return std::string("{\"kind\":\"check\",\"question\":") + (c.question && !unanswered(c) ? "true" : "false") +
         ",\"passed\":" +
         (c.passed ? "true" : "false") + ",\"line\":" + json_string(check_text(c)) + "}";
}

std::string shaped_list(const std::vector<Shaped>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::string("{\"name\":") + json_string(v[i].name) + ",\"shape\":" + shape_list(v[i].shape) + "}";
  return s + "]";
}

// The viridis ramp the page paints with: 33 stops, as colormap.hpp samples it.
std::string palette_json() {
  std::string s = "[";
  for (int i = 0; i <= 32; ++i) s += (i ? "," : "") + std::string("\"") + hex(viridis(i / 32.0)) + "\"";
  return s + "]";
}

std::string size_text(std::size_t bytes) {
  char buf[32];
  if (bytes >= (1u << 20)) std::snprintf(buf, sizeof buf, "%.2f MiB", bytes / 1048576.0);
  else std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024.0);
  return buf;
}

// Inside <script type="application/json">, "</script" or "<!--" would end or confuse the element:
// every '<' (only ever inside a JSON string here) becomes \u003c, which JSON.parse reads back.
std::string script_safe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

// Text for the HTML outside the data (the <title>): &, < and > escaped.
std::string html_text(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else out += c;
  }
  return out;
}

constexpr const char* kSizeMark = "\"@@page-bytes@@\"";  // replaced by the page's size, padded to its width

}  // namespace

HtmlPlan html_plan(const Report& report) {
  HtmlPlan plan;
  plan.side = plan_side(matrices(report), plan.heatmap_values);
  return plan;
}

std::string html_page(const Report& report, const HtmlOptions& o) {
  const Header& h = report.header;
  const std::vector<Matrix> ms = matrices(report);
  HtmlPlan plan;
  plan.side = plan_side(ms, plan.heatmap_values);
  std::size_t text_used = 0;

  std::string stages = "[";
  std::string model;  // the model view's entry, or ""
  std::size_t mi = 0, heatmaps = 0;
  for (std::size_t si = 0; si < report.stages().size(); ++si) {
    const Stage& s = report.stages()[si];
    std::string items = "[";
    for (std::size_t ii = 0; ii < s.items.size(); ++ii) {
      const Item& item = s.items[ii];
      std::string j;
      if (const auto* t = std::get_if<TensorItem>(&item)) {
        j = "{\"kind\":\"tensor\",\"name\":" + json_string(t->name) + ",\"shape\":" + shape_list(t->shape);
        if (is_model_attentions(*t)) {
          const Matrix& m = ms[mi++];
          model = "{\"stage\":" + std::to_string(s.index) + ",\"name\":" + json_string(t->name) + ",\"shape\":" +
                  shape_list(t->shape) + ",\"heatmap\":" + heatmap_json(m, plan.side, 3, {"layer", "batch", "head"}, 2, run_tokens(report)) + "}";
          j += ",\"model_view\":true,\"no_values\":\"every layer's weights: drawn in the model view at the top of the page\"";
        } else if (drawn_as_heatmap(*t)) {
          const Matrix& m = ms[mi++];
          const std::size_t lead = t->shape.size() - std::min<std::size_t>(2, t->shape.size());
          const int head_axis = head_count(t->shape) ? 1 : -1;
          j += ",\"heatmap\":" + heatmap_json(m, plan.side, lead, lead_names(t->shape), head_axis);
          j += printed_json(*t, o, text_used, plan.tensors_without_text);
          ++heatmaps;
        } else if (!t->curve_x.empty() && !t->values.empty()) {
          j += curve_json(*t);
        } else {
          j += printed_json(*t, o, text_used, plan.tensors_without_text);
        }
        j += "}";
      } else if (const auto* n = std::get_if<NoteItem>(&item)) {
        j = "{\"kind\":\"note\",\"text\":" + json_string(n->text) + "}";
      } else if (const auto* tb = std::get_if<TableItem>(&item)) {
        j = table_json(*tb);
      } else if (const auto* c = std::get_if<CheckItem>(&item)) {
        j = check_json(*c);
      }
      items += (ii ? ",\n" : "\n") + j;
    }
    items += "]";
    stages += std::string(si ? ",\n" : "\n") + "{\"index\":" + std::to_string(s.index) + ",\"title\":" + json_string(s.title) +
              ",\"equation\":" + json_string(s.equation) + ",\"inputs\":" + shaped_list(s.inputs) +
              ",\"outputs\":" + shaped_list(s.outputs()) + ",\"items\":" + items + "}";
  }
  stages += "]";

  std::vector<std::string> notes;
  if (plan.side)
    notes.push_back("Heatmaps keep the first " + std::to_string(plan.side) + " tokens of each axis: the run's weights hold more values than the page's budget of " +
                    with_commas(kHtmlHeatmapValues) + " (at most " + std::to_string(kHtmlMaxSide) + " tokens a side).");
  if (plan.tensors_without_text)
    notes.push_back(std::to_string(plan.tensors_without_text) + " tensors are listed by name and shape only: the page holds at most " +
                    std::to_string(kHtmlTextBytes >> 10) + " KiB of printed values.");

  std::string data = "{\"format\":\"attn-html-1\",\"precision\":" + std::to_string(o.precision);
  data += ",\"header\":{\"invocation\":" + json_string(h.invocation()) + ",\"lesson\":" + json_string(h.lesson) +
          ",\"title\":" + json_string(h.title) + ",\"follows\":" + json_string(h.follows) + ",\"command\":" +
          json_string(o.command) + ",\"setting\":" + list(h.setting) + ",\"reproduce\":" + list(h.reproduce) +
          ",\"stages_line\":" + json_string(stages_line(h, report.total_stages())) + ",\"total\":" +
          std::to_string(report.total_stages()) + "}";
  data += ",\"page\":{\"bytes\":" + std::string(kSizeMark) + ",\"budget\":" + std::to_string(kHtmlPageBudget) +
          ",\"budget_text\":" + json_string(size_text(kHtmlPageBudget)) + ",\"heatmap_values\":" + std::to_string(plan.heatmap_values) +
          ",\"heatmap_budget\":" + std::to_string(kHtmlHeatmapValues) + ",\"max_side\":" + std::to_string(kHtmlMaxSide) +
          ",\"text_budget\":" + std::to_string(kHtmlTextBytes) + ",\"notes\":" + list(notes) + "}";
  data += ",\"palette\":" + palette_json();
  if (!model.empty()) data += ",\"model\":" + model;
  data += ",\"stages\":" + stages + "}";

  std::string page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                     "<meta name=\"generator\" content=\"attn\">\n<title>" +
                     html_text(h.invocation() + ": " + h.title) + "</title>\n<style>\n" + kHtmlPageCss +
                     "</style>\n</head>\n<body>\n"
                     "<noscript><p>This page draws the run with JavaScript; the run's data is in the script element below.</p></noscript>\n"
                     "<main id=\"attn-page\"></main>\n<div id=\"attn-tooltip\" role=\"tooltip\" hidden></div>\n"
                     "<script type=\"application/json\" id=\"attn-data\">\n" +
                     script_safe(data) + "\n</script>\n<script>\n" + kHtmlPageJs + "</script>\n</body>\n</html>\n";
  // The page states its own size: the mark is replaced by the number, padded with spaces to the
  // mark's width so that the size does not change by being written.
  const std::size_t at = page.find(kSizeMark);
  const std::size_t width = std::strlen(kSizeMark);
  std::string bytes = std::to_string(page.size());
  if (bytes.size() < width) bytes.append(width - bytes.size(), ' ');
  page.replace(at, width, bytes);
  return page;
}

void check_html_target(const std::string& path) { check_file_target(path, "causal.html"); }

StagedHtml::StagedHtml(const std::string& page, const std::string& path) {
  check_html_target(path);
  file_.emplace(path);  // the missing parents made; removed again with the file unless committed
  errno = 0;
  std::ofstream out(file_->tmp(), std::ios::binary | std::ios::trunc);
  if (out) out.write(page.data(), static_cast<std::streamsize>(page.size()));
  if (out) out.close();
  if (!out) throw std::runtime_error("could not write " + path + ": " + std::strerror(errno ? errno : EIO));
}

void StagedHtml::commit() { file_->commit("page"); }

}  // namespace attn::report
