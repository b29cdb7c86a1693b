// What a lesson hands to the report layer: a header and a list of numbered stages.
//
// A stage carries its title, its equation in ASCII, the shapes going in, and then, in the order
// the lesson narrates them, the tensors it made, notes, tables and checks. Sinks (the terminal
// printer today; step-through, heatmaps, .npy and JSON later) render the same stages, so a
// lesson never knows where its output goes.
#pragma once

#include <algorithm>
#include <deque>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "core/tensor.hpp"
#include "report/held.hpp"
#include "report/numbers.hpp"  // fixed, scientific, bytes: the numbers stages print

namespace attn::report {

using Labels = std::vector<std::string>;

// The values of a shown tensor, row-major. Either the stage's own copy (a std::vector, as before)
// or the lesson's tensor itself, shared (Stage::show of a std::shared_ptr or a Held): at T = 4096
// one (T, T) tensor is 64 MB, and a stage that copied each one it showed doubled the lesson's
// memory. Reading is the same either way. Writing (a test or a sink building an item by hand:
// push_back, assign, [i] = ...) works on the own copy; a shared view is copied first, so the
// lesson's tensor is never changed through a stage. Empty when the report keeps no values
// (Report::keep_values).
class TensorValues {
 public:
  TensorValues() = default;
  TensorValues(std::vector<float> own) : own_(std::move(own)) {}  // NOLINT: converts like the vector it replaced
  TensorValues(std::initializer_list<float> own) : own_(own) {}
  // n floats at `data`, kept alive by `owner`: shared, not copied.
  TensorValues(std::shared_ptr<const void> owner, const float* data, std::size_t n)
      : owner_(std::move(owner)), data_(data), size_(n) {}

  bool shared() const { return owner_ != nullptr; }
  std::size_t size() const { return shared() ? size_ : own_.size(); }
  bool empty() const { return size() == 0; }
  const float* data() const { return shared() ? data_ : own_.data(); }
  const float* begin() const { return data(); }
  const float* end() const { return data() + size(); }
  float operator[](std::size_t i) const { return data()[i]; }
  float front() const { return at(0); }
  float back() const { return at(size() - 1); }
  float at(std::size_t i) const {
    if (i >= size()) throw std::out_of_range("TensorValues::at(" + std::to_string(i) + ") of " + std::to_string(size()));
    return data()[i];
  }

  float* data() { return mine().data(); }
  float* begin() { return data(); }
  float* end() { return data() + size(); }
  float& operator[](std::size_t i) { return mine()[i]; }
  void push_back(float v) { mine().push_back(v); }
  template <class It>
  void assign(It first, It last) {
    owner_.reset();
    own_.assign(first, last);
  }

  // A copy, for code that wants a std::vector.
  operator std::vector<float>() const { return std::vector<float>(begin(), end()); }  // NOLINT: as before

  friend bool operator==(const TensorValues& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator==(const std::vector<float>& a, const TensorValues& b) { return b == a; }
  friend bool operator!=(const TensorValues& a, const std::vector<float>& b) { return !(a == b); }
  friend bool operator!=(const std::vector<float>& a, const TensorValues& b) { return !(b == a); }
  friend bool operator==(const TensorValues& a, const TensorValues& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const TensorValues& a, const TensorValues& b) { return !(a == b); }

 private:
  // The own copy, made from the shared values first if there are any.
  std::vector<float>& mine() {
    if (shared()) {
      own_.assign(data_, data_ + size_);
      owner_.reset();
    }
    return own_;
  }
  std::vector<float> own_;
  std::shared_ptr<const void> owner_;
  const float* data_ = nullptr;
  std::size_t size_ = 0;
};

// What the weights that made an attention tensor had learned, stated on its pictures (--svg),
// which are read away from the lesson's notes: untrained (drawn from the seed, as in most
// lessons), trained for `steps` optimiser steps (align and learn-heads show snapshots before,
// during and after training, so this is per tensor), or unstated: no learned weights took part
// (flash's random q, k, v), or they came from --weights and attn cannot tell what they learned.
struct Training {
  enum class Kind { unstated, untrained, trained } kind = Kind::unstated;
  std::size_t steps = 0;  // with Kind::trained
  static Training untrained() { return {Kind::untrained, 0}; }
  static Training trained(std::size_t steps) { return {Kind::trained, steps}; }
  // Untrained when the weights were drawn from the seed, unstated when --weights gave them.
  static Training drawn_unless(bool from_files) { return from_files ? Training{} : untrained(); }
};

struct TensorItem {
  std::string name;
  Shape shape;
  TensorValues values;     // row-major
  Labels row_labels;       // labels the second-to-last axis (tokens), or empty
  Labels col_labels;       // labels the last axis when it is tokens too, or empty
  bool attention = false;  // an attention-weight matrix (..., T, S): sinks may draw it as a heatmap
  // With `attention`: what the rows and the columns are and what a value is, for a picture's axis
  // and colour-bar titles (set by Stage::attention_weights).
  std::string row_axis = {}, col_axis = {}, value_name = {};
  Training training = {};  // the weights that made it
  // A curve (a loss per training step): a 1-D tensor the text sink draws as a small plot instead
  // of printing its values, with x counted from 1 and named `curve_x` ("step"). Empty: not a curve.
  // Every other sink treats it as any tensor (--dump writes it as .npy, JSON lists its values).
  std::string curve_x = {};
  // False for a tensor kept for --dump and JSON (trained weights, snapshots) that the text sink
  // only lists on the stage's out: line: printing it would bury the lesson.
  bool printed = true;
  // False for an attention-like map the text sink draws as a heatmap without printing its values
  // first: a (layers, heads) map of role scores reads as a picture, 28 x 24 numbers do not.
  bool values_printed = true;
  // The file --dump and --npz write it to, without ".npy": empty for the usual "sNN_<name>" (a
  // lesson's names repeat from stage to stage); a model run names every tensor after its module
  // ("model.layers.3.self_attn.q"), unique in the run, and writes it under that name.
  std::string file_name = {};
  // Why it holds NaN, for a heatmap's legend ("a row with nothing to attend to (0/0)", "an
  // overflow to inf, first in ..."), set by explain_nonfinite; empty when no cause is known.
  std::string nan_cause = {};
  // True for a tensor the default text leaves out to keep a lesson to one sitting (the weights
  // behind a projection, a copy of one already printed): the out: line names it, a line says
  // that --full prints it, and every other sink has it as any tensor (Stage::detail).
  bool detail = false;
  // True for an attention tensor whose picture the default text draws without printing its
  // values first (a (1, 2, 24, 24) tensor reads as a heatmap; its summarised print does not):
  // one line says that --full prints them (Stage::picture_only).
  bool values_detail = false;
  // Of a (B, h, T, S) tensor, the one head the default text draws (as --head N would), the
  // others named on one line and drawn by --full; kAllHeads: every head (Stage::draw_head).
  static constexpr std::size_t kAllHeads = static_cast<std::size_t>(-1);
  std::size_t text_head = kAllHeads;
  // Cells the text heatmap marks, as (row, column) of the last two axes, the same in every panel,
  // and what they are, for its legend ("the induction cells, where ..."): Stage::mark.
  std::vector<std::pair<std::size_t, std::size_t>> marked = {};
  std::string marked_what = {};
};

// The heatmap legend's cause for NaN from a fully masked row.
inline constexpr const char* kMaskedRowNan = "a row with nothing to attend to (0/0)";

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
// (computed by the lesson) explains a no, and the exit status does not change. NaN never passes,
// and a question whose measure (or bound) is NaN has no answer: it fails the run as a check does.
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
// A question measured as NaN: neither yes nor no.
bool unanswered(const CheckItem& c);
// A failed invariant or an unanswered question: the run ends with status 3.
bool fails_run(const CheckItem& c);

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
  bool keep_values = true;      // set by Report::stage from Report::keep_values

  // The shape of a tensor this stage reads.
  template <class E>
  Stage& in(std::string name, const E& t) {
    return in_shape(std::move(name), to_shape(t.shape()));
  }
  Stage& in_shape(std::string name, Shape shape) {
    inputs.push_back({std::move(name), std::move(shape)});
    return *this;
  }
  // A tensor this stage makes, shown with its values (copied).
  template <class E>
  Stage& show(std::string name, const E& t, Labels rows = {}, Labels cols = {}) {
    if constexpr (std::is_same_v<E, Vec> || std::is_same_v<E, Mat> || std::is_same_v<E, Ten3> ||
                  std::is_same_v<E, Ten4>)
      return show_copy(std::move(name), to_shape(t.shape()), t.data(), std::move(rows), std::move(cols));  // memcpy
    TensorItem item{std::move(name), to_shape(t.shape()), {}, std::move(rows), std::move(cols)};
    if (keep_values) item.values = TensorValues(std::vector<float>(t.begin(), t.end()));
    items.emplace_back(std::move(item));
    return *this;
  }
  // The same without a copy: the stage holds a reference to the lesson's tensor.
  template <class E>
  Stage& show(std::string name, std::shared_ptr<const E> t, Labels rows = {}, Labels cols = {}) {
    return show_shared(std::move(name), to_shape(t->shape()), t, t->data(), std::move(rows), std::move(cols));
  }
  // A held tensor: shared when it was computed, its shape alone when it was not.
  template <class E>
  Stage& show(std::string name, const Held<E>& t, Labels rows = {}, Labels cols = {}) {
    if (t.computed()) return show(std::move(name), t.shared(), std::move(rows), std::move(cols));
    return show_shared(std::move(name), t.shape(), nullptr, nullptr, std::move(rows), std::move(cols));
  }
  // `shape` over values at `data` that `owner` keeps alive (a (T, T) slice of a shared (1, T, T)
  // tensor, say), shared rather than copied.
  Stage& show_shared(std::string name, Shape shape, std::shared_ptr<const void> owner, const float* data,
                     Labels rows = {}, Labels cols = {});
  // `shape` over values at `data`, copied: a contiguous slice of a larger tensor.
  Stage& show_copy(std::string name, Shape shape, const float* data, Labels rows = {}, Labels cols = {});
  // Marks the tensor shown last as attention weights, which picture sinks draw as heatmaps: its
  // rows are `rows` (queries), its columns `cols` (keys), each value a `value` ("attention
  // weight"), made by weights that had learned what `training` says.
  // The last tensor shown is NaN where a row has every key masked (softmax's 0/0), on purpose:
  // explain_nonfinite keeps that cause unless the inputs held NaN or the scores overflowed.
  Stage& nan_from_masked_rows();
  Stage& attention_weights(Training training = {}, std::string rows = "queries", std::string cols = "keys",
                           std::string value = "attention weight");
  // A score per layer and head (L, h), e.g. each head's previous-token score: drawn as a heatmap
  // with `layers` down the side (their labels) and the heads 0..h-1 across, each value a `value`;
  // the text shows the picture without the numbers (--dump and JSON keep them).
  Stage& layer_head_map(std::string name, const Mat& map, Labels layers, std::string value, Training training = {});
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
  // Marks the tensor shown last as detail (TensorItem::detail): printed with --full.
  Stage& detail();
  // The same for the tensor named `name` shown earlier in this stage (the stage a lesson helper
  // made, or a decision its numbers make only after they are shown).
  Stage& detail(const std::string& name);
  // The tensor shown last (attention weights) is drawn as a heatmap alone by the default text;
  // --full prints its values too (TensorItem::values_detail).
  Stage& picture_only();
  // The default text draws only head `head` of the (B, h, T, S) tensor shown last
  // (TensorItem::text_head); --full draws every head.
  Stage& draw_head(std::size_t head);
  // Marks `cells` ((row, column) of the last two axes, in every panel) on the text heatmap of the
  // tensor shown last, with `what` they are for its legend (TensorItem::marked).
  Stage& mark(std::vector<std::pair<std::size_t, std::size_t>> cells, std::string what);
  // This stage does again what an earlier one showed (decoder step 4 after step 1): the default
  // text prints its title alone, and after a run of such stages one line counts them: "6 more
  // <many>: --full prints them". `one` and `many` name one and several ("decoder step like step
  // 1", "decoder steps like step 1"). --full, --stage and --step show it whole, as every other
  // sink does.
  Stage& fold(std::string one, std::string many);
  bool folded() const { return !fold_many.empty(); }
  std::string fold_one = {}, fold_many = {};

  Stage& note(std::string text);
  Stage& table(std::vector<std::string> header, std::vector<std::vector<std::string>> rows);
  // An invariant: `measure` = `value` must be <= (or >=) `bound`.
  Stage& check(std::string claim, std::string measure, double value, Relation relation, double bound);
  // A question this run's numbers answer; `because_no` (computed by the lesson) is shown when the
  // answer is no, `because_nan` when NaN leaves it unanswered (where the NaN is, never a guessed
  // cause: explain_nonfinite names the origin), else a generic reason.
  Stage& question(std::string question, std::string measure, double value, Relation relation, double bound,
                  std::string because_no = "", std::string because_nan = "");

  // Shapes going out: every tensor the stage shows.
  std::vector<Shaped> outputs() const;
};

struct Header {
  std::string lesson;   // registry name, e.g. "causal"
  std::string title;    // e.g. "Causal attention"
  std::string follows;  // the article section it follows
  std::vector<std::string> setting;    // "seed 789", "d_out 2", ...
  std::vector<std::string> reproduce;  // PyTorch lines that rebuild the same numbers
  // Set by Report::keep_stages (--stage), never by a lesson: the stages shown, out of how many
  // the lesson made, and the option as typed. Empty `shown`: every stage is shown.
  std::vector<std::size_t> shown = {};
  std::size_t of = 0;
  std::string selection = {};
  // What ran, as a title line names it: "attn lesson causal", or `command` when set ("attn model").
  std::string command = {};
  std::string invocation() const { return command.empty() ? "attn lesson " + lesson : command; }
};

// The whole of one lesson run. Lessons fill it; sinks read it.
class Report {
 public:
  Header header;
  // False when no sink will read a value (a text run with --shapes-only): stages then record
  // names and shapes only, and hold no values at all.
  bool keep_values = true;
  Stage& stage(std::string title, std::string equation = "");
  const std::deque<Stage>& stages() const { return stages_; }
  // For a pass over the finished lesson that adds to its stages (the notes on NaN and inf).
  std::deque<Stage>& stages_to_annotate() { return stages_; }
  // How many stages the lesson made, including those keep_stages set aside: the N of "[5/N]".
  std::size_t total_stages() const { return header.shown.empty() ? stages_.size() : header.of; }
  // After the lesson ran (--stage): keeps only the stages numbered in `numbers` (1-based,
  // ascending, each one of them), each keeping its number, and records the choice in the header
  // (`selection`: the option's text as typed). Every sink then sees only these stages.
  void keep_stages(const std::vector<std::size_t>& numbers, std::string selection);
  // Every tensor shown is written by --dump and --npz under its own name (TensorItem::file_name)
  // rather than "sNN_<name>": for a report whose names are unique (a model run's module names).
  void name_files_after_tensors();

 private:
  std::deque<Stage> stages_;  // a deque: a Stage& stays valid while later stages are added
};

// "stages 5-7 of 14 (--stage 5-7)" for a header that keep_stages trimmed, else "14 stages"
// (`total`: the stages a sink is told the lesson made).
std::string stages_line(const Header& header, std::size_t total);

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

// The invariants that failed and the questions left unanswered (fails_run), with the stage each
// belongs to.
struct FailedCheck {
  std::size_t stage;
  const CheckItem* check;
};
std::vector<FailedCheck> failed_checks(const Report& report);

}  // namespace attn::report
