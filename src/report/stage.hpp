// What a lesson hands to the report layer: a header and a list of numbered stages.
//
// A stage carries its title, its equation in ASCII, the shapes going in, and then, in the order
// the lesson narrates them, the tensors it made, notes, tables and checks. Sinks (the terminal
// printer today; step-through, heatmaps, .npy and JSON later) render the same stages, so a
// lesson never knows where its output goes.
#pragma once

#include <deque>
#include <string>
#include <variant>
#include <vector>

#include "core/tensor.hpp"

namespace attn::report {

using Labels = std::vector<std::string>;

struct TensorItem {
  std::string name;
  Shape shape;
  std::vector<float> values;  // row-major
  Labels row_labels;          // labels the second-to-last axis (tokens), or empty
  Labels col_labels;          // labels the last axis when it is tokens too, or empty
  bool attention = false;     // an attention-weight matrix (..., T, S): sinks may draw it as a heatmap
  // A curve (a loss per training step): a 1-D tensor the text sink draws as a small plot instead
  // of printing its values, with x counted from 1 and named `curve_x` ("step"). Empty: not a curve.
  // Every other sink treats it as any tensor (--dump writes it as .npy, JSON lists its values).
  std::string curve_x = {};
  // False for a tensor kept for --dump and JSON (trained weights, snapshots) that the text sink
  // only lists on the stage's out: line: printing it would bury the lesson.
  bool printed = true;
};

struct NoteItem {
  std::string text;  // narration: why this stage matters; wrapped by the sink
};

struct TableItem {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

// How a measured value is held against its bound.
enum class Relation { AtMost, AtLeast };  // value <= bound, value >= bound

// A check is decided by code, never by its sentence: a measured value, a bound, and the verdict.
//
// An invariant is a promise the lesson makes for every run ("every row of attn_weights sums to
// 1"): when it fails, the lesson still prints everything, then says so on stderr and exits with
// status 3. A question is asked of this run's numbers where the answer depends on the input ("do
// -1e9 and -inf give the same weights here?"): yes and no are both honest answers, `because`
// (computed by the lesson) explains a no, and the exit status does not change. NaN never passes.
struct CheckItem {
  bool question = false;
  std::string text;     // the claim, or the question
  std::string measure;  // what `value` is: "max |sum - 1|"
  double value = 0.0;
  Relation relation = Relation::AtMost;
  double bound = 0.0;
  bool passed = false;  // value relation bound; for a question, the answer yes
  std::string because;  // a question's explanation when the answer is no, or ""
};

// value <= bound (or >=); false for NaN.
bool holds(double value, Relation relation, double bound);

using Item = std::variant<TensorItem, NoteItem, TableItem, CheckItem>;

struct Shaped {
  std::string name;
  Shape shape;
};

struct Stage {
  std::size_t index = 0;  // 1-based, set by Report::stage
  std::string title;
  std::string equation;         // ASCII, e.g. "attn_scores = queries @ keys^T"
  std::vector<Shaped> inputs;   // shapes going in
  std::vector<Item> items;      // what the stage shows, in order

  // The shape of a tensor this stage reads.
  template <class E>
  Stage& in(std::string name, const E& t) {
    inputs.push_back({std::move(name), to_shape(t.shape())});
    return *this;
  }
  // A tensor this stage makes, shown with its values.
  template <class E>
  Stage& show(std::string name, const E& t, Labels rows = {}, Labels cols = {}) {
    TensorItem item{std::move(name), to_shape(t.shape()), {}, std::move(rows), std::move(cols)};
    item.values.assign(t.begin(), t.end());
    items.emplace_back(std::move(item));
    return *this;
  }
  // Marks the tensor shown last as attention weights (rows: queries, columns: keys), which
  // picture sinks draw as heatmaps.
  Stage& attention_weights();
  // A 1-D series shown as a compact text plot (TensorItem::curve_x), e.g. the loss per step.
  template <class E>
  Stage& curve(std::string name, const E& t, std::string x_name) {
    static_assert(E::rank == 1, "curve() takes a 1-D tensor");
    show(std::move(name), t);
    std::get<TensorItem>(items.back()).curve_x = std::move(x_name);
    return *this;
  }
  // A tensor kept for --dump and --format json and listed on the out: line, but not printed.
  template <class E>
  Stage& keep(std::string name, const E& t) {
    show(std::move(name), t);
    std::get<TensorItem>(items.back()).printed = false;
    return *this;
  }
  Stage& note(std::string text);
  Stage& table(std::vector<std::string> header, std::vector<std::vector<std::string>> rows);
  // An invariant: `measure` = `value` must be <= (or >=) `bound`.
  Stage& check(std::string claim, std::string measure, double value, Relation relation, double bound);
  // A question this run's numbers answer; `because_no` (computed by the lesson, and meant to
  // cover a NaN too) is shown when the answer is no.
  Stage& question(std::string question, std::string measure, double value, Relation relation, double bound,
                  std::string because_no = "");

  // Shapes going out: every tensor the stage shows.
  std::vector<Shaped> outputs() const;
};

struct Header {
  std::string lesson;   // registry name, e.g. "causal"
  std::string title;    // e.g. "Causal attention"
  std::string follows;  // the article section it follows
  std::vector<std::string> setting;    // "seed 789", "d_out 2", ...
  std::vector<std::string> reproduce;  // PyTorch lines that rebuild the same numbers
};

// The whole of one lesson run. Lessons fill it; sinks read it.
class Report {
 public:
  Header header;
  Stage& stage(std::string title, std::string equation = "");
  const std::deque<Stage>& stages() const { return stages_; }

 private:
  std::deque<Stage> stages_;  // a deque: a Stage& stays valid while later stages are added
};

// Everything a sink may be told. Step-through and streaming sinks work stage by stage.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void begin(const Header& header, std::size_t total_stages) = 0;
  virtual void stage(const Stage& stage, std::size_t total_stages) = 0;
  virtual void end() = 0;
};

void deliver(const Report& report, Sink& sink);

// "check passed: every row of w sums to 1 (max |sum - 1| = 5.96e-08 <= 1e-06)", or
// "check FAILED: ...", or "question: ...? yes (...)" / "question: ...? no (...): because ...".
// `keep` replaces the spaces inside the parenthesised numbers, so that a wrapping sink can keep
// "(max |sum - 1| = 5.96e-08 <= 1e-06)" on one line.
std::string check_text(const CheckItem& check, char keep = ' ');
// A measured value as checks print it: "0.00e+00", "0.112", "5.96e-08", "nan".
std::string measured(double value);

// The invariants that failed, with the stage each belongs to (questions never fail).
struct FailedCheck {
  std::size_t stage;
  const CheckItem* check;
};
std::vector<FailedCheck> failed_checks(const Report& report);

// Helpers for the numbers lessons put in checks and tables.
std::string fixed(double v, int decimals);     // "%.4f"
std::string scientific(double v, int digits);  // "%.2e"

}  // namespace attn::report
