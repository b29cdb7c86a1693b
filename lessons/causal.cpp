// Lesson: causal attention (Raschka 3.5).
//
// A language model predicts the next token, so token t may only look at tokens 0..t. The mask
// sets the scores of later tokens to -inf before softmax; their weights become exactly 0. The
// lesson shows the mask, the masked softmax, the book's other route (mask after softmax, then
// renormalise), what the articles' different fill values do, and a proof that nothing leaks
// from the future.
//
// Legend: B batch, T tokens, d_in embedding width, d_out projection width (= d_k, one head).
#include <limits>

#include <xtensor/xview.hpp>

#include "core/attention.hpp"
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

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

using report::Held;
using report::hold;

// Sets every score above the diagonal of each (T, T) matrix to `fill`: masked_fill with
// causal_mask(T), without building the (T, T) mask.
void fill_future(Ten3& scores, float fill) {
  const std::size_t B = scores.shape()[0], T = scores.shape()[1];
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < T; ++i) std::fill_n(scores.data() + (b * T + i) * T + i + 1, T - i - 1, fill);
}

// softmax(scores / sqrt(d_k)) by rows, in place: scale_scores then softmax_rows, the same
// arithmetic, without two more (B, T, T) tensors.
void scaled_softmax_inplace(Ten3& scores, std::size_t d_k) {
  const float root = std::sqrt(static_cast<float>(d_k));
  for (float& v : scores) v /= root;
  const std::size_t T = scores.shape()[2];
  softmax_rows_inplace(scores.data(), T ? scores.size() / T : 0, T);
}

struct CausalRun {
  Held<Ten3> queries, keys, values;  // (B, T, d_out)
  Held<Ten3> attn_scores;            // (B, T, T)
  Held<Ten3> masked;                 // (B, T, T), -inf above the diagonal
  Held<Ten3> attn_weights;           // (B, T, T)
  Held<Ten3> context_vec;            // (B, T, d_out)
};

// The whole causal single-head forward pass, so it can be run twice for the leak test. Every
// (B, T, T) tensor is made once and shared with the stages that show it; with `compute` false
// (a --shapes-only run past printable sizes) only the shapes are set. With `keep_scores` false
// the scores and masked scores become the weights in place, and only those are kept.
CausalRun forward(bool compute, const Ten3& x, const Linear& W_query, const Linear& W_key, const Linear& W_value,
                  std::size_t d_out, bool keep_scores = true) {
  const std::size_t B = x.shape()[0], T = x.shape()[1], d_k = d_out;
  CausalRun r;
  r.queries = hold(compute, {B, T, d_out}, [&] { return linear(W_query, x); });  // (B, T, d_in) -> (B, T, d_out)
  r.keys = hold(compute, {B, T, d_out}, [&] { return linear(W_key, x); });       // (B, T, d_out)
  r.values = hold(compute, {B, T, d_out}, [&] { return linear(W_value, x); });   // (B, T, d_out)
  if (!compute) {
    r.attn_scores = r.masked = r.attn_weights = Held<Ten3>(Shape{B, T, T});
    r.context_vec = Held<Ten3>(Shape{B, T, d_out});
    return r;
  }
  Ten3 scores = matmul_bt(*r.queries, *r.keys);  // (B, T, d_out) @ (B, d_out, T) -> (B, T, T)
  Ten3 masked;  // (B, T, T): attn_scores.masked_fill(mask.bool(), -inf)
  if (keep_scores) masked = scores;
  else masked = std::move(scores);
  fill_future(masked, kNegInf);
  Ten3 weights;  // (B, T, T): softmax(masked / sqrt(d_k))
  if (keep_scores) weights = masked;
  else weights = std::move(masked);
  scaled_softmax_inplace(weights, d_k);
  r.context_vec = Held<Ten3>(matmul(weights, *r.values));  // (B, T, T) @ (B, T, d_out) -> (B, T, d_out)
  if (keep_scores) {
    r.attn_scores = Held<Ten3>(std::move(scores));
    r.masked = Held<Ten3>(std::move(masked));
  }
  r.attn_weights = Held<Ten3>(std::move(weights));
  return r;
}

// Largest weight above the diagonal, over every batch entry: 0 when the mask worked, NaN when
// any weight there is NaN.
double max_above_diagonal(const Ten3& w) {
  double m = 0.0;
  for (std::size_t b = 0; b < w.shape()[0]; ++b)
    for (std::size_t i = 0; i < w.shape()[1]; ++i)
      for (std::size_t j = i + 1; j < w.shape()[2]; ++j) {
        if (std::isnan(w(b, i, j))) return w(b, i, j);
        m = std::fmax(m, std::fabs(w(b, i, j)));
      }
  return m;
}

// The Evolution of Attention article's mask: torch.triu(attn_score, diagonal=1).bool(), 1 where it
// hides. It hides a future position only where that score is nonzero (NaN counts as nonzero, as
// in PyTorch); a score of exactly 0 (or -0) stays visible.
Ten3 mask_from_scores(const Ten3& scaled) {
  Ten3 m = xt::zeros<float>(scaled.shape());  // (B, T, T)
  for (std::size_t b = 0; b < scaled.shape()[0]; ++b)
    for (std::size_t i = 0; i < scaled.shape()[1]; ++i)
      for (std::size_t j = i + 1; j < scaled.shape()[2]; ++j) m(b, i, j) = scaled(b, i, j) != 0.0f ? 1.0f : 0.0f;
  return m;
}

// The article's forward pass after the scores: scale, hide where mask_from_scores says, softmax.
struct ScoresMaskRun {
  Ten3 mask;          // (B, T, T), 1 = hidden
  Ten3 attn_weights;  // (B, T, T)
  Ten3 context_vec;   // (B, T, d_out)
};
ScoresMaskRun scores_mask_forward(const CausalRun& r) {
  ScoresMaskRun a;
  Ten3 scaled = scale_scores(*r.attn_scores, r.keys.shape()[2]);  // (B, T, T)
  a.mask = mask_from_scores(scaled);                              // (B, T, T)
  for (std::size_t n = 0; n < scaled.size(); ++n)
    if (a.mask.flat(n) != 0.0f) scaled.flat(n) = kNegInf;
  a.attn_weights = softmax_rows(scaled);              // (B, T, T)
  a.context_vec = matmul(a.attn_weights, *r.values);  // (B, T, T) @ (B, T, d_out) -> (B, T, d_out)
  return a;
}

// Future positions (above the diagonal) that a (B, T, T) mask leaves visible.
std::size_t visible_future(const Ten3& mask) {
  std::size_t n = 0;
  for (std::size_t b = 0; b < mask.shape()[0]; ++b)
    for (std::size_t i = 0; i < mask.shape()[1]; ++i)
      for (std::size_t j = i + 1; j < mask.shape()[2]; ++j) n += mask(b, i, j) == 0.0f;
  return n;
}

// exp(x) is 0 in float32 below about -103.97 (the smallest subnormal is 2^-149).
constexpr double kExpUnderflow = -103.97;

// Where a finite fill fails to vanish: the row whose largest visible scaled score is smallest
// relative to the fill, and the gap fill/sqrt(d_k) - that max (a gap above -103.97 leaves
// masked positions a weight above 0). The gap is NaN when any score is inf or NaN. Each score is
// scaled here, in float as scale_scores does, rather than in one more (B, T, T) tensor.
struct FillGap {
  std::size_t row = 0;
  double gap = -std::numeric_limits<double>::infinity();
};
FillGap fill_gap(const Ten3& scores, std::size_t d_k, const Mat& mask, double scaled_fill) {
  const float root = std::sqrt(static_cast<float>(d_k));
  FillGap worst;
  for (std::size_t b = 0; b < scores.shape()[0]; ++b)
    for (std::size_t i = 0; i < scores.shape()[1]; ++i) {
      double row_max = -std::numeric_limits<double>::infinity();
      bool any_masked = false;
      for (std::size_t j = 0; j < scores.shape()[2]; ++j) {
        const float scaled = scores(b, i, j) / root;
        if (!std::isfinite(scaled)) return {i, std::numeric_limits<double>::quiet_NaN()};
        if (mask(i, j) != 0.0f) any_masked = true;
        else row_max = std::fmax(row_max, scaled);
      }
      if (any_masked && scaled_fill - row_max > worst.gap) worst = {i, scaled_fill - row_max};
    }
  return worst;
}

// What softmax made of a fully masked row, in words: "NaN (0/0)", "uniform, 1/T each" or other.
std::string row_outcome(const Mat& weights, std::size_t row) {
  const std::size_t T = weights.shape()[1];
  bool nan = false, uniform = true;
  for (std::size_t j = 0; j < T; ++j) {
    nan = nan || std::isnan(weights(row, j));
    uniform = uniform && std::fabs(weights(row, j) - 1.0 / static_cast<double>(T)) <= sum_tolerance(T);
  }
  if (nan) return "NaN (0/0)";
  return uniform ? "uniform, 1/T each" : "neither NaN nor uniform";
}

// The last row of the first batch entry in words: the token it weights most, and how much.
std::string last_row_sentence(const Ten3& w, const report::Labels& tok, bool copies) {
  const std::size_t T = w.shape()[1];
  for (std::size_t j = 0; j < T; ++j)
    if (std::isnan(w(0, T - 1, j)))
      return "Here the last row (\"" + tok[T - 1] + "\") holds nan, so it weights no token at all.";
  std::size_t best = 0;
  for (std::size_t j = 1; j < T; ++j)
    if (w(0, T - 1, j) > w(0, T - 1, best)) best = j;
  return "Here the last row (\"" + tok[T - 1] + "\") gives most weight to \"" + tok[best] + "\" (" +
         report::fixed(w(0, T - 1, best), 4) + ")" + (w.shape()[0] > 1 && !copies ? " in the first batch entry." : ".");
}

// What the stages share: the sizes, x, the three projections, the forward pass and the mask.
// Built once by the lesson (not copied: view, x and the labels point into `set`). With `values`
// false (a --shapes-only run past printable sizes, or past what a run may hold: check_sizes and
// values_within_held) nothing is computed, and every Held below holds its shape alone; the
// stages then branch only where a check or a sentence needs the numbers.
struct CausalLesson {
  const LessonOptions& opts;
  const SingleHeadSetup set;
  const bool values;
  const std::size_t B, T, d_in, d_out;
  const BatchView& view;
  const Ten3& x;                 // (B, T, d_in)
  const report::Labels& tok;     // row labels (one per token, or per token of each sentence)
  const report::Labels& cols;    // column labels, empty when the batch holds different sentences
  const ArticleModel model;      // the preset's names, order and mask
  recipe::Recipe steps;          // the header's "reproduce in PyTorch" lines
  Linear W_query, W_key, W_value;  // weight (d_out, d_in)
  CausalRun r;                   // the forward pass the stages show
  Held<Mat> mask;                // (T, T)

  CausalLesson(const LessonOptions& o, report::Report& out);
  CausalLesson(const CausalLesson&) = delete;

  // A weight as a stage shows it: (d_out, d_in), or its shape when nothing was drawn.
  Held<Mat> weight(const Linear& w) const {
    return hold(values, {d_out, d_in}, [&] { return w.weight; });
  }
};

// The book's seed for 3.5. Held at once (measured): seven (B, T, T), the weights and their shown
// copies, x and x', and the d_out-wide tensors of both forward passes.
CausalLesson::CausalLesson(const LessonOptions& o, report::Report& out)
    : opts(o),
      set(single_head_setup(o, 789, {"causal", 7, 6, 4, 11, true}, /*values_optional=*/!out.keep_values)),
      values(set.values),
      B(set.B),
      T(set.T),
      d_in(set.d_in),
      d_out(set.d_out),
      view(set.view),
      x(set.in.x),
      tok(set.in.rows),
      cols(set.in.cols),
      model(article_model(o.preset)),
      steps(set.in.recipe) {
  // Projections as the book's SelfAttention_v2 builds them: three bias-free nn.Linear layers,
  // drawn after the seed (or loaded from --weights) in the order the article constructs them
  // (Evolution of Attention builds wk first). The header's "reproduce in PyTorch" lines are
  // rendered from this recipe, which starts with however x was made.
  TorchGenerator gen(set.seed);
  if (opts.weights.empty()) steps.seed(gen, set.seed);
  const std::string &Wq = model.query, &Wk = model.key, &Wv = model.value;
  if (model.key_before_query) W_key = linear_weights(opts, "W_key", d_in, d_out, false, gen, steps, Wk, values);  // weight (d_out, d_in)
  W_query = linear_weights(opts, "W_query", d_in, d_out, false, gen, steps, Wq, values);                          // weight (d_out, d_in)
  if (!model.key_before_query) W_key = linear_weights(opts, "W_key", d_in, d_out, false, gen, steps, Wk, values);  // weight (d_out, d_in)
  W_value = linear_weights(opts, "W_value", d_in, d_out, false, gen, steps, Wv, values);                          // weight (d_out, d_in)
  const char* follows = preset_follows(opts.preset);  // a preset names its own article
  out.header = {"causal", "Causal attention: no peeking at the future",
                follows ? follows : "Raschka, Build a Large Language Model (From Scratch), 3.5", set.setting(steps),
                steps.lines()};
}

void stage_inputs(const CausalLesson& L, report::Report& out) {
  auto& s = inputs_stage(out, L.view, L.set.in);
  for (const auto& note : L.opts.preset_notes) s.note(note);
  if (!L.values)
    s.note("--shapes-only at this size computes nothing: attn_scores alone would be " +
           shape_str({L.B, L.T, L.T}) + " floats, " + report::bytes(4.0 * L.B * L.T * L.T) +
           ", and the lesson makes several tensors that size. The stages below list names and "
           "shapes only; the checks and the sentences about the numbers need the values and are left out.");
}

void stage_queries_keys_values(const CausalLesson& L, report::Report& out) {
  const std::string &Wq = L.model.query, &Wk = L.model.key, &Wv = L.model.value;
  auto& s = out.stage("Queries, keys and values from nn.Linear",
                      "queries = x @ " + Wq + ".weight^T" + (L.W_query.has_bias() ? " + " + Wq + ".bias" : "") +
                          "  (likewise keys, values)");
  L.view.in(s, "x", L.x);
  if (L.model.key_before_query) s.show(Wk + ".weight", L.weight(L.W_key));
  s.show(Wq + ".weight", L.weight(L.W_query));
  if (!L.model.key_before_query) s.show(Wk + ".weight", L.weight(L.W_key));
  s.show(Wv + ".weight", L.weight(L.W_value));
  L.view.show(s, "queries", L.r.queries, L.tok);
  L.view.show(s, "keys", L.r.keys, L.tok);
  L.view.show(s, "values", L.r.values, L.tok);
  s.note("nn.Linear stores its weight as (out, in) = (" + std::to_string(L.d_out) + ", " + std::to_string(L.d_in) +
         ") and computes x @ weight^T. " +
         (L.opts.weights.empty() ? "Drawn after torch.manual_seed(" + std::to_string(L.set.seed) + ") in the order " +
                                       (L.model.key_before_query ? "key, query, value" : "query, key, value") +
                                       ", so PyTorch gives these very numbers."
                                 : weights_origin(L.opts)));
}

void stage_scores(const CausalLesson& L, report::Report& out) {
  auto& s = out.stage("Attention scores", "attn_scores = queries @ keys^T");
  L.view.in(s, "queries", L.r.queries);
  L.view.in(s, "keys", L.r.keys);
  L.view.show(s, "attn_scores", L.r.attn_scores, L.tok, L.cols);
  s.note("Every entry above the diagonal is a token looking at a later one. A model trained "
         "to predict the next word would cheat by reading it there.");
}

void stage_mask(CausalLesson& L, report::Report& out) {
  L.mask = hold(L.values, {L.T, L.T}, [&] { return causal_mask(L.T); });  // (T, T)
  auto& s = out.stage("The causal mask", "mask = torch.triu(torch.ones(T, T), diagonal=1)");
  s.show("mask", L.mask, L.cols, L.cols);
  s.note("1 marks the future: row t has ones in columns t+1 .. T. The diagonal stays 0, so "
         "every token can still see itself and the first token sees only itself.");
}

void stage_masked_scores(const CausalLesson& L, report::Report& out) {
  auto& s = out.stage("Scores with the future set to -inf", "masked = attn_scores.masked_fill(mask.bool(), -inf)");
  L.view.in(s, "attn_scores", L.r.attn_scores);
  s.in("mask", L.mask);
  L.view.show(s, "masked", L.r.masked, L.tok, L.cols);
  s.note("exp(-inf) is exactly 0, so these positions will get no weight at all; the other "
         "scores are untouched.");
}

void stage_softmax(const CausalLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T;
  auto& s = out.stage("Softmax of the masked, scaled scores", "attn_weights = softmax(masked / sqrt(d_k), dim=-1)");
  L.view.in(s, "masked", L.r.masked);
  L.view.show(s, "attn_weights", L.r.attn_weights, L.tok, L.cols);
  s.attention_weights(report::Training::drawn_unless(!L.opts.weights.empty()));
  L.view.show(s, "attn_weights.sum(dim=-1)", hold(L.values, {B, T}, [&] { return row_sums(*L.r.attn_weights); }),
              L.cols);
  if (!L.values) return;  // the checks and sentences below read the weights
  const Ten3& w = *L.r.attn_weights;  // (B, T, T)
  s.check("every weight above the diagonal is 0", "max weight above the diagonal", max_above_diagonal(w),
          Relation::AtMost, 0.0);
  check_rows_sum_to_one(s, "attn_weights", w);
  s.note("Row t's weights cover tokens 1..t only, so row 1 (\"" + L.tok[0] + "\") has nothing but itself: its "
         "weight there is " + report::fixed(w(0, 0, 0), 4) + ".");
  if (T > 1) s.note(last_row_sentence(w, L.tok, L.set.in.repeated));
}

// Only with values, when the preset's article builds its mask from the scores: the stage is
// about which scores are exactly 0.
void stage_article_mask(const CausalLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T;
  const report::Labels &tok = L.tok, &cols = L.cols;
  const BatchView& view = L.view;
  // The article builds its mask from the scores. Here, and on an input with a zero token last.
  const ScoresMaskRun here = scores_mask_forward(L.r);
  Ten3 x_pad = L.x;  // (B, T, d_in): the last token's embedding set to zeros
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t k = 0; k < L.d_in; ++k) x_pad(b, T - 1, k) = 0.0f;
  const CausalRun fixed_pad = forward(true, x_pad, L.W_query, L.W_key, L.W_value, L.d_out);  // the proper mask
  const ScoresMaskRun article_pad = scores_mask_forward(fixed_pad);                          // the article's mask
  const std::size_t open_here = visible_future(here.mask), open_pad = visible_future(article_pad.mask);
  const std::size_t future = B * T * (T - 1) / 2;
  auto& s = out.stage("The article's mask: built from the scores",
                      "attn_score = q @ k^T / sqrt(d_k);  attn_score[torch.triu(attn_score, diagonal=1).bool()] = "
                      "float(\"-inf\")\nfix: attn_score = attn_score.masked_fill(torch.triu(torch.ones(T, T), "
                      "diagonal=1).bool(), float(\"-inf\"))");
  view.in(s, "attn_scores", L.r.attn_scores);
  view.show(s, "triu(attn_score, diagonal=1).bool()", here.mask, tok, cols);
  s.question("does triu(attn_score).bool() hide every future position here?", "future positions left visible",
             static_cast<double>(open_here), Relation::AtMost, 0.0,
             std::to_string(open_here) + " scores above the diagonal are exactly 0, which .bool() reads as False");
  s.question("do its attn_weights equal the fixed mask's here?", "max |diff|",
             max_abs_diff(here.attn_weights, *L.r.attn_weights), Relation::AtMost, 0.0,
             "the visible future positions take weight");
  s.note("The mask is True where a score above the diagonal is nonzero: it depends on the numbers, not on "
         "the positions. Now give the last token a zero embedding (what nn.Embedding(padding_idx=...) returns "
         "for padding): its key is 0, so every score against it is exactly 0.");
  view.in(s, "x_pad", x_pad);
  view.show(s, "triu(attn_score_pad, diagonal=1).bool()", article_pad.mask, tok, cols);
  view.show(s, "attn_weights_pad (the article's mask)", article_pad.attn_weights, tok, cols);
  view.show(s, "attn_weights_pad (the fixed mask)", fixed_pad.attn_weights, tok, cols);
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i + 1 < T && rows.size() < 8; ++i) {
    std::string shown;  // the future tokens row i still sees, batch entry 0
    double largest = 0.0;  // its largest weight on them
    for (std::size_t j = i + 1; j < T; ++j) {
      largest = std::fmax(largest, article_pad.attn_weights(0, i, j));
      if (article_pad.mask(0, i, j) == 0.0f) shown += (shown.empty() ? "" : ", ") + tok[j];
    }
    rows.push_back({std::to_string(i + 1) + " (" + tok[i] + ")", std::to_string(T - 1 - i),
                    shown.empty() ? "none" : shown, report::measured(largest)});
  }
  s.table({"row (batch 0)", "future positions", "left visible by triu(attn_score)", "largest future weight"}, rows);
  s.check("the fixed mask hides the future of x_pad: every weight above the diagonal is 0",
          "max weight above the diagonal", max_above_diagonal(*fixed_pad.attn_weights), Relation::AtMost, 0.0);
  s.question("does the article's mask hide every future position of x_pad?", "future positions left visible",
             static_cast<double>(open_pad), Relation::AtMost, 0.0,
             std::to_string(open_pad) + " of the " + std::to_string(future) +
                 " future positions score exactly 0 against the zero token and stay visible");
  s.question("does the article's mask give x_pad the same context_vec as the fixed mask?", "max |diff|",
             max_abs_diff(article_pad.context_vec, *fixed_pad.context_vec), Relation::AtMost,
             rounding_tolerance(*fixed_pad.context_vec),
             "the earlier tokens give weight " + report::measured(max_above_diagonal(article_pad.attn_weights)) +
                 " (at most) to the zero token after them, and their context vectors shrink by that share");
  const std::string T_str = std::to_string(T), B_str = std::to_string(B);
  s.note("The fix builds the mask from positions alone, torch.triu(torch.ones(T, T), diagonal=1).bool(), "
         "as the stages above do: it hides the same " + std::to_string(future) +
         " future positions whatever the scores are." +
         (B != T ? " Apply it with masked_fill, which broadcasts the (T, T) mask over the batch: indexed the "
                   "article's way, attn_score[mask] = float(\"-inf\") on scores of shape (" + B_str + ", " + T_str +
                       ", " + T_str + "), PyTorch 1.13 raises IndexError: The shape of the mask [" + T_str + ", " +
                       T_str + "] at index 0 does not match the shape of the indexed tensor [" + B_str + ", " + T_str +
                       ", " + T_str + "] at index 0."
                 : ""));
}


// The book's first route: mask after softmax, then renormalise.
void stage_other_route(const CausalLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T, d_out = L.d_out;
  Mat kept;  // (B, T): what each row keeps before renormalising
  const Held<Ten3> zeroed = hold(L.values, {B, T, T}, [&] {
    Ten3 w = *L.r.attn_scores;  // (B, T, T): softmax(attn_scores / sqrt(d_k)), nothing masked
    scaled_softmax_inplace(w, d_out);
    masked_fill_inplace(w.data(), B, *L.mask, 0.0f);  // w * tril
    kept = row_sums(w);                               // (B, T)
    return w;
  });
  const Held<Ten3> renormalised = hold(L.values, {B, T, T}, [&] {
    Ten3 renorm = *zeroed;  // (B, T, T): attn_weights_2
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t i = 0; i < T; ++i) {
        float* row = renorm.data() + (b * T + i) * T;
        for (std::size_t j = 0; j < T; ++j) row[j] /= kept(b, i);
      }
    return renorm;
  });
  auto& s = out.stage("The other route: softmax first, then mask and renormalise",
                      "w = softmax(attn_scores / sqrt(d_k), dim=-1)\n"
                      "attn_weights_2 = (w * tril) / (w * tril).sum(dim=-1, keepdim=True)");
  L.view.in(s, "attn_scores", L.r.attn_scores);
  s.in_shape("tril", {T, T});  // torch.tril(torch.ones(T, T)): only its shape is read here
  L.view.show(s, "w * tril", zeroed, L.tok, L.cols);
  L.view.show(s, "attn_weights_2", renormalised, L.tok, L.cols);
  s.attention_weights(report::Training::drawn_unless(!L.opts.weights.empty()));
  if (L.values) {
    // A question: the answer depends on the scores. Where the future takes nearly all of a
    // row's weight, the kept part underflows before it can be renormalised.
    std::size_t low_b = 0, low_i = 0;
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t i = 0; i < T; ++i)
        if (!(kept(b, i) >= kept(low_b, low_i))) {  // also picks a NaN sum
          low_b = b;
          low_i = i;
        }
    const double low = kept(low_b, low_i);
    // Said of a no and of NaN alike: where the weight went, or that it is NaN already.
    const std::string why = std::isnan(low) ? "the weights hold NaN before the mask"
                                            : "row " + std::to_string(low_i + 1) + " keeps only " +
                                                  report::measured(low) + " of its weight before renormalising" +
                                                  (low == 0.0 ? ": every kept weight underflowed to 0, and 0/0 is NaN"
                                                              : ", too little for float32 to renormalise exactly");
    s.question("do the two routes give the same attn_weights here?", "max |attn_weights_2 - attn_weights|",
               max_abs_diff(*renormalised, *L.r.attn_weights), Relation::AtMost, rounding_tolerance(*L.r.attn_weights),
               why, why);
  }
  s.note("In exact arithmetic the two routes agree because softmax's denominator cancels: "
         "dividing the kept exp(score) by their own sum is exactly softmax over the kept scores. "
         "The -inf route does it in one pass, and never divides by a sum that underflowed.");
}

// Fill values used by the articles: -inf (Raschka, Rakesh), -1e9 (the Llama walk-through),
// -1e10 (Phillips).
void stage_fill_values(const CausalLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T, d_out = L.d_out;
  const report::Labels& cols = L.cols;
  const Held<Ten3>& attn_scores = L.r.attn_scores;  // (B, T, T)
  auto& s = out.stage("Fill values: -inf, -1e9, -1e10",
                      "softmax(attn_scores.masked_fill(mask.bool(), fill) / sqrt(d_k), dim=-1)");
  L.view.in(s, "attn_scores", attn_scores);
  const std::pair<float, const char*> fills[] = {{-1e9f, "-1e9"}, {-1e10f, "-1e10"}};
  std::string ordinary[2];  // the table's "ordinary rows" cell for -1e9 and -1e10, as measured
  bool all_identical = true;
  for (std::size_t f = 0; f < 2 && L.values; ++f) {
    const auto& [fill, name] = fills[f];
    Ten3 w = *attn_scores;  // (B, T, T): masked_fill(mask.bool(), fill), scaled, softmax
    masked_fill_inplace(w.data(), B, *L.mask, fill);
    scaled_softmax_inplace(w, d_out);
    const double diff = max_abs_diff(w, *L.r.attn_weights);
    const double scaled_fill = fill / std::sqrt(static_cast<double>(d_out));
    const FillGap g = fill_gap(*attn_scores, d_out, *L.mask, scaled_fill);
    // Bound 0: on an ordinary row exp(fill / sqrt(d_k) - max) underflows to exactly 0, like exp(-inf).
    s.question(std::string("does fill ") + name + " give exactly the same attn_weights as -inf here?",
               "max |diff|", diff, Relation::AtMost, 0.0,
               std::isnan(g.gap)
                   ? "the scores hold inf or NaN"
                   : "in row " + std::to_string(g.row + 1) + " the largest visible score / sqrt(d_k) is " +
                         report::measured(scaled_fill - g.gap) + " and the fill / sqrt(d_k) is " +
                         report::measured(scaled_fill) +
                         (g.gap >= 0.0 ? ": the fill is the larger, so the masked positions take the weight"
                          : g.gap > kExpUnderflow
                              ? ": exp(fill - max) = exp(" + report::measured(g.gap) +
                                    ") is not 0 in float32 (it underflows below -104), so masked positions keep weight"
                              : ""),
               std::isnan(g.gap) ? "the scores hold inf or NaN" : "");
    const bool identical = holds(diff, Relation::AtMost, 0.0);
    all_identical = all_identical && identical;
    ordinary[f] = identical ? "identical" : "differ by up to " + report::measured(diff);
  }
  // A query with nothing to look at: every score of its row masked.
  const Held<Mat> row = hold(L.values, {3, T}, [&] {
    Mat m(std::array<std::size_t, 2>{3, T});  // (3, T): one row per fill value
    const float all_fills[] = {kNegInf, -1e9f, -1e10f};
    for (std::size_t f = 0; f < 3; ++f)
      for (std::size_t j = 0; j < T; ++j) m(f, j) = all_fills[f];
    return m;
  });
  const Held<Mat> fully_masked = hold(L.values, {3, T}, [&] { return softmax_rows(*row); });  // (3, T)
  s.note("Now a row with nothing to look at: every score masked, filled with -inf, -1e9 and "
         "-1e10 in turn (one row each).");
  s.show("fully_masked", row, {"-inf", "-1e9", "-1e10"}, cols);
  s.show("softmax(fully_masked, dim=-1)", fully_masked, {"-inf", "-1e9", "-1e10"}, cols);
  if (L.values) {
    s.table({"fill", "used by", "ordinary rows", "a fully masked row becomes"},
            {{"-inf", "Raschka 3.5, Rakesh, Evolution of Attention", "(the reference)", row_outcome(*fully_masked, 0)},
             {"-1e9", "the Llama-3.2-3B walk-through", ordinary[0], row_outcome(*fully_masked, 1)},
             {"-1e10", "Phillips", ordinary[1], row_outcome(*fully_masked, 2)}});
    s.note(std::string(all_identical
                           ? "On ordinary rows the three agree to the last bit here: exp(fill / sqrt(d_k) - max) "
                             "underflows to 0 just like exp(-inf). "
                           : "Here the finite fills do not vanish on every ordinary row: the scores are so "
                             "negative that the fill is not far enough below them. With ordinary scores "
                             "exp(fill / sqrt(d_k) - max) underflows to 0 just like exp(-inf). ") +
           "The fills differ most when a whole row is masked (a padding query, or a mask that hides "
           "the diagonal): -inf leaves 0/0 = NaN, which then spreads through every later layer, while "
           "a large finite fill quietly spreads the weight evenly.");
  }
}

void stage_context(const CausalLesson& L, report::Report& out) {
  auto& s = out.stage("Context vectors", "context_vec = attn_weights @ values");
  L.view.in(s, "attn_weights", L.r.attn_weights);
  L.view.in(s, "values", L.r.values);
  L.view.show(s, "context_vec", L.r.context_vec, L.tok);
  s.note("Row t mixes the values of tokens 1..t only.");
}

// Proof that nothing leaks: change the last token's input, recompute, compare.
void stage_nothing_leaks(const CausalLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T;
  const report::Labels& tok = L.tok;
  const bool values = L.values;
  const CausalRun& r = L.r;
  // (Without values x was never filled, and is not read.)
  Ten3 x_changed = values ? L.x : Ten3(xt::empty<float>(L.x.shape()));  // (B, T, d_in)
  if (values)
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t k = 0; k < L.d_in; ++k) x_changed(b, T - 1, k) += 1.0f;
  // Only the weights and context of the second run are read: its scores become its weights in place.
  const CausalRun changed = forward(values, x_changed, L.W_query, L.W_key, L.W_value, L.d_out, /*keep_scores=*/false);
  auto& s = out.stage("Nothing leaks from the future",
                      "x'[..., T-1, :] = x[..., T-1, :] + 1;  context_vec' = causal_attention(x')");
  L.view.in(s, "x'", x_changed);
  L.view.show(s, "context_vec'", changed.context_vec, tok);
  if (values) {
    const Ten3& after = *changed.context_vec;  // (B, T, d_out)
    const Ten3& before = *r.context_vec;       // (B, T, d_out)
    double earlier_diff = 0.0;  // max |diff| over rows 1..T-1
    if (T > 1) {
      const Ten3 a = xt::view(after, xt::all(), xt::range(0, T - 1), xt::all());   // (B, T-1, d_out)
      const Ten3 b = xt::view(before, xt::all(), xt::range(0, T - 1), xt::all());  // (B, T-1, d_out)
      earlier_diff = max_abs_diff(a, b);
      // Bound 0, not rounding: the future reaches these rows only through weights that are exactly 0.
      check_identical(s, "rows 1.." + std::to_string(T - 1) + " of context_vec are unchanged: nothing leaked from the future",
                      a, b);
    }
    const Ten3 last_after = xt::view(after, xt::all(), xt::range(T - 1, T), xt::all());    // (B, 1, d_out)
    const Ten3 last_before = xt::view(before, xt::all(), xt::range(T - 1, T), xt::all());  // (B, 1, d_out)
    double last_self = 0.0;  // the weight row T gives its own token (the largest over the batch)
    for (std::size_t b = 0; b < B; ++b) last_self = std::fmax(last_self, (*changed.attn_weights)(b, T - 1, T - 1));
    const double moved = max_abs_diff(last_after, last_before);
    s.question("did row " + std::to_string(T) + " (\"" + tok[T - 1] + "\"), the changed token's own output, change?",
               "max |diff|", moved, Relation::AtLeast, 1e-6,
               last_self < 1e-6 ? "row " + std::to_string(T) + " gives its own token weight " +
                                      report::measured(last_self) + ", so the changed value does not reach it"
                                : "these weights map the change to (almost) nothing");
    // Said only as far as the numbers above bear it out.
    const bool earlier_same = earlier_diff == 0.0;
    const bool last_moved = holds(moved, Relation::AtLeast, 1e-6);
    if (T > 1 && earlier_same)
      s.note(std::string(last_moved ? "Only the last token's own output moved. " : "") +
             "Every earlier row is bit-for-bit the same, because the changed token reached them only "
             "through weights that are exactly 0.");
  }
  if (T == 1)
    s.note("With one token there is no earlier row to protect: the only output is the changed token's own.");
}

}  // namespace

// The lesson reads as its table of contents: one function per stage, in the order they print.
void lesson_causal(const LessonOptions& opts, report::Report& out) {
  CausalLesson L(opts, out);
  stage_inputs(L, out);
  L.r = forward(L.values, L.x, L.W_query, L.W_key, L.W_value, L.d_out);
  stage_queries_keys_values(L, out);
  stage_scores(L, out);
  stage_mask(L, out);
  stage_masked_scores(L, out);
  stage_softmax(L, out);
  if (L.model.mask == MaskConvention::FromScores && L.T > 1 && L.values) stage_article_mask(L, out);
  stage_other_route(L, out);
  stage_fill_values(L, out);
  stage_context(L, out);
  stage_nothing_leaks(L, out);
}

// Teaching order 500: see `attn list`; docs/causal.md is its page.
ATTN_REGISTER_LESSON({500, "causal", "Causal attention: no peeking at the future",
                      "the triangular mask, -inf versus -1e9, and a proof that nothing leaks from later tokens",
                      "Raschka, Build a Large Language Model (From Scratch), 3.5",
                      kSeed | kBatch | kSeqLen | kDIn | kDOut | kTokens | kInput | kWeights, lesson_causal,
                      {}, {"W_query", "W_key", "W_value"}});  // three bias-free projections: heads takes the rest

}  // namespace attn
