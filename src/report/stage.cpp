#include "report/stage.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <stdexcept>

#include "report/stage_select.hpp"
#include "report/text_width.hpp"

namespace attn::report {

namespace {

// The tensor shown last, which the marking calls below describe; `what` names the call.
TensorItem& last_tensor(std::vector<Item>& items, const char* what) {
  for (auto it = items.rbegin(); it != items.rend(); ++it)
    if (auto* t = std::get_if<TensorItem>(&*it)) return *t;
  throw std::logic_error(std::string(what) + ": the stage shows no tensor yet");
}

}  // namespace

Stage& Stage::attention_weights(Training training, std::string rows, std::string cols, std::string value) {
  TensorItem& t = last_tensor(items, "attention_weights()");
  t.attention = true;
  t.training = training;
  t.row_axis = std::move(rows);
  t.col_axis = std::move(cols);
  t.value_name = std::move(value);
  return *this;
}

Stage& Stage::nan_from_masked_rows() {
  last_tensor(items, "nan_from_masked_rows()").nan_cause = kMaskedRowNan;
  return *this;
}

Stage& Stage::layer_head_map(std::string name, const Mat& map, Labels layers, std::string value, Training training) {
  Labels heads;
  for (std::size_t i = 0; i < map.shape()[1]; ++i) heads.push_back(std::to_string(i));
  show(std::move(name), map, std::move(layers), std::move(heads)).attention_weights(training, "layers", "heads", std::move(value));
  std::get<TensorItem>(items.back()).values_printed = false;
  return *this;
}

Stage& Stage::show_shared(std::string name, Shape shape, std::shared_ptr<const void> owner, const float* data,
                          Labels rows, Labels cols) {
  std::size_t n = 1;
  for (std::size_t d : shape) n *= d;
  if (keep_values && !data && n != 0)  // a sink would read values that were never computed
    throw std::logic_error("Stage::show: " + name + " " + shape_str(shape) + " has no values, and this report keeps them");
  TensorItem item{std::move(name), std::move(shape), {}, std::move(rows), std::move(cols)};
  if (keep_values) item.values = TensorValues(std::move(owner), data, n);
  items.emplace_back(std::move(item));
  return *this;
}

Stage& Stage::show_copy(std::string name, Shape shape, const float* data, Labels rows, Labels cols) {
  std::size_t n = 1;
  for (std::size_t d : shape) n *= d;
  TensorItem item{std::move(name), std::move(shape), {}, std::move(rows), std::move(cols)};
  if (keep_values) item.values = TensorValues(std::vector<float>(data, data + n));
  items.emplace_back(std::move(item));
  return *this;
}

Stage& Stage::detail() {
  last_tensor(items, "detail()").detail = true;
  return *this;
}

Stage& Stage::detail(const std::string& name) {
  for (auto& item : items)
    if (auto* t = std::get_if<TensorItem>(&item); t && t->name == name) {
      t->detail = true;
      return *this;
    }
  throw std::logic_error("detail(" + name + "): the stage shows no such tensor");
}

Stage& Stage::picture_only() {
  last_tensor(items, "picture_only()").values_detail = true;
  return *this;
}

Stage& Stage::draw_head(std::size_t head) {
  last_tensor(items, "draw_head()").text_head = head;
  return *this;
}

Stage& Stage::mark(std::vector<std::pair<std::size_t, std::size_t>> cells, std::string what) {
  TensorItem& t = last_tensor(items, "mark()");
  t.marked = std::move(cells);
  t.marked_what = std::move(what);
  return *this;
}

Stage& Stage::fold(std::string one, std::string many) {
  fold_one = std::move(one);
  fold_many = std::move(many);
  return *this;
}

// Notes, tables and checks quote the learner's words (--tokens, --src): control characters and
// broken UTF-8 in them become '?', as in the heatmap and SVG labels, so no escape sequence
// reaches the terminal.
Stage& Stage::note(std::string text) {
  items.emplace_back(NoteItem{clean_label(text)});
  return *this;
}

Stage& Stage::table(std::vector<std::string> header, std::vector<std::vector<std::string>> rows) {
  for (auto& h : header) h = clean_label(h);
  for (auto& row : rows)
    for (auto& cell : row) cell = clean_label(cell);
  items.emplace_back(TableItem{std::move(header), std::move(rows)});
  return *this;
}

bool holds(double value, Relation relation, double bound) {
  if (std::isnan(value)) return false;
  return relation == Relation::AtMost ? value <= bound : value >= bound;
}

bool unanswered(const CheckItem& c) { return c.question && (std::isnan(c.value) || std::isnan(c.bound)); }

bool fails_run(const CheckItem& c) { return c.question ? unanswered(c) : !c.passed; }

Stage& Stage::check(std::string claim, std::string measure, double value, Relation relation, double bound) {
  CheckItem c;
  c.text = clean_label(claim);
  c.measure = std::move(measure);
  c.value = value;
  c.relation = relation;
  c.bound = bound;
  c.passed = holds(value, relation, bound);
  items.emplace_back(std::move(c));
  return *this;
}

Stage& Stage::question(std::string question, std::string measure, double value, Relation relation, double bound,
                       std::string because_no, std::string because_nan) {
  // The same measurement as a check, asked instead of promised.
  check(std::move(question), std::move(measure), value, relation, bound);
  CheckItem& c = std::get<CheckItem>(items.back());
  c.question = true;
  // A NaN measure answers neither yes nor no (unanswered): the lesson's reason for NaN, or the
  // generic one (a reason for a no is not one for NaN).
  if (unanswered(c))
    c.because = because_nan.empty() ? "the numbers compared hold NaN, so the question has no answer" : clean_label(because_nan);
  else if (!c.passed)
    c.because = clean_label(because_no);
  return *this;
}

std::vector<Shaped> Stage::outputs() const {
  std::vector<Shaped> out;
  for (const Item& item : items)
    if (const auto* t = std::get_if<TensorItem>(&item)) out.push_back({t->name, t->shape});
  return out;
}

Stage& Report::stage(std::string title, std::string equation) {
  Stage s;
  s.index = stages_.size() + 1;
  s.title = std::move(title);
  s.equation = std::move(equation);
  s.keep_values = keep_values;
  stages_.push_back(std::move(s));
  return stages_.back();
}

void Report::name_files_after_tensors() {
  for (Stage& s : stages_)
    for (Item& item : s.items)
      if (auto* t = std::get_if<TensorItem>(&item)) t->file_name = t->name;
}

void Report::keep_stages(const std::vector<std::size_t>& numbers, std::string selection) {
  const std::size_t total = total_stages();
  // Numbers are ascending, as the stages are: one pass finds them all, or the call is wrong (and
  // the report is left as it was).
  std::size_t found = 0;
  for (const Stage& s : stages_) found += found < numbers.size() && s.index == numbers[found];
  if (found != numbers.size() || numbers.empty())
    throw std::logic_error("Report::keep_stages: the numbers must name stages of this run, ascending");
  std::deque<Stage> kept;
  std::size_t next = 0;
  for (Stage& s : stages_)
    if (next < numbers.size() && s.index == numbers[next]) {
      kept.push_back(std::move(s));
      ++next;
    }
  stages_.swap(kept);
  header.shown = numbers;
  header.of = total;
  header.selection = clean_label(selection);  // the learner's text: no control character reaches the terminal
}

std::string stages_line(const Header& h, std::size_t total) {
  if (h.shown.empty()) return std::to_string(total) + " stages";
  return std::string(h.shown.size() == 1 ? "stage " : "stages ") + stage_ranges(h.shown) + " of " +
         std::to_string(h.of) + " (--stage " + h.selection + ")";
}

void deliver(const Report& report, Sink& sink) {
  const std::size_t total = report.total_stages();
  sink.begin(report.header, total);
  for (const Stage& s : report.stages()) sink.stage(s, total);
  sink.end();
}

std::string measured(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[64];
  const double a = std::fabs(value);
  // Zero prints as 0.00e+00, never as "0": a residual that is 0 on one BLAS kernel and 5e-07 on
  // another is the same measurement, and the golden comparison reads "0" as an exact integer.
  std::snprintf(buf, sizeof buf, a < 1e-3 || a >= 1e5 ? "%.2e" : "%.4g", value);
  return buf;
}

std::string check_text(const CheckItem& c, char keep) {
  // The comparison as it came out: "<=" when it holds, "> 1e-06" when it does not.
  const bool at_most = c.relation == Relation::AtMost;
  char bound[32];
  if (std::isfinite(c.bound)) std::snprintf(bound, sizeof bound, "%.3g", c.bound);
  else std::snprintf(bound, sizeof bound, "%s", measured(c.bound).c_str());  // never "-nan"

  const std::string held = std::string(at_most ? " <= " : " >= ") + bound;
  const std::string broken = std::isnan(c.value) || std::isnan(c.bound) ? std::string(", not") + held
                                                 : std::string(at_most ? " > " : " < ") + bound;
  std::string numbers = "(" + c.measure + " = " + measured(c.value) + (c.passed ? held : broken) + ")";
  std::replace(numbers.begin(), numbers.end(), ' ', keep);
  if (unanswered(c)) return "question UNANSWERED: " + c.text + " " + numbers + ": " + c.because;
  if (c.question)
    return "question: " + c.text + (c.passed ? " yes " : " no ") + numbers +
           (c.passed || c.because.empty() ? "" : ": " + c.because);
  return std::string(c.passed ? "check passed: " : "check FAILED: ") + c.text + " " + numbers;
}

std::vector<FailedCheck> failed_checks(const Report& report) {
  std::vector<FailedCheck> out;
  for (const Stage& s : report.stages())
    for (const Item& item : s.items)
      if (const auto* c = std::get_if<CheckItem>(&item))
        if (fails_run(*c)) out.push_back({s.index, c});
  return out;
}

}  // namespace attn::report
