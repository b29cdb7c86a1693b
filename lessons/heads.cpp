// Lesson: multi-head attention with one fused projection (Raschka 3.6.2, Phillips).
//
// Instead of h separate attention modules, one wide projection per role is computed and its
// d_out columns are re-read as h heads of d_k: a view, then a transpose so each head sees all
// tokens. Attention runs per (batch, head) pair; the heads are transposed back, merged and
// mixed by out_proj. The lesson then shows that this equals h separate single-head attentions,
// and what goes wrong when the transpose is skipped.
//
// Legend: B batch, T tokens, d_in embedding width, d_out = h * d_k, h heads, d_k head width,
// d_o out_proj's output width (d_out, Raschka's square out_proj; or d_in, back to x's width).
#include <algorithm>
#include <cmath>
#include <limits>

#include <xtensor/xview.hpp>

#include "core/attention.hpp"
#include "core/fast_attention.hpp"
#include "core/heads.hpp"
#include "core/linear.hpp"
#include "core/mask.hpp"
#include "core/matmul.hpp"
#include "core/softmax.hpp"
#include "lesson_kit/checks.hpp"
#include "lesson_kit/external.hpp"
#include "lesson_kit/presets.hpp"
#include "lesson_kit/registry.hpp"

namespace attn {
namespace {

using report::Held;
using report::hold;

// The threads the memory table of a run without values assumes for the fast path.
constexpr std::size_t kFastScratchThreads = 2;
// Heads "attend differently" when some pair's D(a, b) (head_distance) is at least this: a tenth
// of the attention goes elsewhere.
constexpr double kHeadsDiffer = 0.1;
// The measure is computed when its pairs hold at most this many weights in all.
constexpr double kHeadDistanceWork = 1e8;
// A tensor of more than this many values among q_heads, context_vec and output is detail: the
// default text names it, --full prints it. The default run's (12, 24 and 24 values) are
// printed; --preset phillips' (144 each) would take 90, 43 and 43 lines.
constexpr std::size_t kPrintedValues = 128;
// attn_weights with more (batch, head) blocks than this prints as its heatmaps alone (the default
// run's 2 x 2 blocks are printed; phillips' 3 x 4 would be 160 lines of e-notation).
constexpr std::size_t kPrintedBlocks = 4;
// What the pointer to heads that differ quotes: --preset phillips' largest D(a, b) (its heads
// 1 and 2), checked against that run by tests/lessons/test_presets.cpp.
constexpr const char* kPhillipsLargestD = "0.78";

struct Projections {
  Linear W_query, W_key, W_value, out_proj;
};

// Rows [i * d_k, (i + 1) * d_k) of a fused layer: the part of it that belongs to head i.
Linear head_slice(const Linear& fused, std::size_t i, std::size_t d_k) {
  Linear part;
  part.weight = xt::view(fused.weight, xt::range(i * d_k, (i + 1) * d_k), xt::all());  // (d_k, d_in)
  if (fused.has_bias()) part.bias = xt::view(fused.bias, xt::range(i * d_k, (i + 1) * d_k));  // (d_k,)
  return part;
}

// (B, T, d) -> (B, 1, T, d): one head's tensor in the layout attention expects.
Ten4 as_single_head(const Ten3& t) {
  Ten4 out = xt::empty<float>({t.shape()[0], std::size_t{1}, t.shape()[1], t.shape()[2]});  // (B, 1, T, d)
  std::copy(t.begin(), t.end(), out.begin());
  return out;
}

std::string yes_no(bool b) { return b ? "True" : "False"; }

// Attention with the article's mask: Raschka fills -inf before scaling (core's own flow); the
// Phillips and Llama code fill a finite value into the scaled scores.
Attention attend(const Ten4& q, const Ten4& k, const Ten4& v, bool causal, const ArticleModel& m) {
  if (!causal || !m.fill_after_scaling) return scaled_dot_product_attention(q, k, v, causal);
  Attention a = scaled_dot_product_attention(q, k, v, false);          // scores, scaled, nothing masked
  a.scaled = masked_fill(a.scaled, causal_mask(q.shape()[2]), m.fill);  // (B, h, T, T)
  a.attn_weights = softmax_rows(a.scaled);                              // (B, h, T, T)
  a.context = matmul(a.attn_weights, v);  // (B, h, T, T) @ (B, h, T, d_k) -> (B, h, T, d_k)
  return a;
}

// "[1, 3, 2, 2]", as PyTorch writes shapes in its error messages.
std::string torch_list(const Shape& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// What `a.masked_fill_(mask, value)` does with these shapes in PyTorch 1.13: "" when it runs, else
// the RuntimeError's message. Broadcasting compares sizes from the last axis backwards (numbered
// in the broadcast result); an in-place fill must not grow `a`. `failures` counts the axes that
// stop it.
std::string masked_fill_inplace_error(const Shape& a, const Shape& mask, std::size_t& failures) {
  const std::size_t n = std::max(a.size(), mask.size());
  Shape out(n);
  std::string first;
  failures = 0;
  for (std::size_t k = 0; k < n; ++k) {  // k counts from the last axis
    const std::size_t axis = n - 1 - k;
    const std::size_t sa = k < a.size() ? a[a.size() - 1 - k] : 1, sb = k < mask.size() ? mask[mask.size() - 1 - k] : 1;
    if (sa != sb && sa != 1 && sb != 1) {
      ++failures;
      if (first.empty())
        first = "The size of tensor a (" + std::to_string(sa) + ") must match the size of tensor b (" +
                std::to_string(sb) + ") at non-singleton dimension " + std::to_string(axis);
    }
    out[axis] = sa == 1 ? sb : sa;
  }
  if (!first.empty()) return first;
  if (out != a) {
    for (std::size_t k = 0; k < n; ++k) failures += (k >= n - a.size() ? a[k - (n - a.size())] : 1) != out[k];
    return "output with shape " + torch_list(a) + " doesn't match the broadcast shape " + torch_list(out);
  }
  return "";
}

// D(a, c): how differently heads a and c spread their attention, the total-variation distance
// between their weights averaged over the query rows: the mean over the B * T rows (b, t) of
// 0.5 * sum_j |w[b, a, t, j] - w[b, c, t, j]|. 0: the same weights; 1: no key in common.
double head_distance(const Ten4& w, std::size_t a, std::size_t c) {  // w (B, h, T, S)
  const std::size_t B = w.shape()[0], T = w.shape()[2], S = w.shape()[3];
  double sum = 0.0;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t t = 0; t < T; ++t) {
      double row = 0.0;
      for (std::size_t j = 0; j < S; ++j) row += std::fabs(double(w(b, a, t, j)) - double(w(b, c, t, j)));
      sum += 0.5 * row;
    }
  return B > 0 && T > 0 ? sum / static_cast<double>(B * T) : 0.0;
}

// The widest spread of the scaled scores within one row over the keys it sees (j <= t when
// causal), over every batch entry, head and row: softmax gives no seen key more than
// exp(spread) times another's weight.
double widest_scaled_spread(const Ten4& scores, std::size_t d_k, bool causal) {  // scores (B, h, T, S)
  const std::size_t B = scores.shape()[0], h = scores.shape()[1], T = scores.shape()[2], S = scores.shape()[3];
  double widest = 0.0;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < h; ++i)
      for (std::size_t t = 0; t < T; ++t) {
        double lo = std::numeric_limits<double>::infinity(), hi = -lo;
        for (std::size_t j = 0; j < S && (!causal || j <= t); ++j) {
          lo = std::min(lo, double(scores(b, i, t, j)));
          hi = std::max(hi, double(scores(b, i, t, j)));
        }
        if (lo <= hi) widest = std::max(widest, hi - lo);
      }
  return widest / std::sqrt(static_cast<double>(d_k));
}

// What the stages share: the sizes, x, the four layers and the tensors of the forward pass.
// Built once by the lesson (not copied: tok and cols point into `in`); each stage makes what it
// adds, in the lesson's order, so a run holds what it held before at every point. With `values`
// false (a --shapes-only run past printable sizes: check_sizes) nothing is computed and every
// Held holds its shape alone; the stages branch only where a check or a sentence needs the numbers.
struct HeadsLesson {
  const LessonOptions& opts;
  const std::uint64_t seed;  // the book's seed for 3.6.2
  const std::size_t d_out, h;
  const bool causal;
  std::size_t d_k = 0, d_o = 0, kv = 0, groups = 0, d_kv = 0;  // set by the constructor's checks
  bool grouped = false;
  bool values = true;
  const LessonInput in;  // x (B, T, d_in) and its labels
  const std::size_t B, T, d_in;
  const report::Labels& tok;   // row labels
  const report::Labels& cols;  // column labels (empty when the batch holds different sentences)
  const bool qkv_bias;
  const ArticleModel model;  // names, mask and mistakes of the preset's article
  const bool out_bias;
  const bool keep_mask;      // causal, and the article writes mask == 0
  const std::string din, dout, dkv;
  std::string d_o_name;      // out_proj's output width as the equations name it: d_out (the book's), d_in, or the number
  recipe::Recipe steps;
  Projections p;
  const double per_scores;   // bytes of one (B, h, T, T) float32 tensor
  Held<Ten3> queries;                          // (B, T, d_out)
  Held<Ten3> keys, values_;                    // (B, T, d_kv)
  Held<Ten4> q_view;                           // (B, T, h, d_k)
  Held<Ten4> k_view, v_view;                   // (B, T, kv, d_k)
  Held<Ten4> q_heads, k_heads, v_heads;        // (B, h, T, d_k)
  Held<Ten4> k_kv_heads, v_kv_heads;           // (B, kv, T, d_k)
  Held<Ten4> attn_scores, attn_weights;        // (B, h, T, T)
  Held<Ten4> context_heads;                    // (B, h, T, d_k)
  Held<Ten4> context_tokens;                   // (B, T, h, d_k)
  Held<Ten3> context;                          // (B, T, d_out)
  Held<Ten3> output;                           // (B, T, d_o)
  std::size_t heads_before_tokens = 0;         // the stage of the transpose, for the one that undoes it

  HeadsLesson(const LessonOptions& o, report::Report& out);
  HeadsLesson(const HeadsLesson&) = delete;

  // --heads must divide --d-out, --kv-heads --heads: sets d_k, d_o, kv and the widths they give.
  void check_head_sizes() {
    if (d_out % h != 0)
      throw UsageError("--heads must divide --d-out", "--heads", "a divisor of " + std::to_string(d_out),
                       std::to_string(h));
    d_k = d_out / h;
    d_o = out_proj_width(opts, d_out);  // out_proj: d_out -> d_o
    kv = size_option(opts.kv_heads, h, "--kv-heads");  // key/value heads
    if (h % kv != 0)
      throw UsageError("--kv-heads must divide --heads", "--kv-heads", "a divisor of " + std::to_string(h),
                       std::to_string(kv));
    groups = h / kv;   // query heads per key/value head
    d_kv = kv * d_k;   // width of the key and value projections
    grouped = kv != h;
  }

  // A weight, or its shape when nothing was drawn.
  Held<Mat> weight(const Mat& w, std::size_t rows, std::size_t cols_) const {
    return hold(values, {rows, cols_}, [&] { return w; });  // (out, in)
  }
  Held<Vec> bias(const Vec& b, std::size_t n) const { return hold(values, {n}, [&] { return b; }); }  // (out,)
  // Loaded layers have the biases their files give; drawn ones the options' (also when not drawn).
  bool has_bias(const Linear& layer, bool drawn) const { return opts.weights.empty() ? drawn : layer.has_bias(); }
};

HeadsLesson::HeadsLesson(const LessonOptions& o, report::Report& out)
    : opts(o),
      seed(o.seed.value_or(123)),
      d_out(projection_width(o, 2)),
      h(size_option(o.heads, 2, "--heads")),
      causal(o.causal.value_or(true)),
      // Sizes are checked as soon as the input's are known, before x is made. A --shapes-only run
      // past printable sizes computes nothing (check_sizes): `values` is then false, and every
      // tensor below holds its shape alone.
      // The head sizes are checked first (check_head_sizes), then the input's.
      in((check_head_sizes(), lesson_input(o, 3, 2, true, [&](const InputSizes& n) {  // the book stacks two copies
            values = check_sizes({{"attn_scores", {n.B, h, n.T, n.T}, "--batch, --heads, --seq-len"},
                                  {"queries", {n.B, n.T, d_out}, "--batch, --seq-len, --d-out"},
                                  {"W_query.weight", {d_out, n.d_in}, "--d-in, --d-out"},
                                  {"out_proj.weight", {d_o, d_out}, "--d-out, --out-proj-width"}},
                                 opts.shapes_only, /*values_optional=*/!out.keep_values);
            // All together, the lesson's own tensors and the report's (measured at each limit alone,
            // docs/testing.md): the (B, T, d_out) ones are many, queries to the merged heads, fused and split.
            if (values)
              values = values_within_held("heads at these sizes",
                                          held_bytes(opts, {{5, {n.B, h, n.T, n.T}},
                                                            {7, {d_out, n.d_in}},
                                                            {3, {d_o, d_out}},
                                                            {3, {n.B, n.T, n.d_in}},
                                                            {24, {n.B, n.T, d_out}},
                                                            {2, {n.B, n.T, d_o}}}),  // output, output_wrong
                                          opts.shapes_only, /*values_optional=*/!out.keep_values, /*skips_values=*/true,
                                          "--batch, --seq-len, --d-in, --d-out, --heads, --out-proj-width");
            return values;
          }))),
      B(in.B),
      T(in.T),
      d_in(in.d_in),
      tok(in.rows),
      cols(in.cols),
      qkv_bias(o.weights.empty() ? o.qkv_bias : o.weights.count("W_query_bias") != 0),
      model(article_model(o.preset)),
      out_bias(o.weights.empty() ? model.out_proj_bias : o.weights.count("out_proj_bias") != 0),
      keep_mask(causal && model.mask == MaskConvention::HideWhereZero),
      din(std::to_string(d_in)),
      dout(std::to_string(d_out)),
      dkv(std::to_string(d_kv)),
      steps(in.recipe),
      per_scores(4.0 * B * h * T * T) {
  const std::string& Wq = model.query;  // the layer names the article prints
  const std::string& Wk = model.key;
  const std::string& Wv = model.value;
  const std::string& Wo = model.output;
  d_o_name = d_o == d_out ? "d_out" : d_o == d_in ? "d_in" : std::to_string(d_o);
  // Four layers, drawn in the order MultiHeadAttention.__init__ constructs them (or loaded from
  // --weights). The header's "reproduce in PyTorch" lines are rendered from this recipe, which
  // starts with however x was made. A run without values records them without drawing.
  TorchGenerator gen(seed);
  if (opts.weights.empty()) steps.seed(gen, seed);
  p.W_query = linear_weights(opts, "W_query", d_in, d_out, qkv_bias, gen, steps, Wq, values);     // weight (d_out, d_in)
  p.W_key = linear_weights(opts, "W_key", d_in, d_kv, qkv_bias, gen, steps, Wk, values);          // weight (d_kv, d_in)
  p.W_value = linear_weights(opts, "W_value", d_in, d_kv, qkv_bias, gen, steps, Wv, values);      // weight (d_kv, d_in)
  p.out_proj = linear_weights(opts, "out_proj", d_out, d_o, out_bias, gen, steps, Wo, values);    // weight (d_o, d_out)
  if (opts.weights.empty() && !grouped && opts.preset.empty() && d_o == d_out) {
    steps.add(recipe::Comment{"or the book's MultiHeadAttention(" + din + ", " + dout + ", " + std::to_string(T) +
                              ", 0.0, num_heads=" + std::to_string(h) + ", qkv_bias=" + yes_no(qkv_bias) + "),"});
    steps.add(recipe::Comment{std::string("which builds these four layers in this order") +
                              (causal ? "" : " (but always masks)")});
  }

  std::vector<std::string> setting;
  if (steps.uses_seed()) setting.push_back("seed " + std::to_string(seed));
  for (const std::string& item : {"batch " + std::to_string(B), "tokens " + std::to_string(T), "d_in " + din,
                                  "d_out " + dout, "heads " + std::to_string(h), "d_k " + std::to_string(d_k)})
    setting.push_back(item);
  if (grouped) setting.push_back("kv_heads " + std::to_string(kv));
  if (d_o != d_out) setting.push_back("out_proj_width " + std::to_string(d_o));
  setting.push_back(std::string("causal ") + yes_no(causal));
  setting.push_back(std::string("qkv_bias ") + yes_no(qkv_bias));
  if (!opts.preset.empty()) setting.push_back("preset " + opts.preset);
  const char* follows = preset_follows(opts.preset);  // a preset names its own article
  out.header = {"heads", "Multi-head attention: split, attend, merge",
                follows ? follows
                        : "Raschka, Build a Large Language Model (From Scratch), 3.6.2; Phillips, The Implemented Transformer",
                setting, steps.lines()};

}

void stage_inputs(const HeadsLesson& L, report::Report& out) {
  const bool values = L.values;
  const LessonOptions& opts = L.opts;
  const LessonInput& in = L.in;
  auto& s = inputs_stage(out, BatchView(true), in, "Inputs: a batch of token embeddings");
  // The reproduce block above lists x's values when it builds x from a literal: x is a copy.
  bool x_literal = false;
  for (const std::string& line : out.header.reproduce) x_literal = x_literal || line.rfind("x = torch.tensor(", 0) == 0;
  if (x_literal) s.detail("x");
  for (const auto& note : opts.preset_notes) s.note(note);
  if (!values)
    s.note("--shapes-only at this size computes nothing: the stages below list names and shapes only, "
           "and the checks and the sentences about the numbers, which need the values, are left out. "
           "What the values would take is in the scores stage.");
}

void stage_weights(const HeadsLesson& L, report::Report& out) {
  const std::size_t d_in = L.d_in, d_out = L.d_out, h = L.h, d_k = L.d_k, d_o = L.d_o, kv = L.kv, groups = L.groups, d_kv = L.d_kv;
  const bool grouped = L.grouped, qkv_bias = L.qkv_bias, out_bias = L.out_bias;
  const std::string &Wq = L.model.query, &Wk = L.model.key, &Wv = L.model.value, &Wo = L.model.output, &dkv = L.dkv, &d_o_name = L.d_o_name;
  const Projections& p = L.p;
  const LessonOptions& opts = L.opts;
  auto& s = out.stage("Weights: one fused projection per role, plus " + Wo,
                      grouped ? Wq + " = nn.Linear(d_in, d_out); " + Wk + ", " + Wv + " = nn.Linear(d_in, kv_heads * d_k)"
                              : Wq + ", " + Wk + ", " + Wv + " = nn.Linear(d_in, d_out); " + Wo +
                                    " = nn.Linear(d_out, " + d_o_name + (out_bias ? "" : ", bias=False") + ")");
  // Drawn numbers a learner need not read: named on the out: line, printed with --full.
  s.show(Wq + ".weight", L.weight(p.W_query.weight, d_out, d_in)).detail();
  if (L.has_bias(p.W_query, qkv_bias)) s.show(Wq + ".bias", L.bias(p.W_query.bias, d_out)).detail();
  s.show(Wk + ".weight", L.weight(p.W_key.weight, d_kv, d_in)).detail();
  if (L.has_bias(p.W_key, qkv_bias)) s.show(Wk + ".bias", L.bias(p.W_key.bias, d_kv)).detail();
  s.show(Wv + ".weight", L.weight(p.W_value.weight, d_kv, d_in)).detail();
  if (L.has_bias(p.W_value, qkv_bias)) s.show(Wv + ".bias", L.bias(p.W_value.bias, d_kv)).detail();
  s.show(Wo + ".weight", L.weight(p.out_proj.weight, d_o, d_out)).detail();
  if (L.has_bias(p.out_proj, out_bias)) s.show(Wo + ".bias", L.bias(p.out_proj.bias, d_o)).detail();
  s.note("Head i (counting from 0) will use rows [i*d_k : (i+1)*d_k] of each (d_out, d_in) weight, "
         "with d_k = " + std::to_string(d_k) + ": the " + std::to_string(h) +
         " heads are already inside one matrix." +
         (grouped ? " " + Wk + " and " + Wv + " hold only " + std::to_string(kv) + " heads of " + std::to_string(d_k) +
                        " (" + dkv + " rows): each serves " + std::to_string(groups) + " query heads."
                  : ""));
  if (!opts.weights.empty()) s.note(weights_origin(opts));
}

void stage_fused_projections(HeadsLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T, d_out = L.d_out, d_kv = L.d_kv;
  const bool values = L.values, qkv_bias = L.qkv_bias;
  const std::string& Wq = L.model.query;
  const report::Labels& tok = L.tok;
  const Ten3& x = L.in.x;
  const Projections& p = L.p;
  L.queries = hold(values, {B, T, d_out}, [&] { return linear(p.W_query, x); });  // (B, T, d_in) -> (B, T, d_out)
  L.keys = hold(values, {B, T, d_kv}, [&] { return linear(p.W_key, x); });        // (B, T, d_kv)
  L.values_ = hold(values, {B, T, d_kv}, [&] { return linear(p.W_value, x); });   // (B, T, d_kv)
  const Held<Ten3> &queries = L.queries, &keys = L.keys, &values_ = L.values_;
  auto& s = out.stage("Fused projections", "queries = x @ " + Wq + ".weight^T" +
                                               (qkv_bias ? " + " + Wq + ".bias" : "") + "  (likewise keys, values)");
  s.in("x", x);
  // q_heads (stage 5) prints the same numbers, one block per head.
  s.show("queries", queries, tok).detail().show("keys", keys, tok).detail().show("values", values_, tok).detail();
}

void stage_split_heads(HeadsLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T, d_out = L.d_out, h = L.h, d_k = L.d_k, kv = L.kv;
  const bool grouped = L.grouped, values = L.values;
  const Held<Ten3> &queries = L.queries, &keys = L.keys, &values_ = L.values_;
  L.q_view = hold(values, {B, T, h, d_k}, [&] { return split_heads(*queries, h); });   // (B, T, d_out) -> (B, T, h, d_k)
  L.k_view = hold(values, {B, T, kv, d_k}, [&] { return split_heads(*keys, kv); });    // (B, T, d_kv) -> (B, T, kv, d_k)
  L.v_view = hold(values, {B, T, kv, d_k}, [&] { return split_heads(*values_, kv); }); // (B, T, kv, d_k)
  const Held<Ten4>& q_view = L.q_view;
  auto& s = out.stage("Split into heads", grouped ? "queries.view(B, T, h, d_k);  keys, values: .view(B, T, kv_heads, d_k)"
                                                  : "queries.view(B, T, h, d_k)  (likewise keys, values)");
  s.in("queries", queries);
  s.show("queries.view(B, T, h, d_k)", q_view).detail();
  s.note("Nothing moves in memory: the last axis of " + std::to_string(d_out) + " is read as " +
         std::to_string(h) + " heads of " + std::to_string(d_k) + ".");
}

void stage_heads_before_tokens(HeadsLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T, h = L.h, d_k = L.d_k, kv = L.kv, groups = L.groups;
  const bool values = L.values;
  const report::Labels& tok = L.tok;
  const Held<Ten4> &q_view = L.q_view, &k_view = L.k_view, &v_view = L.v_view;
  L.q_heads = hold(values, {B, h, T, d_k}, [&] { return swap_token_head_axes(*q_view); });      // (B, T, h, d_k) -> (B, h, T, d_k)
  L.k_kv_heads = hold(values, {B, kv, T, d_k}, [&] { return swap_token_head_axes(*k_view); });  // (B, kv, T, d_k)
  L.v_kv_heads = hold(values, {B, kv, T, d_k}, [&] { return swap_token_head_axes(*v_view); });  // (B, kv, T, d_k)
  L.k_heads = hold(values, {B, h, T, d_k}, [&] { return repeat_kv_heads(*L.k_kv_heads, groups); });  // (B, kv, T, d_k) -> (B, h, T, d_k)
  L.v_heads = hold(values, {B, h, T, d_k}, [&] { return repeat_kv_heads(*L.v_kv_heads, groups); });  // (B, h, T, d_k)
  const Held<Ten4>& q_heads = L.q_heads;
  auto& s = out.stage("Heads before tokens", "q_heads = queries.view(B, T, h, d_k).transpose(1, 2)");
  L.heads_before_tokens = s.index;
  s.in("queries.view(B, T, h, d_k)", q_view);
  s.show("q_heads", q_heads, tok);
  if (B * h * T * d_k > kPrintedValues) s.detail();
  s.note("Now each (batch, head) block is a (T, d_k) matrix with one row per token: exactly "
         "the shape single-head attention works on, " + std::to_string(B * h) + " of them side by side.");
}

// Only when grouped (--kv-heads below --heads).
void stage_grouped_kv(const HeadsLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T, h = L.h, d_k = L.d_k, kv = L.kv, groups = L.groups;
  const report::Labels& tok = L.tok;
  const Held<Ten3>& keys = L.keys;
  const Held<Ten4> &k_kv_heads = L.k_kv_heads, &k_heads = L.k_heads;
  std::vector<std::vector<std::string>> rows;
  for (std::size_t k = 0; k < kv; ++k) {
    std::string served;
    for (std::size_t g = 0; g < groups; ++g) served += (g ? ", " : "") + std::to_string(k * groups + g);
    rows.push_back({std::to_string(k), served});
  }
  auto& s = out.stage("Grouped keys and values: each kv head serves " + std::to_string(groups) + " query heads",
                      "k_heads = keys.view(B, T, kv_heads, d_k).transpose(1, 2).repeat_interleave(" +
                          std::to_string(groups) + ", dim=1)");
  s.in("keys", keys);
  s.table({"kv head", "query heads reading it"}, rows);
  if (B * kv * T * d_k <= 4096) s.show("keys.view(B, T, kv_heads, d_k).transpose(1, 2)", k_kv_heads, tok);
  s.show("k_heads", k_heads, tok);
  s.note("Grouped-query attention: the queries keep all " + std::to_string(h) + " heads, but keys and values "
         "are projected to " + std::to_string(kv) + " heads only and each is repeated for " +
         std::to_string(groups) + " query heads in a row. The key/value projections (and the cache a decoder "
         "keeps of them) shrink by " + std::to_string(groups) + "x; the attention itself runs on " +
         std::to_string(h) + " heads as before. With --kv-heads equal to --heads this stage disappears.");
}

void stage_scores(HeadsLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T, d_out = L.d_out, h = L.h, d_k = L.d_k;
  const bool causal = L.causal, values = L.values;
  const double per_scores = L.per_scores;
  const report::Labels &tok = L.tok, &cols = L.cols;
  const ArticleModel& model = L.model;
  const Held<Ten4> &q_heads = L.q_heads, &k_heads = L.k_heads, &v_heads = L.v_heads;
  // The attention itself, every (B, h, T, T) intermediate kept for the stages (attend keeps the
  // scaled scores too; they are dropped here, no stage shows them).
  L.attn_scores = L.attn_weights = Held<Ten4>(Shape{B, h, T, T});  // (B, h, T, T)
  L.context_heads = Held<Ten4>(Shape{B, h, T, d_k});                // (B, h, T, d_k)
  if (values) {
    Attention a = attend(*q_heads, *k_heads, *v_heads, causal, model);
    L.attn_scores = Held<Ten4>(std::move(a.attn_scores));
    L.attn_weights = Held<Ten4>(std::move(a.attn_weights));
    L.context_heads = Held<Ten4>(std::move(a.context));
  }
  const Held<Ten4>& attn_scores = L.attn_scores;
  auto& s = out.stage("Scores for every head", "attn_scores = q_heads @ k_heads.transpose(2, 3)");
  s.in("q_heads", q_heads).in("k_heads", k_heads);
  s.show("attn_scores", attn_scores, tok, cols).detail();  // attn_weights below is what the heads do
  s.note("A batched matmul: one (T, d_k) @ (d_k, T) product per batch entry and head, " +
         std::to_string(B * h) + " of them in one call.");
  if (!values) {
    // What the values would take: the reason this run computed none.
    const double fast = 4.0 * (B * T * d_out + kFastScratchThreads * kDefaultBlock * T);
    s.table({"what the attention holds", "floats", "bytes"},
            {{"attn_scores (attn_weights the same)", shape_str({B, h, T, T}), report::bytes(per_scores)},
             {"scores, scaled, weights (materialised)", "3 x " + shape_str({B, h, T, T}), report::bytes(3 * per_scores)},
             {"fast path: context + score blocks", shape_str({B, T, d_out}) + " + " +
                  std::to_string(kFastScratchThreads) + " x " + shape_str({kDefaultBlock, T}),
              report::bytes(fast)}});
    s.note("A fast path computes the same context without any (T, T) tensor: it scores a block of " +
           std::to_string(kDefaultBlock) + " query rows at a time against the keys they may see, takes the softmax "
           "there and multiplies by the values at once, so it holds one (" + std::to_string(kDefaultBlock) +
           ", T) block for each processor working on it (the table counts " + std::to_string(kFastScratchThreads) +
           "). Its memory grows with T, not with T x T.");
  }
}

void stage_batched_matmul_aside(const HeadsLesson& L, report::Report& out) {
  const bool values = L.values;
  // The book's own (b, num_heads, num_tokens, head_dim) = (1, 2, 3, 4) example, literally.
  const Ten4 a = {{{{0.2745f, 0.6584f, 0.2775f, 0.8573f},
                    {0.8993f, 0.0390f, 0.9268f, 0.7388f},
                    {0.7179f, 0.7058f, 0.9156f, 0.4340f}},
                   {{0.0772f, 0.3565f, 0.1479f, 0.5331f},
                    {0.4066f, 0.2318f, 0.4545f, 0.9737f},
                    {0.4606f, 0.5159f, 0.4220f, 0.5786f}}}};  // (1, 2, 3, 4)
  const auto batched = hold(values, {1, 2, 3, 3}, [&] { return matmul_bt(a, a); });  // (1, 2, 3, 4) @ (1, 2, 4, 3) -> (1, 2, 3, 3)
  auto& s = out.stage("Aside: the book's batched matmul",
                      "a @ a.transpose(2, 3)   with a of shape (1, 2, 3, 4)");
  s.show("a", hold(values, {1, 2, 3, 4}, [&] { return a; })).detail();  // the book's literal
  s.show("a @ a.transpose(2, 3)", batched);
  if (values) {
    Ten4 looped = xt::zeros<float>({std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{3}});  // (1, 2, 3, 3)
    for (std::size_t head = 0; head < 2; ++head) {
      const Mat one = xt::view(a, 0, head, xt::all(), xt::all());  // (3, 4)
      xt::view(looped, 0, head, xt::all(), xt::all()) = matmul_bt(one, one);  // (3, 4) @ (4, 3) -> (3, 3)
    }
    check_close(s, "equals a[0, 0] @ a[0, 0].T and a[0, 1] @ a[0, 1].T computed one head at a time", *batched,
                looped);
  }
  s.note("Raschka's example tensor from 3.6.2: the batched matmul of the scores above, one (3, 4) @ (4, 3) "
         "per head.");
}

// Only when the preset's article writes the mask as 0 = hidden (keep_mask).
void stage_two_masks(const HeadsLesson& L, report::Report& out) {
  const std::size_t T = L.T;
  const bool values = L.values;
  const report::Labels& cols = L.cols;
  const ArticleModel& model = L.model;
  // The article writes the mask the other way round from the book: show both, and that they agree.
  const auto book_mask = hold(values, {T, T}, [&] { return causal_mask(T); });  // (T, T): 1 = hidden
  const auto keep = hold(values, {T, T}, [&] { return lower_triangle(T); });    // (T, T): 0 = hidden
  const auto hidden_book = hold(values, {T, T}, [&] {  // (T, T): 1 where the book's mask hides
    Mat m = xt::zeros<float>({T, T});
    for (std::size_t i = 0; i < T; ++i)
      for (std::size_t j = 0; j < T; ++j) m(i, j) = (*book_mask)(i, j) == 1.0f ? 1.0f : 0.0f;
    return m;
  });
  const auto hidden_article = hold(values, {T, T}, [&] {  // (T, T): 1 where the article's mask hides
    Mat m = xt::zeros<float>({T, T});
    for (std::size_t i = 0; i < T; ++i)
      for (std::size_t j = 0; j < T; ++j) m(i, j) = (*keep)(i, j) == 0.0f ? 1.0f : 0.0f;
    return m;
  });
  std::size_t hidden = T * (T - 1) / 2;  // the positions above the diagonal; counted below when computed
  if (values) {
    hidden = 0;
    for (float v : *hidden_article) hidden += v != 0.0f;
  }
  auto& s = out.stage("Two ways to write the causal mask: 1 = hidden, or 0 = hidden",
                      "mask = torch.triu(torch.ones(T, T), diagonal=1)   # Raschka: masked_fill(mask.bool(), -inf)\n"
                      "mask = torch.tril(torch.ones(T, T))   # this article: masked_fill(mask == 0, " +
                          model.fill_text + ")");
  s.show("torch.triu(torch.ones(T, T), diagonal=1)", book_mask, cols, cols);
  s.show("torch.tril(torch.ones(T, T))", keep, cols, cols);
  s.show("triu(...) == 1", hidden_book, cols, cols);
  s.show("tril(...) == 0", hidden_article, cols, cols);
  if (values) check_identical(s, "the two masks hide exactly the same positions", *hidden_article, *hidden_book);
  s.note("Raschka's mask marks what is hidden (1 above the diagonal) and fills where it is true; this "
         "article's mask marks what may be seen (1 on and below the diagonal) and fills where it is 0. "
         "Both hide the same " + std::to_string(hidden) + " of the " + std::to_string(T * T) +
         " positions. Mixing the conventions (masked_fill(tril_mask.bool(), ...)) would hide the past and "
         "the token itself instead of the future.");
}

void stage_softmax(const HeadsLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T, h = L.h, d_k = L.d_k;
  const bool causal = L.causal, values = L.values, keep_mask = L.keep_mask;
  const report::Labels &tok = L.tok, &cols = L.cols;
  const ArticleModel& model = L.model;
  const LessonOptions& opts = L.opts;
  const Held<Ten4> &q_heads = L.q_heads, &k_heads = L.k_heads, &v_heads = L.v_heads, &attn_scores = L.attn_scores, &attn_weights = L.attn_weights;
  std::string equation = "attn_weights = softmax(attn_scores / sqrt(d_k), dim=-1)";
  if (causal)
    equation = model.fill_after_scaling
                   ? "attn_weights = softmax((attn_scores / sqrt(d_k)).masked_fill(" +
                         std::string(keep_mask ? "mask == 0" : "mask.bool()") + ", " + model.fill_text + "), dim=-1)"
                   : "attn_weights = softmax(attn_scores.masked_fill(mask, -inf) / sqrt(d_k), dim=-1)";
  auto& s = out.stage(causal ? "Causal mask, scaling and softmax" : "Scaling and softmax (no mask)", equation);
  s.in("attn_scores", attn_scores);
  s.show("attn_weights", attn_weights, tok, cols);
  s.attention_weights(report::Training::drawn_unless(!opts.weights.empty()));
  if (B * h > kPrintedBlocks) s.picture_only();  // its heatmaps draw it
  if (values) {
    check_rows_sum_to_one(s, "attn_weights", *attn_weights);
    if (causal && model.fill != -std::numeric_limits<float>::infinity()) {
      const Attention inf = scaled_dot_product_attention(*q_heads, *k_heads, *v_heads, true);  // Raschka's -inf
      s.question("does the fill " + model.fill_text + " give exactly the weights -inf gives here?", "max |diff|",
                 max_abs_diff(*attn_weights, inf.attn_weights), Relation::AtMost, 0.0,
                 "some scaled score is within about 104 of the fill, so exp(fill - max) is not 0 in float32");
    }
  }
  std::string note = (causal ? "The same (T, T) mask serves every batch entry and head; "
                             : "No mask here: every token sees every token, in every batch entry and head; ") +
                     std::string("d_k = ") + std::to_string(d_k) + " is the head width, not d_out.";
  // How different the heads are, measured on this run's weights (bounded: h^2 / 2 pairs of
  // (B, T, T) tensors).
  const double pair_work = 0.5 * h * (h - 1) * double(B) * T * T;
  if (values && h > 1 && pair_work <= kHeadDistanceWork) {
    double largest = -1.0, smallest = 2.0;
    std::size_t la = 0, lc = 1, sa = 0, sc = 1;
    std::string each;
    for (std::size_t a = 0; a < h; ++a)
      for (std::size_t c = a + 1; c < h; ++c) {
        const double d = head_distance(*attn_weights, a, c);
        each += std::string(each.empty() ? "" : ", ") + "D(" + std::to_string(a) + ", " + std::to_string(c) +
                ") = " + report::fixed(d, 4);
        if (d > largest) largest = d, la = a, lc = c;
        if (d < smallest) smallest = d, sa = a, sc = c;
      }
    // Every pair for 2 or 3 heads; beyond, the most alike (the question below has the most different).
    const std::string pairs = h <= 3 ? each
                                     : "the most alike pair, heads " + std::to_string(sa) + " and " +
                                           std::to_string(sc) + ", has D = " + report::fixed(smallest, 4) +
                                           "; the most different, heads " + std::to_string(la) + " and " +
                                           std::to_string(lc);
    note += " How different are the heads? D(a, b) = the mean over the " + std::to_string(B * T) +
            " query rows of 0.5 * sum_j |w_a[j] - w_b[j]| (0: the same weights, 1: no key in common)" +
            (h == 2 ? std::string(".") : ". Here " + pairs + ".");  // two heads: the question has their D
    s.note(note);
    note.clear();
    const double spread = widest_scaled_spread(*attn_scores, d_k, causal);
    s.question("do two heads attend differently here, with D(a, b) >= " + report::fixed(kHeadsDiffer, 1) + "?",
               "largest D(a, b)", largest, Relation::AtLeast, kHeadsDiffer,
               "every row's scaled scores span at most " + report::fixed(spread, 4) + ", so no key gets more than exp(" +
                   report::fixed(spread, 4) + ") = " + report::fixed(std::exp(spread), 4) +
                   " times another's weight" + (std::exp(spread) < 2.0 ? ": every head stays near uniform" : "") +
                   // Where heads do differ, for a run whose heads do not (phillips' own do).
                   (opts.preset != "phillips" ? ". Heads that differ: attn lesson heads --preset phillips has "
                                                "pairs up to D = " + std::string(kPhillipsLargestD)
                                              : std::string()));
  }
  if (!note.empty()) s.note(note);
}

void stage_context_per_head(const HeadsLesson& L, report::Report& out) {
  const report::Labels& tok = L.tok;
  const Held<Ten4> &v_heads = L.v_heads, &attn_weights = L.attn_weights, &context_heads = L.context_heads;
  auto& s = out.stage("Context per head", "context_heads = attn_weights @ v_heads");
  s.in("attn_weights", attn_weights).in("v_heads", v_heads);
  s.show("context_heads", context_heads, tok).detail();  // context_vec prints the same numbers, heads side by side
}

void stage_tokens_before_heads(HeadsLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T, h = L.h, d_k = L.d_k, heads_before_tokens = L.heads_before_tokens;
  const bool values = L.values;
  const Held<Ten4>& context_heads = L.context_heads;
  L.context_tokens = hold(values, {B, T, h, d_k}, [&] { return swap_token_head_axes(*context_heads); });  // (B, h, T, d_k) -> (B, T, h, d_k)
  const Held<Ten4>& context_tokens = L.context_tokens;
  auto& s = out.stage("Tokens before heads again", "context_heads.transpose(1, 2)");
  s.fold("transpose like stage " + std::to_string(heads_before_tokens),
         "transposes like stage " + std::to_string(heads_before_tokens));
  s.in("context_heads", context_heads);
  s.show("context_heads.transpose(1, 2)", context_tokens).detail();  // stage 5's transpose, undone
}

void stage_merge_heads(HeadsLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T, d_out = L.d_out;
  const bool values = L.values;
  const report::Labels& tok = L.tok;
  const Held<Ten4>& context_tokens = L.context_tokens;
  L.context = hold(values, {B, T, d_out}, [&] { return merge_heads(*context_tokens); });  // (B, T, h, d_k) -> (B, T, d_out)
  const Held<Ten3>& context = L.context;
  auto& s = out.stage("Merge the heads", "context_vec = context_heads.transpose(1, 2).contiguous().view(B, T, d_out)");
  s.in("context_heads.transpose(1, 2)", context_tokens);
  s.show("context_vec", context, tok);
  if (B * T * d_out > kPrintedValues) s.detail();  // output, next, is what the module returns
  s.note("Each token's row is its heads' outputs side by side. .contiguous() is needed in "
         "PyTorch because the transpose left the memory in head-major order.");
}

// Only under the preset whose article's combine_heads has no return.
void stage_combine_heads_returns_none(const HeadsLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T, d_out = L.d_out, h = L.h, d_k = L.d_k;
  const bool values = L.values;
  const std::string& Wo = L.model.output;
  const report::Labels& tok = L.tok;
  const Held<Ten3>& context = L.context;
  const Held<Ten4>& context_heads = L.context_heads;
  // The walk-through's combine_heads builds this view and drops it: it has no return.
  const auto returned = hold(values, {B, T, d_out}, [&] {
    Ten3 r = xt::empty<float>({B, T, d_out});  // (B, h, T, d_k) -> (B, T, d_out), element by element
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i < h; ++i)
          for (std::size_t j = 0; j < d_k; ++j) r(b, t, i * d_k + j) = (*context_heads)(b, i, t, j);
    return r;
  });
  const std::string view_shape = shape_str(Shape{B, T, d_out});
  auto& s = out.stage("The walk-through's combine_heads returns None",
                      "def combine_heads(self, x):  x.transpose(1, 2).contiguous().view(B, T, d_model)   # no return\n"
                      "output = self.W_o(self.combine_heads(attention_output))");
  s.in("attention_output", context_heads);
  s.table({"the article's code", "what PyTorch 1.13 does"},
          {{"self.combine_heads(attention_output)",
            "builds the " + view_shape + " view, drops it, and returns None (a Python function without return)"},
           {"self.W_o(None)", "TypeError: linear(): argument 'input' (position 1) must be Tensor, not NoneType"}});
  s.show("combine_heads(attention_output)  # with return", returned, tok);
  if (values)
    check_identical(s, "with `return` added, combine_heads gives context_vec (B, h, T, d_k) -> (B, T, d_out)",
                    *returned, *context);
  s.note("The fix is one word: return x.transpose(1, 2).contiguous().view(batch_size, seq_length, "
         "self.d_model). The forward pass then reaches W_o (here " + Wo + ") with the " + view_shape +
         " context_vec above. Without it nothing fails inside combine_heads: the error appears where its "
         "result is used, in self.W_o(...).");
}

void stage_output_projection(HeadsLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T, d_in = L.d_in, d_out = L.d_out, h = L.h, d_o = L.d_o;
  const bool values = L.values, out_bias = L.out_bias;
  const std::string &Wo = L.model.output, &dout = L.dout, &d_o_name = L.d_o_name;
  const report::Labels& tok = L.tok;
  const Projections& p = L.p;
  const Held<Ten3>& context = L.context;
  L.output = hold(values, {B, T, d_o}, [&] { return linear(p.out_proj, *context); });  // (B, T, d_out) -> (B, T, d_o)
  const Held<Ten3>& output = L.output;
  auto& s = out.stage("Output projection", "output = context_vec @ " + Wo + ".weight^T" +
                                               (out_bias ? " + " + Wo + ".bias" : ""));
  s.in("context_vec", context);
  s.show("output", output, tok);
  // The default run's output is the book's context_vecs, printed; a large one (phillips') is detail.
  if (B * T * d_out > kPrintedValues) s.detail();
  if (h > 1)
    s.note(Wo + " lets the heads' results mix; without it each output column would come from "
           "one head only.");
  if (d_o != d_out)
    s.note(Wo + " is nn.Linear(d_out, " + d_o_name + "): it maps the " + dout + " columns of the " +
           std::to_string(h) + " merged heads to " + std::to_string(d_o) + (d_o == d_in ? ", x's width d_in" : "") +
           ". A model whose heads are not d_in wide together (num_heads * head_dim != hidden_size, as in "
           "Gemma) has such an out_proj; the book's is square, (d_out, d_out).");
}

void stage_one_head_at_a_time(const HeadsLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T, d_out = L.d_out, h = L.h, d_k = L.d_k, groups = L.groups;
  const bool causal = L.causal, values = L.values;
  const std::string& Wq = L.model.query;
  const report::Labels& tok = L.tok;
  const Ten3& x = L.in.x;
  const Projections& p = L.p;
  const ArticleModel& model = L.model;
  const Held<Ten3>& context = L.context;
  // Check 1: the fused flow equals h separate single-head attentions on slices of the weights.
  const auto concat = hold(values, {B, T, d_out}, [&] {
    Ten3 c = xt::zeros<float>({B, T, d_out});  // (B, T, d_out)
    for (std::size_t i = 0; i < h; ++i) {
      const Ten3 q_i = linear(head_slice(p.W_query, i, d_k), x);           // (B, T, d_k)
      const Ten3 k_i = linear(head_slice(p.W_key, i / groups, d_k), x);    // (B, T, d_k), its kv head
      const Ten3 v_i = linear(head_slice(p.W_value, i / groups, d_k), x);  // (B, T, d_k)
      const Attention one = attend(as_single_head(q_i), as_single_head(k_i), as_single_head(v_i), causal, model);
      xt::view(c, xt::all(), xt::all(), xt::range(i * d_k, (i + 1) * d_k)) =
          xt::view(one.context, xt::all(), 0, xt::all(), xt::all());
    }
    return c;
  });
  auto& s = out.stage("The same thing, one head at a time",
                      "head_i = attention(x @ " + Wq + ".weight[rows_i]^T, ...);  context = torch.cat(heads, dim=-1)");
  s.in("x", x);
  s.show("torch.cat(heads, dim=-1)", concat, tok).detail();  // context_vec again: the check says so
  if (values) check_close(s, "torch.cat(heads, dim=-1) equals the fused context_vec", *concat, *context);
  s.note("Head i only ever uses rows [i*d_k : (i+1)*d_k] of each weight: the fused version "
         "computes all " + std::to_string(h) + " heads with one matmul instead of " +
         std::to_string(h) + " small ones.");
}

// Check 2: the mistake of viewing (B, T, d_out) as (B, h, T, d_k) directly (T > 1, h > 1).
void stage_reshape_mistake(const HeadsLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T, d_out = L.d_out, h = L.h, d_k = L.d_k, d_o = L.d_o, kv = L.kv, groups = L.groups;
  const bool causal = L.causal, values = L.values;
  const report::Labels& tok = L.tok;
  const Projections& p = L.p;
  const ArticleModel& model = L.model;
  const Held<Ten3> &queries = L.queries, &keys = L.keys, &values_ = L.values_, &output = L.output;
  const auto q_wrong = hold(values, {B, h, T, d_k}, [&] { return reshape_without_transpose(*queries, h); });  // (B, T, d_out) -> (B, h, T, d_k)
  const auto output_wrong = hold(values, {B, T, d_o}, [&] {
    const Ten4 k_wrong = repeat_kv_heads(reshape_without_transpose(*keys, kv), groups);     // (B, h, T, d_k)
    const Ten4 v_wrong = repeat_kv_heads(reshape_without_transpose(*values_, kv), groups);  // (B, h, T, d_k)
    const Attention wrong = attend(*q_wrong, k_wrong, v_wrong, causal, model);
    Ten3 merged_wrong = xt::empty<float>({B, T, d_out});  // (B, h, T, d_k) -> (B, T, d_out), no transpose either
    std::copy(wrong.context.begin(), wrong.context.end(), merged_wrong.begin());
    return linear(p.out_proj, merged_wrong);  // (B, T, d_out) -> (B, T, d_o)
  });

  // Which pieces of `queries` ended up in head 0's rows, as Python slices.
  auto slice = [&](std::size_t token, std::size_t from, std::size_t to) {
    return "queries[b, " + std::to_string(token) + ", " + std::to_string(from) + ":" + std::to_string(to) + "]";
  };
  constexpr std::size_t kShownRows = 8;  // the table's rows of head 0; the rest follow the same pattern
  std::vector<std::vector<std::string>> rows;
  for (std::size_t t = 0; t < T && t < kShownRows; ++t) {
    std::string holds;
    std::size_t flat = t * d_k;  // head 0, position t starts here in the (T, d_out) buffer
    const std::size_t end = flat + d_k;
    while (flat < end) {
      const std::size_t token = flat / d_out, col = flat % d_out;
      const std::size_t stop = std::min(end - flat, d_out - col);
      holds += (holds.empty() ? "" : " + ") + slice(token, col, col + stop);
      flat += stop;
    }
    rows.push_back({std::to_string(t) + " (" + tok[t] + ")", slice(t, 0, d_k), holds});
  }
  auto& s = out.stage("The mistake: reshape without the transpose",
                      "q_wrong = queries.view(B, h, T, d_k)   # no .transpose(1, 2)");
  s.in("queries", queries);
  s.show("q_wrong", q_wrong).detail();  // the table shows where its rows come from
  s.table({"head 0, row", "should hold", "holds instead"}, rows);
  if (T > kShownRows)
    s.note("The table shows head 0's first " + std::to_string(kShownRows) + " rows of " + std::to_string(T) +
           "; the others follow the same pattern.");
  s.show("output_wrong", output_wrong, tok).detail();  // the question measures how far it is from output
  if (values)
    s.question("does the mistake change the output here?", "max |output_wrong - output|",
               max_abs_diff(*output_wrong, *output), Relation::AtLeast, rounding_tolerance(*output),
               "these weights give the same numbers either way, so only a test with other weights would "
               "catch the mistake");
  // Head 0 holds the first T * d_k values of queries' (T, d_out) rows: tokens 0 .. last_token.
  const std::size_t source_tokens = (T * d_k - 1) / d_out + 1;
  const std::string sources = source_tokens == 1
                                  ? "all " + std::to_string(T) + " come from token 0's row alone"
                                  : "they come from the first " + std::to_string(source_tokens) + " tokens' rows";
  s.note("The view is legal (same number of values), so nothing fails: the shape is right and the numbers are "
         "wrong. Head 0's rows are consecutive runs of " + std::to_string(d_k) + (d_k == 1 ? " value" : " values") +
         " of queries (the table): " +
         sources + ", so tokens and heads are mixed" +
         (causal ? " and the causal mask no longer lines up with real positions." : "."));
}

// The article's own mistake (Rakesh): query and keys stay (B, T, h, d_k), no .transpose(1, 2).
void stage_article_scores(const HeadsLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T, h = L.h, d_k = L.d_k, kv = L.kv;
  const bool values = L.values;
  const Held<Ten4> &q_view = L.q_view, &k_view = L.k_view, &q_heads = L.q_heads, &k_kv_heads = L.k_kv_heads, &attn_scores = L.attn_scores;
  const auto att_score = hold(values, {B, T, h, kv}, [&] { return matmul_bt(*q_view, *k_view); });  // (B, T, h, d_k) @ (B, T, d_k, kv) -> (B, T, h, kv)
  const Shape wrong_shape = att_score.shape(), mask_shape{T, T};
  std::size_t failures = 0;
  const std::string error = masked_fill_inplace_error(wrong_shape, mask_shape, failures);
  auto& s = out.stage("The article's code: scores without .transpose(1, 2)",
                      "att_score = query.view(B, T, h, d_k) @ keys.view(B, T, h, d_k).transpose(2, 3)\n"
                      "att_score.masked_fill_(torch.triu(torch.ones(T, T), diagonal=1).bool(), float('-inf'))");
  s.in("queries.view(B, T, h, d_k)", q_view).in("keys.view(B, T, h, d_k)", k_view);
  report::Labels head_rows;  // the rows of each (h, kv) block are query heads
  for (std::size_t i = 0; i < h; ++i) head_rows.push_back("head " + std::to_string(i));
  s.show("att_score (the article's)", att_score, head_rows);
  if (values) {
    // What one entry of it is: head i's query against head j's key, of the same token t.
    Ten4 head_pairs = xt::empty<float>({B, T, h, kv});  // (B, T, h, kv)
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t i = 0; i < h; ++i)
          for (std::size_t j = 0; j < kv; ++j) {
            double dot = 0.0;
            for (std::size_t c = 0; c < d_k; ++c)
              dot += double((*q_heads)(b, i, t, c)) * double((*k_kv_heads)(b, j, t, c));
            head_pairs(b, t, i, j) = static_cast<float>(dot);
          }
    check_close(s, "att_score[b, t, i, j] is head i's query against head j's key of the same token t",
                *att_score, head_pairs);
  }
  s.question("can the (T, T) mask fill att_score " + shape_str(wrong_shape) + " in place?",
             "axes where the shapes do not broadcast", static_cast<double>(failures), Relation::AtMost, 0.0,
             "PyTorch 1.13 raises RuntimeError: " + error);
  s.table({"code", "att_score", "each block of the last two axes compares", "masked_fill_ with mask (T, T)"},
          {{"the article's: query @ keys.transpose(2, 3)", shape_str(wrong_shape),
            "the heads of one token", error.empty() ? "runs, and hides head pairs" : "RuntimeError: " + error},
           {"fixed: q_heads @ k_heads.transpose(2, 3), after .transpose(1, 2)", shape_str(attn_scores.shape()),
            "the tokens of one head", "runs, and hides the future"}});
  s.note(std::string("Without .transpose(1, 2) the last two axes are (heads, d_k), so the matmul multiplies ") +
         "heads with heads inside each token: " + std::to_string(B * T) + " blocks of (" + std::to_string(h) +
         ", " + std::to_string(kv) + ") instead of " + std::to_string(B * h) + " blocks of (" +
         std::to_string(T) + ", " + std::to_string(T) + "). " +
         (error.empty() ? "Here the mask's shape happens to fit, so PyTorch raises nothing: it hides head pairs, "
                          "not future tokens, and every number after it is wrong. "
                        : "The (T, T) mask cannot fill it, so the article's code stops at masked_fill_. ") +
         "The fix is the one the stages above take: q_heads = query.transpose(1, 2) (likewise keys, values) "
         "before the scores, and context_vector.transpose(1, 2) back before the heads are merged.");
}

}  // namespace

// The lesson reads as its table of contents: one function per stage, in the order they print.
void lesson_heads(const LessonOptions& opts, report::Report& out) {
  HeadsLesson L(opts, out);
  stage_inputs(L, out);
  stage_weights(L, out);
  stage_fused_projections(L, out);
  stage_split_heads(L, out);
  stage_heads_before_tokens(L, out);
  if (L.grouped) stage_grouped_kv(L, out);
  stage_scores(L, out);
  stage_batched_matmul_aside(L, out);
  if (L.keep_mask) stage_two_masks(L, out);
  stage_softmax(L, out);
  stage_context_per_head(L, out);
  stage_tokens_before_heads(L, out);
  stage_merge_heads(L, out);
  if (L.model.combine_heads_returns_none) stage_combine_heads_returns_none(L, out);
  stage_output_projection(L, out);
  stage_one_head_at_a_time(L, out);
  if (L.T > 1 && L.h > 1 && !L.model.missing_transpose) stage_reshape_mistake(L, out);
  if (L.model.missing_transpose) stage_article_scores(L, out);
}

// Teaching order 600: see `attn list`; docs/heads.md is its page.
ATTN_REGISTER_LESSON({600, "heads", "Multi-head attention: split, attend, merge",
                      "one fused projection viewed as h heads, the transpose that keeps tokens apart, out_proj",
                      "Raschka, Build a Large Language Model (From Scratch), 3.6.2; Phillips, The Implemented Transformer",
                      kSeed | kBatch | kSeqLen | kDIn | kDOut | kHeads | kCausal | kQkvBias | kTokens | kInput | kWeights | kKvHeads, lesson_heads,
                      {{"--out-proj-width", OptionType::Integer, 0, 65536, 0,
                        "Output width N of out_proj, nn.Linear(d_out, N): N = d_in maps the heads back to x's width; "
                        "0 is d_out, the book's square out_proj"}}});

}  // namespace attn
