// Lesson: from multi-head to grouped-query to multi-query attention (Ainslie et al. 2023, GQA;
// Shazeer 2019, MQA; the Llama-3.2-3B attention block as the worked example).
//
// The queries keep h heads; the keys and values are projected to h_kv heads only, and each of
// them serves h / h_kv query heads in a row. PyTorch code usually copies them per query head
// (repeat_interleave); core reads them in place. The lesson shows the copy, checks that reading
// in place gives the same attention, checks that h_kv = h is ordinary multi-head attention, and
// ends with what the sharing buys: the KV cache per token, here and at Llama-3.2-3B's size.
// --preset llama runs it at that size, with x and the layers made exactly as heads --preset
// llama makes them (tests/lessons/test_modern_lessons.cpp compares the two); --input and
// --weights put a learner's own x and layers through it.
//
// Legend: B batch, T tokens, d_in embedding width (also the output width), h query heads,
// h_kv key/value heads, groups = h / h_kv, d_k head width (--d-k; by default d_in / h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include "core/attention.hpp"
#include "core/gqa.hpp"
#include "core/heads.hpp"
#include "core/kv_cache.hpp"
#include "core/linear.hpp"
#include "lesson_kit/checks.hpp"
#include "lesson_kit/external.hpp"
#include "lesson_kit/presets.hpp"
#include "lesson_kit/numbers.hpp"
#include "lesson_kit/registry.hpp"

namespace attn {
namespace {

using report::Held;
using report::hold;

// A layer whose key/value weights hold every kv head once per query head reading it: rows of
// kv head kv_head_of(i) placed at query head i's rows. (rows, d_in) -> (h * d_k, d_in).
Linear expand_kv_weight(const Linear& kv_layer, std::size_t h, std::size_t h_kv, std::size_t d_k) {
  const std::size_t d_in = kv_layer.weight.shape()[1];
  Linear out;
  out.weight = xt::zeros<float>({h * d_k, d_in});  // (h * d_k, d_in)
  for (std::size_t i = 0; i < h; ++i) {
    const std::size_t g = kv_head_of(i, h, h_kv);
    xt::view(out.weight, xt::range(i * d_k, (i + 1) * d_k), xt::all()) =
        xt::view(kv_layer.weight, xt::range(g * d_k, (g + 1) * d_k), xt::all());  // (d_k, d_in)
  }
  return out;
}

// What the stages share: the sizes, x, the four layers and every tensor of the forward pass.
// Built once by the lesson (not copied: tok and cols point into `in`). With `values` false (a
// --shapes-only run whose tensors are too large to print, alone or together, Llama's sizes:
// check_sizes) nothing is computed and every Held holds its shape alone; the stages branch only
// where a check or a sentence needs the numbers.
struct GqaLesson {
  const LessonOptions& opts;
  const std::uint64_t seed;
  std::size_t h = 0, d_k = 0, h_kv = 0;
  bool values = true;
  const LessonInput in;  // x (B, T, d_in) and its labels
  const std::size_t B, T, d_in;
  const report::Labels& tok;
  const report::Labels& cols;
  const std::size_t groups;  // query heads per kv head
  // The layer names on screen: W_query, ... or, under --preset llama, the model's q_proj, ...
  const ArticleModel names;
  recipe::Recipe steps;
  GqaModel m;
  // check_close reads these, copies of the forward pass's (empty without values).
  Ten4 context_in_place;  // (B, h, T, d_k)
  Ten3 output_gqa;        // (B, T, d_in)
  Held<Ten3> queries;                  // (B, T, h * d_k)
  Held<Ten3> keys, values_;            // (B, T, h_kv * d_k)
  Held<Ten4> q_heads;                  // (B, h, T, d_k)
  Held<Ten4> k_heads, v_heads;         // (B, h_kv, T, d_k)
  Held<Ten4> attn_scores, attn_weights;  // (B, h, T, T)
  Held<Ten3> context;                  // (B, T, h * d_k)
  Held<Ten3> output;                   // (B, T, d_in)
  Held<Ten4> k_rep;                    // (B, h, T, d_k)

  GqaLesson(const LessonOptions& o, report::Report& out);
  GqaLesson(const GqaLesson&) = delete;

  // A weight as a stage shows it: (rows, width), or its shape when nothing was drawn.
  Held<Mat> weight(const Mat& w, std::size_t rows, std::size_t width) const {
    return hold(values, {rows, width}, [&] { return w; });  // (out, in)
  }
};

GqaLesson::GqaLesson(const LessonOptions& o, report::Report& out)
    : opts(o),
      seed(o.seed.value_or(123)),
      // Sizes first, as soon as the input's are known and before x is made. A --shapes-only run
      // whose tensors are too large to print, alone or together (Llama's sizes), computes nothing.
      in(lesson_input(o, 8, 1, true, [&](const InputSizes& n) {
        h = size_option(opts.heads, 4, "--heads");
        d_k = head_width_option(opts, h, n.d_in);  // --d-k, W_query.npy's width / h, or d_in / h
        h_kv = kv_heads_option(opts, h, n.d_in, d_k);
        values = check_sizes({{"attn_scores", {n.B, h, n.T, n.T}, "--batch, --heads, --seq-len"},
                              {"W_query.weight", {h * d_k, n.d_in}, "--d-in, --heads, --d-k"},
                              {"out_proj.weight", {n.d_in, h * d_k}, "--d-in, --heads, --d-k"},
                              {"W_key_mha.weight", {h * d_k, n.d_in}, "--d-in, --heads, --d-k"},
                              {"queries", {n.B, n.T, h * d_k}, "--batch, --seq-len, --heads, --d-k"}},
                             opts.shapes_only, /*values_optional=*/!out.keep_values);
        // All together, the lesson's own tensors and the report's (measured at each limit alone,
        // docs/testing.md): both models' four weights, and the (B, T, d_in)-sized heads of each,
        // counted at the wider of d_in and h * d_k (the same when d_k = d_in / h).
        const std::size_t wide = std::max(n.d_in, h * d_k);
        if (values)
          values = values_within_held("gqa at these sizes",
                                      held_bytes(opts, {{9, {n.B, h, n.T, n.T}},
                                                        {14, {wide, n.d_in}},
                                                        {30, {n.B, n.T, wide}}}),
                                      opts.shapes_only, /*values_optional=*/!out.keep_values, /*skips_values=*/true,
                                      "--batch, --seq-len, --d-in, --heads, --d-k");
        return values;
      })),
      B(in.B),
      T(in.T),
      d_in(in.d_in),
      tok(in.rows),
      cols(in.cols),
      groups(h / h_kv),
      names(article_model(o.preset)),
      steps(in.recipe) {
  const std::string &Wq = names.query, &Wk = names.key, &Wv = names.value, &Wo = names.output;
  // Four bias-free layers, drawn in the order a GQA module's __init__ builds them (the order
  // heads --preset llama draws q_proj, k_proj, v_proj, o_proj too), or read from --weights.
  // A run without values records them without drawing.
  TorchGenerator gen(seed);
  if (opts.weights.empty()) steps.seed(gen, seed);
  m.heads = h;
  m.kv_heads = h_kv;
  m.W_query = linear_weights(opts, "W_query", d_in, h * d_k, false, gen, steps, Wq, values);     // weight (h * d_k, d_in)
  m.W_key = linear_weights(opts, "W_key", d_in, h_kv * d_k, false, gen, steps, Wk, values);      // weight (h_kv * d_k, d_in)
  m.W_value = linear_weights(opts, "W_value", d_in, h_kv * d_k, false, gen, steps, Wv, values);  // weight (h_kv * d_k, d_in)
  m.out_proj = linear_weights(opts, "out_proj", h * d_k, d_in, false, gen, steps, Wo, values);   // weight (d_in, h * d_k)

  std::vector<std::string> setting;
  if (steps.uses_seed()) setting.push_back("seed " + std::to_string(seed));
  setting.push_back("batch " + std::to_string(B));
  setting.push_back("tokens " + std::to_string(T));
  setting.push_back("d_in " + std::to_string(d_in));
  setting.push_back("heads " + std::to_string(h));
  setting.push_back("kv_heads " + std::to_string(h_kv));
  setting.push_back("d_k " + std::to_string(d_k));
  setting.push_back("causal True");
  if (!opts.preset.empty()) setting.push_back("preset " + opts.preset);
  out.header = {"gqa", "Grouped-query attention: from multi-head to multi-query",
                "Ainslie et al. 2023, GQA; the Llama-3.2-3B attention block", setting, steps.lines()};

  GqaForward f;  // every stage, (B, T, d_in) -> (B, T, d_in); left empty in a run without values
  if (values) f = gqa_forward(m, in.x, true);
  // A stage of the forward pass moved into shared storage; its shape alone when not computed.
  auto take3 = [&](Ten3& t, Shape shape) { return hold(values, std::move(shape), [&] { return std::move(t); }); };
  auto take4 = [&](Ten4& t, Shape shape) { return hold(values, std::move(shape), [&] { return std::move(t); }); };
  if (values) {
    context_in_place = f.attn.context;  // (B, h, T, d_k)
    output_gqa = f.output;              // (B, T, d_in)
  }
  queries = take3(f.queries, {B, T, h * d_k});
  keys = take3(f.keys, {B, T, h_kv * d_k});
  values_ = take3(f.values, {B, T, h_kv * d_k});
  q_heads = take4(f.q_heads, {B, h, T, d_k});
  k_heads = take4(f.k_heads, {B, h_kv, T, d_k});
  v_heads = take4(f.v_heads, {B, h_kv, T, d_k});
  attn_scores = take4(f.attn.attn_scores, {B, h, T, T});
  attn_weights = take4(f.attn.attn_weights, {B, h, T, T});
  context = take3(f.context, {B, T, h * d_k});
  output = take3(f.output, {B, T, d_in});
  k_rep = hold(values, {B, h, T, d_k}, [&] { return repeat_kv_heads(*k_heads, groups); });  // (B, h_kv, T, d_k) -> (B, h, T, d_k)
}

void stage_inputs(const GqaLesson& L, report::Report& out) {
  auto& s = inputs_stage(out, BatchView(true), L.in, "Inputs: a batch of token embeddings");
  for (const auto& note : L.opts.preset_notes) s.note(note);
  if (!L.values)
    s.note("--shapes-only at these sizes computes nothing: the stages below list names and shapes only, and "
           "the checks on the numbers and the sentences about them, which need the values, are left out. "
           "The KV cache table at the end needs only the sizes.");
}

void stage_projections(const GqaLesson& L, report::Report& out) {
  const std::size_t h = L.h, h_kv = L.h_kv, d_k = L.d_k, d_in = L.d_in;
  const std::string &Wq = L.names.query, &Wk = L.names.key, &Wv = L.names.value, &Wo = L.names.output;
  const std::string H = std::to_string(h), HKV = std::to_string(h_kv), DK = std::to_string(d_k);
  const GqaModel& m = L.m;
  const report::Labels& tok = L.tok;
  auto& s = out.stage("Projections: queries h * d_k wide, keys and values only h_kv * d_k",
                      "queries = x @ " + Wq + ".weight^T   # " + Wq + " = nn.Linear(d_in, h*d_k, bias=False)\n"
                      "keys = x @ " + Wk + ".weight^T; values = x @ " + Wv + ".weight^T   # nn.Linear(d_in, h_kv*d_k, bias=False)");
  s.in("x", L.in.x);
  s.show(Wq + ".weight", L.weight(m.W_query.weight, h * d_k, d_in)).detail();
  s.show(Wk + ".weight", L.weight(m.W_key.weight, h_kv * d_k, d_in)).detail();
  s.show(Wv + ".weight", L.weight(m.W_value.weight, h_kv * d_k, d_in)).detail();
  s.show(Wo + ".weight", L.weight(m.out_proj.weight, d_in, h * d_k)).detail();
  // Stage 3 prints the queries again, split into heads; the values follow the keys.
  s.show("queries", L.queries, tok).detail().show("keys", L.keys, tok).show("values", L.values_, tok).detail();
  s.note(Wq + " has " + std::to_string(h * d_k) + " rows (" + H + " heads of " + DK + "); " + Wk + " and " + Wv +
         " have " + std::to_string(h_kv * d_k) + " (" + HKV + " heads of " + DK + "), so the key and value projections are " +
         ratio_text(h, h_kv) + " narrower than the query projection.");
  if (!L.opts.weights.empty()) s.note(weights_origin(L.opts));
}

void stage_split_heads(const GqaLesson& L, report::Report& out) {
  const std::size_t h = L.h, h_kv = L.h_kv, groups = L.groups;
  const std::string H = std::to_string(h), HKV = std::to_string(h_kv), G = std::to_string(groups);
  const report::Labels& tok = L.tok;
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < h; ++i) rows.push_back({std::to_string(i), std::to_string(kv_head_of(i, h, h_kv))});
  auto& s = out.stage("Split into heads: " + H + " query heads, " + HKV + " key/value heads",
                      "q_heads = queries.view(B, T, h, d_k).transpose(1, 2)\n"
                      "k_heads = keys.view(B, T, h_kv, d_k).transpose(1, 2)   # likewise v_heads");
  s.in("queries", L.queries).in("keys", L.keys);
  s.show("q_heads", L.q_heads, tok).show("k_heads", L.k_heads, tok).show("v_heads", L.v_heads, tok).detail();  // split as k_heads
  s.table({"query head i", "reads kv head i // " + G}, rows);
  s.note("Query heads " + std::string(groups > 1 ? "sit in groups of " + G + " next to each other" : "each have their own kv head") +
         ": query head i reads key/value head i // " + G + ". " +
         (h_kv == h ? "With h_kv = h this is ordinary multi-head attention."
                    : h_kv == 1 ? "With h_kv = 1 all of them read the same one: multi-query attention."
                                : "This is grouped-query attention."));
}

void stage_repeat_copy(const GqaLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T, h = L.h, h_kv = L.h_kv, d_k = L.d_k, groups = L.groups;
  const std::string DK = std::to_string(d_k), G = std::to_string(groups);
  auto& s = out.stage("The copy PyTorch code makes, and why reading in place does not need it",
                      "k_rep = k_heads.repeat_interleave(h // h_kv, dim=1)   # likewise v_rep\n"
                      "context = softmax(causal(q_heads @ k_rep.transpose(2, 3)) / sqrt(d_k)) @ v_rep");
  s.in("k_heads", L.k_heads);
  s.show("k_rep", L.k_rep, L.tok);
  if (L.values) {
    const Ten4 v_rep = repeat_kv_heads(*L.v_heads, groups);                                        // (B, h, T, d_k)
    const Attention copied = scaled_dot_product_attention(*L.q_heads, *L.k_rep, v_rep, true);  // context (B, h, T, d_k)
    check_close(s, "attention read in place (no copy) equals attention on the repeated copy", L.context_in_place,
                copied.context);
  }
  const std::size_t rep_size = B * h * T * d_k, distinct = B * h_kv * T * d_k;  // numbers per role
  if (groups > 1)
    s.note("The copy holds " + std::to_string(rep_size) + " numbers per role where " + std::to_string(distinct) +
           " are distinct: each kv head appears " + G +
           " times in a row. Core instead multiplies the " + G + " adjacent query heads of a group, one (" +
           std::to_string(groups * T) + ", " + DK + ") block, against their kv head directly.");
  else
    s.note("With h_kv = h, repeat_interleave(1, dim=1) copies nothing new: k_rep is k_heads, " +
           std::to_string(rep_size) + " numbers, one kv head per query head.");
}

void stage_attention(const GqaLesson& L, report::Report& out) {
  const std::size_t h = L.h, h_kv = L.h_kv, groups = L.groups;
  const std::string& Wo = L.names.output;
  const report::Labels &tok = L.tok, &cols = L.cols;
  const bool values = L.values;
  const Held<Ten4>& attn_weights = L.attn_weights;  // (B, h, T, T)
  auto& s = out.stage("Causal attention and the output projection",
                      "attn_weights = softmax(attn_scores.masked_fill(mask, -inf) / sqrt(d_k), dim=-1)\n"
                      "output = (attn_weights @ v_rep).transpose(1, 2).reshape(B, T, h*d_k) @ " + Wo + ".weight^T");
  s.in("q_heads", L.q_heads).in("k_rep", L.k_rep);
  s.show("attn_scores", L.attn_scores, tok, cols).detail();  // attn_weights below, after the mask and softmax
  s.show("attn_weights", attn_weights, tok, cols);
  if (values) check_rows_sum_to_one(s, "attn_weights", *attn_weights);
  s.show("context", L.context, tok);
  s.show("output", L.output, tok);
  double worst = 0.0;  // largest difference between two query heads sharing a kv head
  if (values && groups > 1)
    for (std::size_t i = 1; i < h; ++i)
      if (kv_head_of(i, h, h_kv) == kv_head_of(i - 1, h, h_kv)) {
        const auto a = xt::view(*attn_weights, xt::all(), i, xt::all(), xt::all());
        const auto b = xt::view(*attn_weights, xt::all(), i - 1, xt::all(), xt::all());
        worst = std::fmax(worst, static_cast<double>(xt::amax(xt::abs(a - b))()));
      }
  if (values && groups > 1)
    s.note("Query heads that share keys still weigh them differently: their own queries differ. The largest "
           "difference between the weights of two neighbouring heads in one group is " +
           report::fixed(worst, 4) + ".");
}

// h_kv = h: an MHA layer whose key/value weights are this layer's, one copy per query head.
void stage_mha_and_mqa(const GqaLesson& L, report::Report& out) {
  const std::size_t h = L.h, h_kv = L.h_kv, d_k = L.d_k, d_in = L.d_in;
  const std::string& Wk = L.names.key;
  const std::string H = std::to_string(h), DK = std::to_string(d_k);
  const GqaModel& m = L.m;
  const Ten3& x = L.in.x;  // (B, T, d_in)
  GqaModel mha = m;
  mha.kv_heads = h;
  if (L.values) {
    mha.W_key = expand_kv_weight(m.W_key, h, h_kv, d_k);      // weight (h * d_k, d_in)
    mha.W_value = expand_kv_weight(m.W_value, h, h_kv, d_k);  // weight (h * d_k, d_in)
  }
  auto& s = out.stage("h_kv = h is multi-head attention; h_kv = 1 is multi-query attention",
                      Wk + "_mha.weight = " + Wk + ".weight.view(h_kv, d_k, d_in).repeat_interleave(h // h_kv, dim=0)"
                      ".reshape(h*d_k, d_in)");
  s.in(Wk + ".weight", L.weight(m.W_key.weight, h_kv * d_k, d_in));
  s.show(Wk + "_mha.weight", L.weight(mha.W_key.weight, h * d_k, d_in)).detail();
  if (L.values) {
    const GqaForward f_mha = gqa_forward(mha, x, true);  // (B, T, d_in)
    // Ordinary multi-head attention, the heads lesson's route: split, attend per head, merge.
    const Ten4 q_plain = swap_token_head_axes(split_heads(linear(mha.W_query, x), h));  // (B, h, T, d_k)
    const Ten4 k_plain = swap_token_head_axes(split_heads(linear(mha.W_key, x), h));    // (B, h, T, d_k)
    const Ten4 v_plain = swap_token_head_axes(split_heads(linear(mha.W_value, x), h));  // (B, h, T, d_k)
    const Attention plain = scaled_dot_product_attention(q_plain, k_plain, v_plain, true);  // context (B, h, T, d_k)
    const Ten3 plain_out = linear(mha.out_proj, merge_heads(swap_token_head_axes(plain.context)));  // (B, T, d_in)
    check_close(s, "GQA run with h_kv = h equals ordinary multi-head attention (split, attend, merge)", f_mha.output,
                plain_out);
    check_close(s, "this GQA layer equals the multi-head layer whose key/value heads are its kv heads repeated",
                L.output_gqa, f_mha.output);
  }
  s.note("GQA is multi-head attention with tied key/value weights: the " + std::to_string(h) +
         "-head layer above has " + std::to_string(h * d_k) + " key rows but only " + std::to_string(h_kv * d_k) +
         " distinct ones. At the other end, --kv-heads 1 is multi-query attention (Shazeer 2019): " + Wk + " would be (" +
         DK + ", " + std::to_string(d_in) + ") and all " + H + " query heads would read one key/value head.");
}

// Needs only the sizes: the same with and without values.
void stage_kv_cache(const GqaLesson& L, report::Report& out) {
  const std::size_t h = L.h, h_kv = L.h_kv, d_k = L.d_k, d_in = L.d_in;
  const std::string& Wk = L.names.key;
  const std::string H = std::to_string(h), HKV = std::to_string(h_kv);
  const GqaModel& m = L.m;
  const LlamaSizes& L3 = llama_3_2_3b();  // Llama-3.2-3B's sizes, the ones heads --preset llama uses too
  const std::uint64_t context = L3.context;
  std::vector<std::vector<std::string>> rows;
  auto add = [&](const std::string& model, const std::string& kind, std::uint64_t layers, std::uint64_t kv,
                 std::uint64_t dk, std::uint64_t dtype, const std::string& dname, std::uint64_t mha_bytes,
                 bool long_context) {
    const std::uint64_t per = kv_cache_bytes_per_token(layers, kv, dk, dtype);
    rows.push_back({model, kind, std::to_string(kv), dname, with_commas(per),
                    long_context ? human_bytes(kv_cache_bytes(per, context)) : "-", ratio_text(mha_bytes, per)});
    return per;
  };
  // This lesson's layer: 1 layer, float32.
  const std::uint64_t here_mha = kv_cache_bytes_per_token(1, h, d_k, 4);
  add("this lesson (1 layer)", "MHA", 1, h, d_k, 4, "float32", here_mha, false);
  const std::uint64_t here_gqa =
      h_kv != h && h_kv != 1 ? add("this lesson (1 layer)", "GQA", 1, h_kv, d_k, 4, "float32", here_mha, false) : 0;
  add("this lesson (1 layer)", "MQA", 1, 1, d_k, 4, "float32", here_mha, false);
  // Llama-3.2-3B (presets.hpp): 28 layers, 24 query heads, 8 kv heads of 128, bf16.
  const std::string llama = "Llama-3.2-3B (" + std::to_string(L3.layers) + " layers)";
  const std::uint64_t llama_mha = kv_cache_bytes_per_token(L3.layers, L3.heads, L3.head_dim, L3.dtype_bytes);
  add(llama, "MHA", L3.layers, L3.heads, L3.head_dim, L3.dtype_bytes, "bf16", llama_mha, true);
  const std::uint64_t llama_gqa =
      add(llama, "GQA (real)", L3.layers, L3.kv_heads, L3.head_dim, L3.dtype_bytes, "bf16", llama_mha, true);
  const std::uint64_t llama_mqa = add(llama, "MQA", L3.layers, 1, L3.head_dim, L3.dtype_bytes, "bf16", llama_mha, true);

  auto& s = out.stage("What sharing buys: the KV cache",
                      "bytes per token = 2 (K and V) * layers * h_kv * d_k * bytes per number");
  s.table({"model", "attention", "kv heads", "dtype", "bytes per token", "cache at " + with_commas(context) + " tokens",
           "MHA / this"},
          rows);
  // 114,688 is the figure published for Llama-3.2-3B; the sizes above must give it.
  s.check("Llama-3.2-3B's GQA cache is 114,688 bytes per token (2 * " + std::to_string(L3.layers) + " * " +
              std::to_string(L3.kv_heads) + " * " + std::to_string(L3.head_dim) + " * " + std::to_string(L3.dtype_bytes) + ")",
          "|computed - 114,688|", std::fabs(static_cast<double>(llama_gqa) - 114688.0), Relation::AtMost, 0.0);
  s.check("sharing divides the cache by h / h_kv exactly: Llama's MHA needs " + std::to_string(L3.heads) + " / " +
              std::to_string(L3.kv_heads) + " = " + std::to_string(L3.heads / L3.kv_heads) + " times GQA's bytes",
          "|MHA - " + std::to_string(L3.heads / L3.kv_heads) + " * GQA| bytes",
          std::fabs(static_cast<double>(llama_mha) - static_cast<double>(L3.heads / L3.kv_heads) * static_cast<double>(llama_gqa)),
          Relation::AtMost, 0.0);
  // At Llama's sizes (--preset llama) this run's own W_key is Llama's k_proj: the table's row
  // must follow from the tensor, one layer in float32 scaled to every layer in bf16.
  const bool llama_sized = d_in == L3.hidden && h == L3.heads && h_kv == L3.kv_heads && d_k == L3.head_dim;
  if (llama_sized) {
    // W_key.weight's rows, read from the tensor when it was drawn or loaded.
    const std::size_t key_rows = m.W_key.weight.size() ? m.W_key.weight.shape()[0] : h_kv * d_k;
    const double from_tensor = 2.0 * static_cast<double>(key_rows) * 4.0;  // K and V, float32
    s.check("this layer is Llama-3.2-3B's: 2 * " + Wk + ".weight's " + std::to_string(key_rows) +
                " rows * 4 bytes (float32), times " + std::to_string(L3.layers) + " layers in bf16, is the GQA row",
            "|scaled - GQA row| bytes",
            std::fabs(from_tensor * static_cast<double>(L3.layers) * static_cast<double>(L3.dtype_bytes) / 4.0 -
                      static_cast<double>(llama_gqa)),
            Relation::AtMost, 0.0);
  }
  const std::uint64_t full_gqa = kv_cache_bytes(llama_gqa, context), full_mha = kv_cache_bytes(llama_mha, context);
  s.note("At Llama-3.2-3B's full context of " + with_commas(context) + " tokens the GQA cache holds " +
         human_bytes(full_gqa) + " for one sequence; with a key/value head per query head it would hold " +
         human_bytes(full_mha) + ", " + human_bytes(full_mha - full_gqa) + " more; with a single one (MQA) " +
         human_bytes(kv_cache_bytes(llama_mqa, context)) + ". Its k_proj is Linear(" + std::to_string(L3.hidden) +
         " -> " + std::to_string(L3.kv_heads * L3.head_dim) + "): " + std::to_string(L3.kv_heads) + " kv heads of " +
         std::to_string(L3.head_dim) + ".");
  s.note(std::string(llama_sized ? "Here, one layer in float32: " : "Here the layer is tiny: ") + with_commas(here_mha) + " bytes per token for MHA" +
         (here_gqa ? ", " + with_commas(here_gqa) + " for GQA with " + HKV + " kv heads" : std::string()) + ", " +
         with_commas(kv_cache_bytes_per_token(1, 1, d_k, 4)) +
         " for MQA. The cache shrinks by the same factor h / h_kv at every size; the queries, and so the number of "
         "attention patterns, stay at " + H + ".");
}

}  // namespace

// The lesson reads as its table of contents: one function per stage, in the order they print.
void lesson_gqa(const LessonOptions& opts, report::Report& out) {
  const GqaLesson L(opts, out);
  stage_inputs(L, out);
  stage_projections(L, out);
  stage_split_heads(L, out);
  stage_repeat_copy(L, out);
  stage_attention(L, out);
  stage_mha_and_mqa(L, out);
  stage_kv_cache(L, out);
}

// Teaching order 660: after heads (600), before scaling (700); docs/gqa.md is its page.
ATTN_REGISTER_LESSON({660, "gqa", "Grouped-query attention: from multi-head to multi-query",
                      "h query heads share h_kv key/value heads; the repeat_interleave copy; the KV cache it shrinks",
                      "Ainslie et al. 2023, GQA; the Llama-3.2-3B attention block",
                      kSeed | kBatch | kSeqLen | kDIn | kHeads | kKvHeads | kTokens | kInput | kWeights, lesson_gqa,
                      {kHeadWidthOption},
                      // --weights DIR: the four bias-free layers (a bias file is refused, not half used).
                      {"W_query", "W_key", "W_value", "out_proj"}});

}  // namespace attn
