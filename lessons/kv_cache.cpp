// Lesson: the KV cache, decoding one token at a time (the grouped-query layer of `attn lesson gqa`
// run as a decoder runs it; Hugging Face's past_key_values; Llama-3.2-3B's sizes for the costs).
//
// A causal layer's keys and values for tokens 0 .. t - 1 never change when token t arrives, so a
// decoder keeps them (the cache) and, per new token, projects one row, appends its key and value,
// and lets its one query attend to the t + 1 cached keys. The lesson runs the real pattern
// (optionally a prompt prefilled in one pass, then one token per step), shows the cache's shape
// and its storage growing at every step, measures every decoded row against the full causal
// pass's row and the final cache against the full pass's keys and values, and counts what each
// step costs with and without the cache, here and at Llama-3.2-3B's size.
//
// Legend: B batch, T tokens, P prompt tokens (prefilled at once), t the position being decoded
// (0-based: that step reads t + 1 keys), d_in embedding width (also the output width), h query
// heads, h_kv key/value heads, d_k head width (--d-k; by default d_in / h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/gqa.hpp"
#include "core/kv_cache.hpp"
#include "core/linear.hpp"
#include "lesson_kit/checks.hpp"
#include "lesson_kit/external.hpp"
#include "lesson_kit/numbers.hpp"
#include "lesson_kit/registry.hpp"

namespace attn {
namespace {

// At most this many decode steps get a stage of their own; past it the first three and the last
// do, and the table of every step covers the rest.
constexpr std::size_t kDetailSteps = 6;
// A table of more steps than this shows its first and last kTableEdge rows around a "...".
constexpr std::size_t kTableEdge = 8;
// Multiply-adds one run may do. Decoding reads every projection weight once per token, so the
// work grows as T * d_in^2 and is bound by memory, not arithmetic: Llama's width for 4096 tokens
// would take minutes here. Past this limit --shapes-only shows the plan (each step's shapes and
// the counts) without computing numbers; without it the run is refused.
constexpr std::uint64_t kMaxWork = std::uint64_t{1} << 31;

// Llama-3.2-3B's attention (config.json): 28 layers, hidden 3072, 24 query heads, 8 kv heads of 128.
constexpr std::uint64_t kLlamaLayers = 28;
const AttentionDims kLlama{3072, 24, 8, 128, 3072};
constexpr std::uint64_t kLlamaIntermediate = 8192;  // its MLP's width (gate, up: 3072 -> 8192; down back)

// A shape for Stage::in when no tensor of it exists (the cache before a step).
struct ShapeOnly {
  Shape dims;
  const Shape& shape() const { return dims; }
};

// Rows from .. from + n - 1 of (B, T, d): (B, n, d).
Ten3 rows_of(const Ten3& x, std::size_t from, std::size_t n) {
  const std::size_t B = x.shape()[0], T = x.shape()[1], d = x.shape()[2];
  Ten3 out = xt::empty<float>({B, n, d});  // (B, n, d)
  for (std::size_t b = 0; b < B; ++b) std::copy_n(x.data() + (b * T + from) * d, n * d, out.data() + b * n * d);
  return out;
}

// Row t of every (batch, head) attention matrix, keys 0 .. t only: (B, h, T, T) -> (B, h, 1, t + 1).
Ten4 weights_row(const Ten4& w, std::size_t t) {
  const std::size_t B = w.shape()[0], h = w.shape()[1], T = w.shape()[2];
  Ten4 out = xt::empty<float>({B, h, std::size_t{1}, t + 1});  // (B, h, 1, t + 1)
  for (std::size_t m = 0; m < B * h; ++m) std::copy_n(w.data() + (m * T + t) * T, t + 1, out.data() + m * (t + 1));
  return out;
}

std::string str(std::size_t n) { return std::to_string(n); }
// "1 cached key", "5 cached keys"
std::string plural(std::size_t n, const std::string& what) { return str(n) + " " + what + (n == 1 ? "" : "s"); }
// "once", "3 times"

// One row of the step table: what the cache looked like after one append.
struct StepRow {
  std::string position;  // "3", or "0..2" for the prefill
  std::string token;
  Shape cache;           // (B, h_kv, t + 1, d_k) after the step
  Shape weights;         // (B, h, 1, t + 1), or (B, h, P, P) for the prefill
};

void step_table(report::Stage& s, const std::vector<StepRow>& rows) {
  std::vector<std::vector<std::string>> cells;
  auto add = [&](const StepRow& r) {
    cells.push_back({r.position, r.token, shape_str(r.cache), shape_str(r.weights)});
  };
  if (rows.size() <= 2 * kTableEdge + 1) {
    for (const auto& r : rows) add(r);
  } else {
    for (std::size_t i = 0; i < kTableEdge; ++i) add(rows[i]);
    cells.push_back({"...", "", "", ""});
    for (std::size_t i = rows.size() - kTableEdge; i < rows.size(); ++i) add(rows[i]);
  }
  s.table({"position t", "token", "cache_k, cache_v after", "attn_weights"}, cells);
}

// Cost per generated token, with and without the cache, in multiply-adds.
struct CostRow {
  std::string model;
  std::uint64_t keys;  // t + 1
  std::uint64_t with, without;
};

void cost_stage(report::Report& out, const AttentionDims& here, std::size_t B, std::size_t T, std::size_t P,
                const std::vector<std::uint64_t>& counted_with, std::uint64_t counted_full, bool computed) {
  auto& s = out.stage("Cost per token, with and without the cache",
                      "with cache:    1 row of projections + h*(t+1)*d_k (scores) + h*(t+1)*d_k (context)\n"
                      "without cache: t+1 rows of projections + h*(t+1)^2*d_k + h*(t+1)^2*d_k (dense products, "
                      "masked half included)");
  std::vector<CostRow> rows;
  auto add = [&](const std::string& model, const AttentionDims& d, std::uint64_t layers, std::uint64_t keys) {
    const StepCost c = decode_step_cost(d, keys - 1, true), u = decode_step_cost(d, keys - 1, false);
    rows.push_back({model, keys, layers * c.total(), layers * u.total()});
  };
  const std::string here_name = "this lesson (1 layer" + std::string(B > 1 ? ", per sequence)" : ")");
  add(here_name, here, 1, 1);
  if (T > 1) add(here_name, here, 1, T);
  for (std::uint64_t n : {1024u, 8192u, 131072u}) add("Llama-3.2-3B (28 layers)", kLlama, kLlamaLayers, n);
  std::vector<std::vector<std::string>> cells;
  double off = 0.0;  // largest |without - (t + 1) * with| over the rows
  for (const auto& r : rows) {
    cells.push_back({r.model, with_commas(r.keys), with_commas(r.with), with_commas(r.without), ratio_text(r.without, r.with)});
    off = std::fmax(off, std::fabs(static_cast<long double>(r.without) - static_cast<long double>(r.keys) * r.with));
  }
  s.table({"model", "keys read t+1", "with cache", "without cache", "without / with"}, cells);
  s.check("without the cache the step at t + 1 keys costs exactly t + 1 times the cached step (it redoes every "
          "row, projections and attention alike)",
          "max |without - (t + 1) * with|", off, Relation::AtMost, 0.0);

  // Whole generations: n tokens one at a time, summed over the steps.
  std::vector<std::vector<std::string>> totals;
  auto total = [&](const std::string& model, const AttentionDims& d, std::uint64_t layers, std::uint64_t n) {
    const std::uint64_t w = layers * generation_cost(d, n, true).total(), u = layers * generation_cost(d, n, false).total();
    totals.push_back({model, with_commas(n), with_commas(w), with_commas(u), ratio_text(u, w)});
  };
  total(here_name, here, 1, T);
  for (std::uint64_t n : {1024u, 8192u}) total("Llama-3.2-3B (28 layers)", kLlama, kLlamaLayers, n);
  s.table({"model", "tokens generated", "all steps with cache", "all steps without", "without / with"}, totals);

  if (computed) {
    // The counts against the products this run actually made: every decode step multiplied each
    // weight once and its attn_weights row (h * (t + 1) entries per sequence) twice by d_k.
    std::uint64_t formula = 0;
    for (std::size_t t = P; t < T; ++t) formula += B * decode_step_cost(here, t, true).total();
    std::uint64_t counted = 0;
    for (std::uint64_t c : counted_with) counted += c;
    s.check("the cached counts are the products this run's decode steps made (weights once, "
            "attn_weights twice by d_k)",
            "|counted - formula|", std::fabs(static_cast<double>(counted) - static_cast<double>(formula)),
            Relation::AtMost, 0.0);
    const std::uint64_t full_formula = B * decode_step_cost(here, T - 1, false).total();
    s.check("the uncached count at t + 1 = " + str(T) + " is what the full causal pass multiplied",
            "|counted - formula|", std::fabs(static_cast<double>(counted_full) - static_cast<double>(full_formula)),
            Relation::AtMost, 0.0);
  }

  const StepCost step0 = decode_step_cost(kLlama, 0, true);
  const std::uint64_t per_key = 2 * kLlama.heads * kLlama.d_k;  // scores + context per cached key, one layer
  const std::uint64_t crossover = step0.projections / per_key;
  const CostRow& longest = rows.back();
  s.note("With the cache a token costs one row of projections, fixed (" + with_commas(step0.projections) +
         " multiply-adds per layer at Llama-3.2-3B's size), plus " + with_commas(per_key) +
         " per cached key for its scores and context: past " + with_commas(crossover) +
         " cached tokens, reading the cache costs more than projecting the new token. Without it, the step at " +
         with_commas(longest.keys) + " tokens redoes every earlier row: " + ratio_text(longest.without, longest.with) +
         " the work, over all 28 layers " + with_commas(longest.without) + " multiply-adds for one token.");
  const std::uint64_t mlp = 3 * kLlama.d_in * kLlamaIntermediate;  // gate, up and down: one token, one layer
  s.note("The Llama rows count the attention block only (its four projections and the attention itself). "
         "Each layer's MLP, left out, adds 3 x " + with_commas(kLlama.d_in) + " x " + with_commas(kLlamaIntermediate) + " = " +
         with_commas(mlp) + " multiply-adds per token, " + ratio_text(mlp, step0.projections) +
         " the attention's projections, the same with a cache or without.");
  s.note("Over a whole generation the saving is smaller than at its last step, because early steps are cheap "
         "either way: per step the cached cost grows linearly with the cache and the uncached one quadratically, so "
         "at long contexts the totals grow as n^2 and n^3. A "
         "cached step still reads every weight once to make one row, which is why decoding is bound by memory "
         "bandwidth rather than arithmetic.");
}

// opts, with the gqa fixture's T when no size and no input was given.
LessonOptions with_fixture_length(const LessonOptions& opts) {
  LessonOptions o = opts;
  if (!o.seq_len && !o.tokens && !o.input && o.more_sentences.empty()) o.seq_len = 5;  // the fixture's T
  return o;
}

// What the stages share: the sizes, x, the layer, and, when the run computes, the full pass,
// the cache the decode steps grow, and what they leave for the last stages (the rows decoded,
// the step table, the multiply-adds counted). Built once by the lesson (not copied). A plan
// (--shapes-only at sizes too large to compute) has only the sizes and the shapes.
struct KvCacheLesson {
  const LessonOptions& opts;
  const std::uint64_t seed;  // the gqa fixture's weight seed
  LessonOptions o;           // opts, with the fixture's T when no size was given
  // Everything below is decided from the sizes, as soon as the input's are known and before x is
  // made: a refusal costs nothing, and a --shapes-only plan (too large to compute) that no sink
  // reads values from never fills x.
  std::size_t h = 0, d_k = 0, h_kv = 0, P = 0;
  double theta = 0.0;
  bool rope = false, over = false;
  long double work = 0;
  const LessonInput in;
  const std::size_t B, T, d_in;
  const AttentionDims dims;
  const bool plan;  // --shapes-only at sizes too large to compute: shapes and counts only
  recipe::Recipe steps;
  GqaModel m;
  std::string H, HKV, DK, Ts, Ps;
  // The computed run (none in a plan): the pass without a cache, then the decoding.
  GqaForward full;           // every stage of the pass without a cache: (B, T, d_in)
  KvCache cache;             // (B, h_kv, t, d_k), grown by every step
  Ten3 incremental;          // (B, T, d_in): row t from the step at position t
  std::vector<StepRow> rows;            // the step table
  std::uint64_t weights_per_row = 0;
  std::vector<std::uint64_t> counted;   // multiply-adds each decode step made, from its tensors
  std::size_t elided = 0;               // decode steps without a stage of their own

  KvCacheLesson(const LessonOptions& opts_, report::Report& out);
  KvCacheLesson(const KvCacheLesson&) = delete;

  // The pass without a cache, and the cache the decoding starts from: room for the prompt (or one
  // position), doubled when full.
  void run_full_pass() {
    full = gqa_forward(m, in.x, true);
    cache = make_kv_cache(B, h_kv, d_k, std::max<std::size_t>(P, 1));
    incremental = xt::empty<float>({B, T, d_in});  // (B, T, d_in)
    weights_per_row = m.W_query.weight.size() + m.W_key.weight.size() + m.W_value.weight.size() + m.out_proj.weight.size();
  }
  const Ten4& k_full() const { return rope ? full.k_rope : full.k_heads; }  // (B, h_kv, T, d_k): what the cache must end up holding
  void put_rows(const Ten3& rows_out, std::size_t from) {  // (B, n, d_in) into incremental
    const std::size_t n = rows_out.shape()[1];
    for (std::size_t b = 0; b < B; ++b)
      std::copy_n(rows_out.data() + b * n * d_in, n * d_in, incremental.data() + (b * T + from) * d_in);
  }
  // Labels: a token per position when every batch entry is the same sentence.
  std::string token(std::size_t t) const { return in.cols.empty() ? std::string() : in.cols[t]; }
  report::Labels upto(std::size_t n) const {  // the labels of positions 0 .. n - 1
    return in.cols.empty() ? report::Labels{} : report::Labels(in.cols.begin(), in.cols.begin() + static_cast<long>(n));
  }
  report::Labels one(std::size_t t) const { return in.cols.empty() ? report::Labels{} : report::Labels{in.cols[t]}; }
  bool detailed(std::size_t t) const {  // a decode step with a stage of its own
    const std::size_t i = t - P, steps_n = T - P;
    return steps_n <= kDetailSteps || i < 3 || t == T - 1;
  }
};

KvCacheLesson::KvCacheLesson(const LessonOptions& opts_, report::Report& out)
    : opts(opts_),
      seed(opts_.seed.value_or(9)),
      o(with_fixture_length(opts_)),
      in(lesson_input(o, 8, 1, true, [&](const InputSizes& n) {
        const std::size_t B = n.B, T = n.T, d_in = n.d_in;
        h = size_option(opts.heads, 4, "--heads");
        d_k = head_width_option(opts, h, d_in);  // --d-k, W_query.npy's width / h, or d_in / h
        h_kv = kv_heads_option(opts, h, d_in, d_k);
        const std::int64_t prompt = opts.integer("--prompt-len");
        if (prompt >= static_cast<std::int64_t>(T))
          throw UsageError("--prompt-len must leave at least one token to decode", "--prompt-len",
                           "0.." + str(T - 1) + " for " + plural(T, "token"), std::to_string(prompt));
        P = static_cast<std::size_t>(prompt);
        theta = opts.number("--rope-theta");
        rope = theta > 0.0;
        if (rope && theta < 2.0)
          throw UsageError("--rope-theta is 0 (no RoPE) or a RoPE base of at least 2", "--rope-theta", "0 or 2..1e9",
                           format_option_value(theta));
        if (rope && d_k % 2 != 0)
          throw UsageError("--rope-theta needs an even head width: RoPE rotates pairs of dimensions", "--rope-theta",
                           opts.integer("--d-k")  ? "--d-k even"
                           : d_k * h == d_in      ? "d_k = d_in / heads even"
                                                  : "d_k = W_query.npy's width / heads even",
                           "d_k " + str(d_k));
    
        // The full pass holds (B, h, T, T) weights, and decoding reads every weight once per token.
        const AttentionDims dims{d_in, h, h_kv, d_k, d_in};
        work = static_cast<long double>(decode_step_cost(dims, T - 1, false).total());  // the full pass
        if (P > 0) work += static_cast<long double>(decode_step_cost(dims, P - 1, false).total());  // the prefill
        for (std::size_t t = P; t < T; ++t) work += static_cast<long double>(decode_step_cost(dims, t, true).total());
        work *= static_cast<long double>(B);
        const long double full_weights = static_cast<long double>(B) * h * T * T;
        over = work > static_cast<long double>(kMaxWork) || full_weights > static_cast<long double>(kMaxValues);
        if (over && !opts.shapes_only)
          throw UsageError("decoding " + str(T) + " tokens at these sizes is more than this lesson computes; add "
                           "--shapes-only for every step's shapes and the costs without the numbers",
                           "--seq-len, --d-in, --heads, --d-k, --batch",
                           "at most " + with_commas(kMaxWork) + " multiply-adds and (B, h, T, T) of at most " + with_commas(kMaxValues) +
                               " values",
                           with_commas(static_cast<std::uint64_t>(work)) + " multiply-adds, (" + str(B) + ", " + str(h) + ", " +
                               str(T) + ", " + str(T) + ")");
        check_size("the cache", {B, h_kv, T, d_k}, opts.shapes_only, "--batch, --kv-heads, --seq-len, --d-in, --d-k");
        if (!over) {
          check_size("W_query.weight", {h * d_k, d_in}, opts.shapes_only, "--d-in, --heads, --d-k");
          check_size("out_proj.weight", {d_in, h * d_k}, opts.shapes_only, "--d-in, --heads, --d-k");
          check_size("the full pass's attn_weights", {B, h, T, T}, opts.shapes_only, "--batch, --heads, --seq-len");
        }
        return !(over && !out.keep_values);  // x's values: not for a plan whose report keeps none
      })),
      B(in.B),
      T(in.T),
      d_in(in.d_in),
      dims{d_in, h, h_kv, d_k, d_in},
      plan(over),
      steps(in.recipe) {
  // Four bias-free layers, drawn in the order a GQA module's __init__ builds them (lesson gqa);
  // --weights may bring biases too (W_key_bias.npy, ...), which linear_weights then loads.
  // The plan draws nothing: the reproduce lines still say how the numbers would be made.
  TorchGenerator gen(seed);
  steps.seed(gen, seed);
  m.heads = h;
  m.kv_heads = h_kv;
  m.rope = rope;
  m.rope_theta = static_cast<float>(theta);
  auto layer = [&](const std::string& name, std::size_t in_w, std::size_t out_w) {
    if (plan && opts.weights.empty()) {
      steps.add(recipe::Linear{name, in_w, out_w, false});
      return Linear{};
    }
    return linear_weights(opts, name, in_w, out_w, false, gen, steps);
  };
  m.W_query = layer("W_query", d_in, h * d_k);     // weight (h * d_k, d_in)
  m.W_key = layer("W_key", d_in, h_kv * d_k);      // weight (h_kv * d_k, d_in)
  m.W_value = layer("W_value", d_in, h_kv * d_k);  // weight (h_kv * d_k, d_in)
  m.out_proj = layer("out_proj", h * d_k, d_in);   // weight (d_in, h * d_k)

  std::vector<std::string> setting;
  if (steps.uses_seed()) setting.push_back("seed " + std::to_string(seed));
  for (const std::string& item :
       {"batch " + str(B), "tokens " + str(T), "prompt " + str(P), "d_in " + str(d_in), "heads " + str(h),
        "kv_heads " + str(h_kv), "d_k " + str(d_k),
        rope ? "rope theta " + format_option_value(theta) : std::string("rope off"), std::string("causal True")})
    setting.push_back(item);
  out.header = {"kv-cache", "The KV cache: decoding one token at a time",
                "Hugging Face transformers' past_key_values; the Llama-3.2-3B attention block", setting,
                steps.lines()};

  H = str(h), HKV = str(h_kv), DK = str(d_k), Ts = str(T), Ps = str(P);
}

// --shapes-only at sizes too large to compute: every step's shapes and the counts, no numbers.
void stage_plan(const KvCacheLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T, h = L.h, d_k = L.d_k, h_kv = L.h_kv, P = L.P;
  const long double work = L.work;
  // Every step's shapes, from the sizes alone.
  std::vector<StepRow> rows;
  if (P > 0) rows.push_back({"0.." + str(P - 1), "(prefill)", {B, h_kv, P, d_k}, {B, h, P, P}});
  for (std::size_t t = P; t < T; ++t) rows.push_back({str(t), L.token(t), {B, h_kv, t + 1, d_k}, {B, h, 1, t + 1}});
  auto& s = out.stage("The plan: every step's shapes at this size (no numbers)",
                      "per step t: q (B, h, 1, d_k); cache (B, h_kv, t, d_k) -> (B, h_kv, t+1, d_k); "
                      "attn_weights (B, h, 1, t+1); output (B, 1, d_in)");
  step_table(s, rows);
  s.note("Computing these sizes would take " + with_commas(static_cast<std::uint64_t>(work)) +
         " multiply-adds (the full causal pass plus every step), more than this lesson runs (" + with_commas(kMaxWork) +
         "), so --shapes-only shows the plan: every step's shapes, but no numbers and no checks on them. Try a "
         "shorter --seq-len or a smaller --d-in for those.");
  s.note("After the last step the cache holds " + with_commas(2ull * B * h_kv * T * d_k) + " numbers, " +
         human_bytes(2ull * B * h_kv * T * d_k * 4) + " in float32.");
}

void stage_full_pass(const KvCacheLesson& L, report::Report& out) {
  const std::size_t d_k = L.d_k;
  const bool rope = L.rope;
  const double theta = L.theta;
  const Ten3& x = L.in.x;
  const report::Labels &tok = L.in.rows, &cols = L.in.cols;
  const GqaModel& m = L.m;
  const LessonOptions& opts = L.opts;
  const GqaForward& full = L.full;
  const Ten4& k_full = L.k_full();
  auto& s = out.stage("The layer, and the full causal pass the cache must reproduce",
                      "keys_full = (x @ W_key.weight^T).view(B, T, h_kv, d_k).transpose(1, 2)   # likewise "
                      "values_full" + std::string(rope ? ", keys rotated to positions 0..T-1" : "") +
                          "\noutput_full = GQA(x) with the causal mask, all T tokens at once (attn lesson gqa)");
  s.in("x", x);
  s.show("W_query.weight", m.W_query.weight).detail().show("W_key.weight", m.W_key.weight).detail();
  s.show("W_value.weight", m.W_value.weight).detail().show("out_proj.weight", m.out_proj.weight).detail();
  // Biases only when --weights brings them (Qwen-style q/k/v biases, say); the seed draws none.
  for (const auto& [name, layer] : {std::pair<const char*, const Linear*>{"W_query.bias", &m.W_query},
                                    {"W_key.bias", &m.W_key}, {"W_value.bias", &m.W_value},
                                    {"out_proj.bias", &m.out_proj}})
    if (layer->bias.size() != 0) s.show(name, layer->bias).detail();
  // The decode steps check their rows against these, and stage 8 the whole cache.
  s.show("keys_full", k_full, tok).detail().show("values_full", full.v_heads, tok).detail();
  s.show("attn_weights_full", full.attn.attn_weights, tok, cols)
      .attention_weights(report::Training::drawn_unless(!opts.weights.empty()))
      .picture_only();  // each decode step checks its row against these
  s.show("output_full", full.output, tok).detail();
  s.note("This is the route without a cache: to produce row t a model without one reruns this pass on the " +
         std::string("first t + 1 tokens. Row t of attn_weights_full is 0 past column t (the mask), so row t of "
                     "output_full depends on tokens 0..t only, and the keys and values of tokens before t are the "
                     "same whenever they are computed: that is what makes a cache possible."));
  if (rope)
    s.note("With RoPE (theta " + format_option_value(theta) +
           ") the keys are rotated by their positions before they are used; keys_full holds the rotated keys, "
           "which is what a cache stores, so a decode step must rotate its new key to its own position t." +
           std::string(d_k == 2 ? " With d_k = 2 RoPE has a single pair, whose frequency theta^0 = 1 is the same "
                                  "for every theta: --rope-theta changes no number here (" +
                                      std::string(opts.integer("--d-k") ? "--d-k 8, " : "--d-in 32 gives d_k = 8, ") +
                                      "where it does)."
                                : ""));
}

void stage_prefill(KvCacheLesson& L, report::Report& out) {
  const std::size_t B = L.B, h = L.h, P = L.P;
  const bool rope = L.rope;
  const std::string &HKV = L.HKV, &DK = L.DK, &Ps = L.Ps;
  const Ten3& x = L.in.x;
  const report::Labels& cols = L.in.cols;
  const GqaModel& m = L.m;
  const LessonOptions& opts = L.opts;
  const GqaForward& full = L.full;
  const KvCache& cache = L.cache;
  const Ten3 prompt_x = rows_of(x, 0, P);                    // (B, P, d_in)
  const GqaForward pre = gqa_forward(m, prompt_x, true);     // (B, P, d_in), every stage
  const Ten4& k_pre = rope ? pre.k_rope : pre.k_heads;       // (B, h_kv, P, d_k)
  kv_cache_append(L.cache, k_pre, pre.v_heads);                // cache (B, h_kv, 0, d_k) -> (B, h_kv, P, d_k)
  L.put_rows(pre.output, 0);
  L.rows.push_back({"0.." + str(P - 1), "(prefill)", cache.shape(), {B, h, P, P}});
  const report::Labels ptok = cols.empty() ? report::Labels{} : L.upto(P);
  auto& s = out.stage("Prefill: the prompt's " + Ps + " tokens in one causal pass",
                      "keys, values, output_prompt = GQA(x[:, :P]) with the causal mask   # (B, h_kv, P, d_k), "
                      "(B, P, d_in)" + std::string(rope ? ", keys rotated to positions 0..P-1" : "") +
                          "\ncache_k, cache_v = keys, values   # the cache starts full of the prompt");
  s.in("x[:, :P]", prompt_x);
  s.show("cache_k", cache.keys(), ptok).show("cache_v", cache.values(), ptok);
  s.show("attn_weights_prompt", pre.attn.attn_weights, ptok, ptok)
      .attention_weights(report::Training::drawn_unless(!opts.weights.empty()));
  s.show("output_prompt", pre.output, ptok);
  check_close(s, "the prompt's rows equal rows 0.." + str(P - 1) + " of the full causal pass", pre.output,
              rows_of(full.output, 0, P));
  s.note("A real model runs the prompt like this, in one pass of matrix products, and keeps its keys and values: "
         "the cache goes from (" + str(B) + ", " + HKV + ", 0, " + DK + ") to " + shape_str(cache.shape()) +
         " in one append. Only the last prompt row is needed to predict the next token; the others come free "
         "with the same products. From here on, one token per step.");
}

// Position t, one query against the cache (which it appends to): a stage of its own when detailed(t).
void decode_position(KvCacheLesson& L, std::size_t t, report::Report& out) {
  const std::size_t B = L.B, T = L.T, d_k = L.d_k, h_kv = L.h_kv, P = L.P;
  const bool rope = L.rope;
  const Ten3& x = L.in.x;
  const LessonOptions& opts = L.opts;
  const GqaForward& full = L.full;
  const KvCache& cache = L.cache;
  const std::uint64_t weights_per_row = L.weights_per_row;
  const Ten3 x_t = rows_of(x, t, 1);  // (B, 1, d_in)
  const DecodeStep st = decode_step(L.m, L.cache, x_t);  // appends: cache (B, h_kv, t, d_k) -> (B, h_kv, t + 1, d_k)
  L.put_rows(st.output, t);
  L.counted.push_back(B * weights_per_row + 2 * st.attn.attn_weights.size() * d_k);
  L.rows.push_back({str(t), L.token(t), st.cache_shape, to_shape(st.attn.attn_weights.shape())});
  if (!L.detailed(t)) {
    ++L.elided;
    return;
  }
  const std::string name = L.token(t).empty() ? "" : ": '" + L.token(t) + "'";
  auto& s = out.stage(
      "Decode position t = " + str(t) + name + ", one query against " + plural(t + 1, "cached key"),
      "q, k, v = x[:, t:t+1] @ W_query.weight^T, W_key.weight^T, W_value.weight^T, split into heads   # (B, h, 1, "
      "d_k), (B, h_kv, 1, d_k)\n" +
          std::string(rope ? "q, k = rope(q, position t), rope(k, position t)   # the offset is the cache's "
                             "length\n"
                           : "") +
          "cache_k = torch.cat([cache_k, k], dim=2); cache_v likewise   # (B, h_kv, t, d_k) -> (B, h_kv, t+1, d_k)\n"
          "attn_weights = softmax(q @ cache_k^T / sqrt(d_k))   # (B, h, 1, t+1), query head i reads kv head "
          "i // (h // h_kv); no mask\n"
          "output_t = (attn_weights @ cache_v).transpose(1, 2).reshape(B, 1, h*d_k) @ out_proj.weight^T   # "
          "(B, 1, d_in)");
  // The first two steps whole; the later ones repeat the second with one more key each.
  if (t >= P + 2)
    s.fold("decode step like t = " + str(P + 1) + ", with one more key each time",
           "decode steps like t = " + str(P + 1) + ", each with one more key");
  s.in("x[:, t:t+1]", x_t).in("cache_k", ShapeOnly{{B, h_kv, t, d_k}});
  // k and v are the cache's new last rows.
  // The first step prints its output and checks; the next one shows every tensor of a step.
  const bool first = t == P && P + 1 < T;
  s.show("q", st.q_heads, L.one(t));
  if (first) s.detail();
  s.show("k", st.k_new, L.one(t)).detail().show("v", st.v_new, L.one(t)).detail();
  s.show("cache_k", cache.keys(), L.upto(t + 1));
  if (first) s.detail();
  s.show("cache_v", cache.values(), L.upto(t + 1));
  if (first) s.detail();
  s.show("attn_weights", st.attn.attn_weights, L.one(t), L.upto(t + 1))
      .attention_weights(report::Training::drawn_unless(!opts.weights.empty()));
  const bool all_ones =
      std::all_of(st.attn.attn_weights.begin(), st.attn.attn_weights.end(), [](float w) { return w == 1.0f; });
  if (t == 0 && all_ones) s.detail();  // the note below says what they are
  s.show("output_t", st.output, L.one(t));
  check_close(s, "output_t equals row " + str(t) + " of the full causal pass", st.output,
              rows_of(full.output, t, 1));
  check_close(s, "attn_weights equals row " + str(t) + " of the full pass's weights, keys 0.." + str(t) +
                     " (the mask made the rest 0)",
              st.attn.attn_weights, weights_row(full.attn.attn_weights, t));
  s.note("The cache grew from " + shape_str({B, h_kv, t, d_k}) + " to " + shape_str(st.cache_shape) +
         ": one new row of keys and of values per step. The query is one row per head, " + shape_str(to_shape(st.q_heads.shape())) + ": the step computes " +
         plural(t + 1, "score") + " per head instead of the full pass's " + str(T) + " x " + str(T) + ".");
  if (t == 0 && all_ones)
    s.note("At position 0 the only cached key is the token's own, so every head puts weight 1 on it: the output "
           "is its value, projected.");
}

void stage_every_step(const KvCacheLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T, d_k = L.d_k, h_kv = L.h_kv, elided = L.elided;
  const bool rope = L.rope;
  const std::string& Ts = L.Ts;
  const report::Labels& tok = L.in.rows;
  const GqaForward& full = L.full;
  const Ten4& k_full = L.k_full();
  const std::vector<StepRow>& rows = L.rows;
  const KvCache& cache = L.cache;
  const Ten3& incremental = L.incremental;
  auto& s = out.stage("Every step at once: the cached route gives the full pass's rows",
                      "output_incremental = torch.cat([output_t for t in range(T)], dim=1)   # (B, T, d_in)");
  s.in("output_full", full.output).in("keys_full", k_full);
  step_table(s, rows);
  // The checks below hold them to output_full and keys_full, printed in stage 2.
  s.show("output_incremental", incremental, tok).detail();
  s.show("cache_k", cache.keys(), tok).detail().show("cache_v", cache.values(), tok).detail();
  check_close(s, "every row decoded with the cache equals the full causal pass's row", incremental, full.output);
  const Ten4 keys = cache.keys(), values = cache.values();  // (B, h_kv, T, d_k)
  check_close(s, std::string("the cache after the last step holds the full pass's ") + (rope ? "rotated " : "") +
                     "keys",
              keys, k_full);
  check_close(s, "and its values", values, full.v_heads);
  // Not promised bit for bit, and not asked either: the answer depends on the BLAS kernel
  // (identical under some OPENBLAS_CORETYPEs, one unit in the last place apart under others),
  // and a lesson's text must not change with the CPU.
  s.note("Close, not promised bit for bit: the cache's rows come from one-row products x[:, t:t+1] @ W^T, "
         "the full pass's from one (T, d_in) product, and BLAS may add the d_in terms in another order. On "
         "some CPUs the two come out identical, on others a last bit apart, so the bound is float32 "
         "rounding, not 0.");
  if (elided)
    s.note(str(elided) + " decode steps had no stage of their own; the table lists every one, and the checks "
           "above cover all " + Ts + " rows.");
  s.note("The cache now holds 2 * B * h_kv * T * d_k = " +
         with_commas(2ull * B * h_kv * T * d_k) + " numbers (" + human_bytes(2ull * B * h_kv * T * d_k * 4) +
         " in float32) for " + Ts + " tokens; lesson gqa counts that at Llama's size.");
}

// The cost stage (cost_stage), with the counts this run's own tensors give: the uncached count
// at T, from the full pass's own tensors: every weight once per row, and the dense (B, h, T, T)
// weights twice by d_k (scores and context).
void stage_cost(const KvCacheLesson& L, report::Report& out) {
  const std::uint64_t counted_full = L.B * L.T * L.weights_per_row + 2 * L.full.attn.attn_weights.size() * L.d_k;
  cost_stage(out, L.dims, L.B, L.T, L.P, L.counted, counted_full, true);
}

}  // namespace

// The lesson reads as its table of contents: one function per stage, in the order they print.
void lesson_kv_cache(const LessonOptions& opts, report::Report& out) {
  KvCacheLesson L(opts, out);
  inputs_stage(out, BatchView(true), L.in, "Inputs: the sequence to decode, one position at a time");
  if (L.plan) {
    stage_plan(L, out);
    cost_stage(out, L.dims, L.B, L.T, L.P, {}, 0, false);
    return;
  }
  L.run_full_pass();
  stage_full_pass(L, out);
  if (L.P > 0) stage_prefill(L, out);
  for (std::size_t t = L.P; t < L.T; ++t) decode_position(L, t, out);  // a stage when detailed(t)
  stage_every_step(L, out);
  stage_cost(L, out);
}

// Teaching order 670: after gqa (660), whose layer it decodes; docs/kv-cache.md is its page.
ATTN_REGISTER_LESSON({670, "kv-cache", "The KV cache: decoding one token at a time",
                      "decode token by token: the cache grows each step, every row equals the full pass's, "
                      "and the cost per token with and without it",
                      "Hugging Face transformers' past_key_values; the Llama-3.2-3B attention block",
                      kSeed | kBatch | kSeqLen | kDIn | kHeads | kKvHeads | kTokens | kInput | kWeights,
                      lesson_kv_cache,
                      {kHeadWidthOption,
                       {"--prompt-len", OptionType::Integer, 0, 65535, 0,
                        "Tokens prefilled in one causal pass before decoding the rest one at a time"},
                       {"--rope-theta", OptionType::Real, 0, 1e9, 0,
                        "RoPE base for q and k (Llama 3: 500000), at least 2; 0 applies no RoPE, as in lesson gqa"}}});

}  // namespace attn
