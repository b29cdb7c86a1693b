// Lesson: self-attention, step by step (Raschka 3.3-3.4).
//
// First without any weights, so the idea stands alone: every token scores every token with a
// dot product, softmax turns a row of scores into weights, and the weighted sum of the inputs is
// that token's context vector. Then the same steps with trainable W_query, W_key, W_value.
//
// Legend: B batch, T tokens, d_in embedding width, d_out projection width (= d_k, one head).
#include <cmath>

#include "core/attention.hpp"
#include "core/generator.hpp"
#include "core/matmul.hpp"
#include "core/softmax.hpp"
#include "lesson_kit/checks.hpp"
#include "lesson_kit/external.hpp"
#include "lesson_kit/registry.hpp"

namespace attn {
namespace {

// A label in quotes, as notes name tokens: "with".
std::string q(const std::string& label) { return "\"" + label + "\""; }

// Which rows score their own token highest (x_i . x_i is the row's largest entry), in words:
// the count, then up to three rows that do not, each with the token it prefers.
std::string self_scores_sentence(const Ten3& scores, const LessonInput& in) {
  const std::size_t T = scores.shape()[1];
  const std::size_t entries = in.repeated ? 1 : scores.shape()[0];  // copies add nothing
  std::size_t own_best = 0, rows = 0;
  std::vector<std::string> others;
  for (std::size_t b = 0; b < entries; ++b)
    for (std::size_t i = 0; i < T; ++i) {
      ++rows;
      std::size_t best = i;
      for (std::size_t j = 0; j < T; ++j)
        if (scores(b, i, j) > scores(b, i, best)) best = j;
      if (best == i) {
        ++own_best;
        continue;
      }
      const auto label = [&](std::size_t t) { return in.rows[in.rows.size() == T ? t : b * T + t]; };
      if (others.size() < 3)
        others.push_back(q(label(i)) + " scores " + q(label(best)) + " " + report::fixed(scores(b, i, best), 4) +
                         ", itself " + report::fixed(scores(b, i, i), 4));
    }
  if (own_best == rows)
    return "Here every token scores itself highest: x_i . x_i = |x_i|^2 beats every other dot product in its row.";
  std::string s = "Here " + std::to_string(own_best) + " of " + std::to_string(rows) +
                  " tokens score themselves highest, but a dot product grows with length as well as "
                  "alignment, so a token can prefer a longer vector to itself: ";
  for (std::size_t k = 0; k < others.size(); ++k) s += (k ? "; " : "") + others[k];
  const std::size_t more = rows - own_best - others.size();
  return s + (more ? " (and " + std::to_string(more) + " more)." : ".");
}

// The book's z(2) of SelfAttention_v1 (torch.manual_seed(123), its six tokens).
bool is_books_z2(const Ten3& context) {
  if (context.shape()[1] < 2 || context.shape()[2] != 2) return false;
  return std::fabs(context(0, 1, 0) - 0.3061) < 5e-5 && std::fabs(context(0, 1, 1) - 0.8210) < 5e-5;
}

// What the stages share: the inputs and the book's weights, then every tensor of both parts.
struct SelfAttentionLesson {
  const LessonOptions& opts;
  SingleHeadSetup set;
  Mat W_query, W_key, W_value;  // (d_in, d_out) each
  // Part 1: no weights.
  Ten3 plain_scores;   // (B, T, T)
  Ten3 plain_weights;  // (B, T, T)
  Ten3 plain_context;  // (B, T, d_in)
  // Part 2: the trainable projections.
  Ten3 queries, keys, values;  // (B, T, d_out)
  Ten3 scores;                 // (B, T, T)
  Ten3 scaled;                 // (B, T, T)
  Ten3 weights;                // (B, T, T)
  Ten3 context;                // (B, T, d_out)
};

// The book's seed for 3.4, the weights (drawn or loaded), the header, and both forward passes.
// Held at once (measured): the (B, T, T) scores and weights of both parts, each also copied into
// the report, likewise x, the weights and the d_out-wide tensors.
SelfAttentionLesson setup(const LessonOptions& opts, report::Report& out) {
  SelfAttentionLesson r{opts, single_head_setup(opts, 123, {"self-attention", 10, 6, 4, 8, false}), {}, {}, {}};
  const SingleHeadSetup& set = r.set;
  const Ten3& x = set.in.x;  // (B, T, d_in)

  // Everything the lesson draws or loads, in PyTorch's order: x (already built), then the seed
  // and the book's three torch.rand(d_in, d_out) parameters, or the --weights files. The header's
  // "reproduce in PyTorch" lines are rendered from this recipe.
  recipe::Recipe steps = set.in.recipe;
  TorchGenerator gen(set.seed);
  if (opts.weights.empty()) steps.seed(gen, set.seed);
  r.W_query = matrix_weights(opts, "W_query", set.d_in, set.d_out, gen, steps);  // (d_in, d_out)
  r.W_key = matrix_weights(opts, "W_key", set.d_in, set.d_out, gen, steps);      // (d_in, d_out)
  r.W_value = matrix_weights(opts, "W_value", set.d_in, set.d_out, gen, steps);  // (d_in, d_out)
  out.header = {"self-attention", "Self-attention, step by step",
                "Raschka, Build a Large Language Model (From Scratch), 3.3-3.4", set.setting(steps), steps.lines()};

  // Part 1: attention without trainable weights.
  r.plain_scores = matmul_bt(x, x);                     // (B, T, d_in) @ (B, d_in, T) -> (B, T, T)
  r.plain_weights = softmax_rows(r.plain_scores);       // (B, T, T)
  r.plain_context = matmul(r.plain_weights, x);         // (B, T, T) @ (B, T, d_in) -> (B, T, d_in)
  // Part 2: the trainable projections, like the book: three torch.rand(d_in, d_out).
  r.queries = matmul(x, r.W_query);                     // (B, T, d_in) @ (d_in, d_out) -> (B, T, d_out)
  r.keys = matmul(x, r.W_key);                          // (B, T, d_out)
  r.values = matmul(x, r.W_value);                      // (B, T, d_out)
  r.scores = matmul_bt(r.queries, r.keys);              // (B, T, d_out) @ (B, d_out, T) -> (B, T, T)
  r.scaled = scale_scores(r.scores, set.d_out);         // (B, T, T)
  r.weights = softmax_rows(r.scaled);                   // (B, T, T)
  r.context = matmul(r.weights, r.values);              // (B, T, T) @ (B, T, d_out) -> (B, T, d_out)
  return r;
}

void stage_inputs(const SelfAttentionLesson& r, report::Report& out) {
  auto& s = inputs_stage(out, r.set.view, r.set.in);
  for (const auto& note : r.opts.preset_notes) s.note(note);
}

void stage_plain_scores(const SelfAttentionLesson& r, report::Report& out) {
  const BatchView& view = r.set.view;
  auto& s = out.stage("Scores without weights: every token against every token",
                      "attn_scores = x @ x^T");
  view.in(s, "x", r.set.in.x);
  view.show(s, "attn_scores", r.plain_scores, r.set.in.rows, r.set.in.cols);
  s.note("Entry (i, j) is the dot product of token i's embedding with token j's: large when the "
         "two vectors point the same way. Row i is what token i (the query) sees.");
  s.note(self_scores_sentence(r.plain_scores, r.set.in));
}

void stage_plain_weights(const SelfAttentionLesson& r, report::Report& out) {
  const BatchView& view = r.set.view;
  auto& s = out.stage("Softmax turns each row of scores into weights",
                      "attn_weights = softmax(attn_scores, dim=-1)");
  view.in(s, "attn_scores", r.plain_scores);
  view.show(s, "attn_weights", r.plain_weights, r.set.in.rows, r.set.in.cols);
  s.attention_weights();  // no weights take part: x @ x^T
  check_rows_sum_to_one(s, "attn_weights", r.plain_weights);
  s.note("Softmax makes each row a distribution over the tokens (weights at least 0, summing to 1); "
         "the largest score of a row gets the largest share.");
}

void stage_plain_context(const SelfAttentionLesson& r, report::Report& out) {
  const BatchView& view = r.set.view;
  auto& s = out.stage("Context vectors: a weighted sum of all inputs",
                      "context_vec = attn_weights @ x");
  view.in(s, "attn_weights", r.plain_weights);
  view.in(s, "x", r.set.in.x);
  view.show(s, "context_vec", r.plain_context, r.set.in.rows);
  s.note("Each row mixes every token's embedding by that row's weights. Without weights, though, "
         "the scores are fixed by the embeddings and nothing can be learned: next come the trainable "
         "projections.");
}

void stage_weights(const SelfAttentionLesson& r, report::Report& out) {
  auto& s = out.stage("Trainable weights W_query, W_key, W_value",
                      "W_query, W_key, W_value = torch.rand(d_in, d_out), in that order");
  s.show("W_query", r.W_query).show("W_key", r.W_key).show("W_value", r.W_value);
  if (!r.opts.weights.empty()) s.note(weights_origin(r.opts));
  else s.note("Random and untrained, drawn right after torch.manual_seed(" + std::to_string(r.set.seed) +
         ") in this order, so PyTorch gives the same numbers. Training would tune them; the "
         "mechanism is the same either way.");
}

void stage_projections(const SelfAttentionLesson& r, report::Report& out) {
  const BatchView& view = r.set.view;
  const auto& tok = r.set.in.rows;
  auto& s = out.stage("Queries, keys and values",
                      "queries = x @ W_query;  keys = x @ W_key;  values = x @ W_value");
  view.in(s, "x", r.set.in.x);
  s.in("W_query", r.W_query).in("W_key", r.W_key).in("W_value", r.W_value);
  view.show(s, "queries", r.queries, tok);
  view.show(s, "keys", r.keys, tok);
  view.show(s, "values", r.values, tok);
  s.note("Three views of each token: the query asks, the key is what others match against, "
         "the value is what gets passed on. Each is a d_out-wide row per token.");
}

void stage_scores(const SelfAttentionLesson& r, report::Report& out) {
  const BatchView& view = r.set.view;
  auto& s = out.stage("Attention scores", "attn_scores = queries @ keys^T");
  view.in(s, "queries", r.queries);
  view.in(s, "keys", r.keys);
  view.show(s, "attn_scores", r.scores, r.set.in.rows, r.set.in.cols);
  s.note("Now query i meets key j: the score is no longer plain similarity of embeddings but "
         "whatever the learned projections make it.");
}

void stage_scale(const SelfAttentionLesson& r, report::Report& out) {
  const BatchView& view = r.set.view;
  auto& s = out.stage("Scale by 1/sqrt(d_k)",
                      "scaled = attn_scores / sqrt(d_k),  d_k = keys.shape[-1] = " + std::to_string(r.set.d_out));
  view.in(s, "attn_scores", r.scores);
  view.show(s, "scaled", r.scaled, r.set.in.rows, r.set.in.cols);
  s.note("Dot products of d_k-wide vectors grow with d_k; dividing by sqrt(d_k) keeps softmax "
         "out of its flat, saturated regions. `attn lesson scaling` measures why.");
}

void stage_softmax(const SelfAttentionLesson& r, report::Report& out) {
  const BatchView& view = r.set.view;
  auto& s = out.stage("Attention weights", "attn_weights = softmax(attn_scores / sqrt(d_k), dim=-1)");
  view.in(s, "scaled", r.scaled);
  view.show(s, "attn_weights", r.weights, r.set.in.rows, r.set.in.cols);
  s.attention_weights(report::Training::drawn_unless(!r.opts.weights.empty()));
  view.show(s, "attn_weights.sum(dim=-1)", row_sums(r.weights), r.set.in.cols);
  check_rows_sum_to_one(s, "attn_weights", r.weights);
}

void stage_context(const SelfAttentionLesson& r, report::Report& out) {
  const BatchView& view = r.set.view;
  auto& s = out.stage("Context vectors", "context_vec = attn_weights @ values");
  view.in(s, "attn_weights", r.weights);
  view.in(s, "values", r.values);
  view.show(s, "context_vec", r.context, r.set.in.rows);
  s.note(std::string("One d_out-wide vector per token, each a mixture of all the value rows. This is what "
                     "SelfAttention_v1 returns in the book") +
         (is_books_z2(r.context) ? "; row 2 (" + q(r.set.in.rows[1]) + ") is the book's z(2) = tensor([0.3061, 0.8210])."
                                 : "."));
}

}  // namespace

// The lesson as its table of contents: part 1 without weights, part 2 with W_query, W_key, W_value.
void lesson_self_attention(const LessonOptions& opts, report::Report& out) {
  const SelfAttentionLesson r = setup(opts, out);
  stage_inputs(r, out);
  // Part 1: attention without trainable weights.
  stage_plain_scores(r, out);
  stage_plain_weights(r, out);
  stage_plain_context(r, out);
  // Part 2: the trainable projections.
  stage_weights(r, out);
  stage_projections(r, out);
  stage_scores(r, out);
  stage_scale(r, out);
  stage_softmax(r, out);
  stage_context(r, out);
}

// Teaching order 400: see `attn list`; docs/self-attention.md is its page.
ATTN_REGISTER_LESSON({400, "self-attention", "Self-attention, step by step",
                      "scores, softmax and context vectors, first without weights, then with W_query, W_key, W_value",
                      "Raschka, Build a Large Language Model (From Scratch), 3.3-3.4",
                      kSeed | kBatch | kSeqLen | kDIn | kDOut | kTokens | kInput | kWeights, lesson_self_attention,
                      {}, {"W_query", "W_key", "W_value"}});  // three bias-free projections: heads takes the rest

}  // namespace attn
