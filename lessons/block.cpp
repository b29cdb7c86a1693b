// Lesson: one Llama-style decoder layer and the model's head, at toy size (Hugging Face
// transformers' LlamaDecoderLayer and LlamaForCausalLM; Llama-3.2-3B's architecture).
//
// The bridge from the lessons to `attn model`: a one-layer Llama built from the same core code
// that runs real checkpoints (core/decoder_model: llama_forward with a trace), with seeded random
// weights, every intermediate printed. Token ids go through nn.Embedding; RMSNorm
// (input_layernorm); q, k, v projections with grouped key/value heads; RoPE in Hugging Face's
// rotate_half layout; scores, the causal mask, softmax; o_proj and the first residual;
// post_attention_layernorm and the SwiGLU MLP; the second residual; the final norm; logits from
// the head tied to the embedding (as Llama-3.2-1B and 3B); the next token. The checks hold the
// traced pass to the fast path a real model takes, and each printed step to its definition.
//
// Legend: B batch (1), T tokens, V vocabulary, d hidden size, h query heads, h_kv key/value
// heads, hd = d / h head width, P = hd / 2 RoPE pairs, f = 2d the MLP's width.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include "core/activation.hpp"
#include "core/decoder_model.hpp"
#include "core/generator.hpp"
#include "core/gqa.hpp"
#include "core/heads.hpp"
#include "core/linear.hpp"
#include "core/mlp.hpp"
#include "core/rope.hpp"
#include "core/softmax.hpp"
#include "lesson_kit/checks.hpp"
#include "lesson_kit/inputs.hpp"
#include "lesson_kit/presets.hpp"
#include "lesson_kit/recipe.hpp"
#include "lesson_kit/registry.hpp"

namespace attn {
namespace {

constexpr float kRmsEps = 1e-5f;                  // rms_norm_eps of Llama 3
constexpr float kNormLo = 0.5f, kNormHi = 1.5f;   // the norms' weights, drawn U(0.5, 1.5)
constexpr std::size_t kTopK = 3;

// The toy vocabulary: token id i is word i.
const std::vector<std::string>& vocabulary() {
  static const std::vector<std::string> words = {"Your", "journey", "starts", "with", "one", "step", "."};
  return words;
}

using report::f4;  // report/numbers.hpp

// A turning rate: 4 decimals, or 3 significant digits below 0.001.
std::string rate(double v) { return v >= 1e-3 ? report::fixed(v, 4) : report::scientific(v, 2); }

// Root mean square of every row of a (B, T, n) tensor's last axis, in double: (B * T,).
std::vector<double> row_rms(const Ten3& t) {
  const std::size_t n = t.shape()[2], rows = t.size() / n;
  std::vector<double> out(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    double s = 0.0;
    for (std::size_t j = 0; j < n; ++j) s += static_cast<double>(t.data()[r * n + j]) * t.data()[r * n + j];
    out[r] = std::sqrt(s / static_cast<double>(n));
  }
  return out;
}

// Root mean square of every value of a tensor, in double.
template <class E>
double rms_all(const E& t) {
  double s = 0.0;
  for (float v : t) s += static_cast<double>(v) * v;
  return std::sqrt(s / static_cast<double>(std::max<std::size_t>(1, t.size())));
}

// Length of every (B, h, T) row of a (B, h, T, n) tensor, in double.
std::vector<double> row_lengths(const Ten4& t) {
  const std::size_t n = t.shape()[3], rows = t.size() / n;
  std::vector<double> out(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    double s = 0.0;
    for (std::size_t j = 0; j < n; ++j) s += static_cast<double>(t.data()[r * n + j]) * t.data()[r * n + j];
    out[r] = std::sqrt(s);
  }
  return out;
}

double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double e = std::fabs(a[i] - b[i]);
    if (std::isnan(e)) return e;
    worst = std::fmax(worst, e);
  }
  return worst;
}

// Index of the largest of n values (the first on a tie).
std::size_t argmax(const float* v, std::size_t n) {
  return static_cast<std::size_t>(std::max_element(v, v + n) - v);
}

// What the stages share: the sizes, the prompt, the model, and its pass traced and fast.
struct BlockLesson {
  std::uint64_t seed = 0;
  std::size_t V = 0, B = 1, T = 0, d = 0, h = 0, hd = 0, h_kv = 0, f = 0, P = 0, groups = 0;
  float theta = 0.0f;
  std::string theta_text, vocab_line;
  Ids ids;             // (B, T)
  report::Labels tok;  // one word per position
  LlamaModel model;
  ModelTrace trace;    // the lessons' path: every intermediate kept
  Ten3 logits;         // (B, T, V)
  Ten3 logits_fast;    // (B, T, V): the fast path a real model runs
  RopeTables rope;     // cos, sin (T, hd)
  Attention att;       // scaled scores and weights (B, h, T, T), as the layer's softmax read them
  double rms_x = 0.0, rms_change = 0.0;  // of x, and of what the layer added to it
  const LlamaLayer& layer() const { return model.layers[0]; }
  const LayerTrace& lt() const { return trace.layers[0]; }
};

// The sizes, checked before anything is made, and the prompt: word t % V at position t.
BlockLesson sizes_and_prompt(const LessonOptions& opts) {
  BlockLesson r;
  r.seed = opts.seed.value_or(0);
  const std::vector<std::string>& vocab = vocabulary();
  const std::size_t V = r.V = vocab.size();
  const std::size_t B = r.B;
  const std::size_t T = r.T = size_option(opts.seq_len, 4, "--seq-len");
  const std::size_t d = r.d = size_option(opts.d_in, 8, "--d-in");
  const std::size_t h = r.h = size_option(opts.heads, 2, "--heads");
  if (d % h != 0)
    throw UsageError("--heads must divide --d-in", "--heads", "a divisor of " + std::to_string(d), std::to_string(h));
  const std::size_t hd = r.hd = d / h;  // head width
  if (hd % 2 != 0)
    throw UsageError("the head width --d-in / --heads must be even: RoPE rotates pairs of dimensions", "--heads",
                     "a divisor of " + std::to_string(d) + " leaving an even head width", std::to_string(h));
  const std::size_t h_kv = r.h_kv = size_option(opts.kv_heads, h % 2 == 0 ? h / 2 : h, "--kv-heads");
  if (h_kv > h || h % h_kv != 0)
    throw UsageError("--kv-heads must divide --heads", "--kv-heads", "a divisor of " + std::to_string(h),
                     std::to_string(h_kv));
  r.theta = static_cast<float>(opts.number("--rope-theta"));
  const std::size_t f = r.f = 2 * d;
  r.P = hd / 2;
  r.groups = h / h_kv;
  check_sizes({{"attn_scores", {B, h, T, T}, "--heads, --seq-len"},
               {"hidden", {B, T, f}, "--seq-len, --d-in"},
               {"gate_proj.weight", {f, d}, "--d-in"},
               {"logits", {B, T, V}, "--seq-len"}},
              opts.shapes_only, /*values_optional=*/false);
  // All together, the lesson's own tensors and the report's (measured at each limit alone,
  // docs/testing.md): seven (d, d)-sized weights and their copies, the layer's (T, d) activations.
  values_within_held("block at these sizes",
                     held_bytes(opts, {{8, {B, h, T, T}}, {33, {d, d}}, {57, {B, T, d}}, {2, {B, T, V}}}),
                     opts.shapes_only, /*values_optional=*/false, /*skips_values=*/false, "--seq-len, --d-in, --heads");

  r.ids = xt::zeros<std::size_t>({B, T});  // (B, T)
  for (std::size_t t = 0; t < T; ++t) {
    r.ids(0, t) = t % V;
    r.tok.push_back(vocab[t % V]);
  }
  for (std::size_t v = 0; v < V; ++v) r.vocab_line += (v ? " " : "") + vocab[v];
  r.theta_text = r.theta == std::floor(r.theta) ? std::to_string(static_cast<long long>(r.theta))
                                                : recipe::float_literal(r.theta);
  return r;
}

// The model, drawn in the order the reproduce lines construct it; `steps` records each draw.
LlamaModel draw_model(const BlockLesson& r, recipe::Recipe& steps) {
  const std::size_t V = r.V, d = r.d, h = r.h, h_kv = r.h_kv, hd = r.hd, f = r.f;
  TorchGenerator gen(r.seed);
  steps.seed(gen, r.seed);
  LlamaModel model;
  LlamaLayer layer;
  layer.heads = h;
  layer.kv_heads = h_kv;
  auto draw_norm = [&](const std::string& name) {
    RmsNorm n;
    n.eps = kRmsEps;
    n.weight = xt::empty<float>({d});  // (d,)
    gen.uniform_(n.weight.data(), d, kNormLo, kNormHi);
    steps.add(recipe::Uniform{name, d, kNormLo, kNormHi});
    return n;
  };
  auto draw_linear = [&](const std::string& name, std::size_t in, std::size_t out_w) {
    steps.add(recipe::Linear{name, in, out_w, false});
    return make_linear(gen, in, out_w, false);  // weight (out, in)
  };
  model.embed_tokens = gen.randn(V, d);  // (V, d): nn.Embedding's normal_
  steps.add(recipe::Embedding{"embed_tokens", V, d});
  layer.input_layernorm = draw_norm("input_layernorm");
  layer.q_proj = draw_linear("q_proj", d, h * hd);     // weight (h * hd, d)
  layer.k_proj = draw_linear("k_proj", d, h_kv * hd);  // weight (h_kv * hd, d)
  layer.v_proj = draw_linear("v_proj", d, h_kv * hd);  // weight (h_kv * hd, d)
  layer.o_proj = draw_linear("o_proj", h * hd, d);     // weight (d, h * hd)
  layer.post_attention_layernorm = draw_norm("post_attention_layernorm");
  layer.mlp.gate_proj = draw_linear("gate_proj", d, f);  // weight (f, d)
  layer.mlp.up_proj = draw_linear("up_proj", d, f);      // weight (f, d)
  layer.mlp.down_proj = draw_linear("down_proj", f, d);  // weight (d, f)
  model.norm = draw_norm("norm");
  model.layers.push_back(layer);
  model.inv_freq = rope_inv_freq(hd, r.theta);  // (P,)
  steps.add(recipe::Ids{"ids", {r.B, r.T}, std::vector<std::size_t>(r.ids.begin(), r.ids.end())});
  steps.add(recipe::Comment{"token id i is word i of: " + r.vocab_line});
  steps.add(recipe::Comment{"lm_head is embed_tokens.weight (tied); the forward pass: docs/block.md"});
  return model;
}

// The whole pass, the lessons' path (every intermediate kept), then the fast path a real model
// runs; the scores the layer's softmax read (the same call the layer made, on its q, k, v).
void forward(BlockLesson& r) {
  r.logits = llama_forward(r.model, r.ids, &r.trace);                           // (B, T, V)
  r.logits_fast = llama_forward(r.model, r.ids);                                // (B, T, V)
  r.rope = rope_tables_from_inv_freq(r.model.inv_freq, r.T, 0, r.theta);        // cos, sin (T, hd)
  r.att = grouped_query_attention(r.lt().q, r.lt().k, r.lt().v, true);          // scaled (B, h, T, T)
  r.rms_x = rms_all(r.trace.embeddings);
  r.rms_change = rms_all(Ten3(r.lt().output - r.trace.embeddings));             // (B, T, d)
}

// Sizes, model, pass and header: everything before the first stage.
BlockLesson setup(const LessonOptions& opts, report::Report& out) {
  BlockLesson r = sizes_and_prompt(opts);
  recipe::Recipe steps;
  r.model = draw_model(r, steps);
  forward(r);
  out.header = {"block", "One Llama decoder layer and the model's head",
                "Hugging Face's LlamaForCausalLM (Llama-3.2-3B), one layer at toy size",
                {"seed " + std::to_string(r.seed), "tokens " + std::to_string(r.T), "vocab " + std::to_string(r.V),
                 "d " + std::to_string(r.d), "heads " + std::to_string(r.h), "kv_heads " + std::to_string(r.h_kv),
                 "head_dim " + std::to_string(r.hd), "mlp " + std::to_string(r.f), "rope_theta " + r.theta_text,
                 "rms_eps 1e-05", "tied True"},
                steps.lines()};
  return r;
}

void stage_tokens(const BlockLesson& r, report::Report& out) {
  const std::size_t B = r.B, T = r.T, d = r.d;
  const report::Labels& tok = r.tok;
  const Ids& ids = r.ids;
  const LlamaModel& model = r.model;
  const ModelTrace& trace = r.trace;
  const std::string& vocab_line = r.vocab_line;
  auto& s = out.stage("Tokens and their embeddings",
                      "x = embed_tokens(ids)   # embed_tokens = nn.Embedding(V, d): row ids[b, t] of its weight");
  s.in_shape("ids", {B, T});
  s.keep("embed_tokens.weight", model.embed_tokens);
  s.show("x", trace.embeddings, tok);
  std::string id_list;
  for (std::size_t t = 0; t < T; ++t) id_list += (t ? ", " : "") + std::to_string(ids(0, t));
  s.note("ids = [[" + id_list + "]]: id i is word i of the vocabulary (" + vocab_line +
         "). Its embeddings, the rows of embed_tokens.weight, are drawn N(0, 1) as nn.Embedding draws them; "
         "like every weight here they are untrained, so the numbers mean nothing yet.");
  double worst = 0.0;
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t j = 0; j < d; ++j)
      worst = std::fmax(worst, std::fabs(static_cast<double>(trace.embeddings(0, t, j)) - model.embed_tokens(ids(0, t), j)));
  s.check("each row of x is a copy of its token's row of embed_tokens.weight", "max |diff|", worst, Relation::AtMost,
          0.0);
}

void stage_input_norm(const BlockLesson& r, report::Report& out) {
  const std::size_t T = r.T, d = r.d;
  const report::Labels& tok = r.tok;
  const ModelTrace& trace = r.trace;
  const LlamaLayer& L = r.layer();
  const LayerTrace& lt = r.lt();
  auto& s = out.stage("input_layernorm: RMSNorm before attention",
                      "a = x / sqrt(mean(x^2, dim=-1, keepdim=True) + eps) * input_layernorm   # eps = 1e-05");
  s.in("x", trace.embeddings);
  s.show("input_layernorm", L.input_layernorm.weight).detail();  // a learned scale per dimension
  s.show("a", lt.normed, tok);
  const std::vector<double> before = row_rms(trace.embeddings);
  const auto lo = std::min_element(before.begin(), before.end()) - before.begin();
  const auto hi = std::max_element(before.begin(), before.end()) - before.begin();
  s.note("The rows of x have root mean squares from " + f4(before[lo]) + " (" + tok[lo] + ") to " + f4(before[hi]) +
         " (" + tok[hi] + "). Each row is divided by its own, then dimension j is scaled by input_layernorm[j]. "
         "No mean is subtracted and no bias added, unlike LayerNorm.");
  // a / w should have rms sqrt(ms / (ms + eps)) per row: 1, less what eps takes.
  Ten3 unweighted = lt.normed;  // (B, T, d)
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t j = 0; j < d; ++j) unweighted(0, t, j) /= L.input_layernorm.weight(j);
  const std::vector<double> after = row_rms(unweighted);
  std::vector<double> expected(T);
  for (std::size_t t = 0; t < T; ++t) {
    const double ms = before[t] * before[t];
    expected[t] = std::sqrt(ms / (ms + static_cast<double>(kRmsEps)));
  }
  s.check("every row of a / input_layernorm has root mean square 1, less what eps takes",
          "max |rms - sqrt(ms / (ms + eps))|", max_diff(after, expected), Relation::AtMost, 1e-6);
}

void stage_qkv_rope(const BlockLesson& r, report::Report& out) {
  const std::size_t h = r.h, h_kv = r.h_kv, P = r.P, groups = r.groups;
  const report::Labels& tok = r.tok;
  const LlamaModel& model = r.model;
  const LlamaLayer& L = r.layer();
  const LayerTrace& lt = r.lt();
  const RopeTables& rope = r.rope;
  const std::string& theta_text = r.theta_text;
  const std::string H = std::to_string(r.h);
  const std::string HKV = std::to_string(r.h_kv);
  const std::string HD = std::to_string(r.hd);
  // q and k before RoPE, as the projections give them: (B, T, h * hd) -> (B, h, T, hd).
  const Ten4 q_plain = swap_token_head_axes(split_heads(linear(L.q_proj, lt.normed), h));     // (B, h, T, hd)
  const Ten4 k_plain = swap_token_head_axes(split_heads(linear(L.k_proj, lt.normed), h_kv));  // (B, h_kv, T, hd)
  auto& s = out.stage("q, k, v in grouped heads, and RoPE on q and k",
                      "q = q_proj(a).view(B, T, h, hd).transpose(1, 2)      # q_proj = nn.Linear(d, h*hd)\n"
                      "k = k_proj(a).view(B, T, h_kv, hd).transpose(1, 2)   # k_proj, v_proj = nn.Linear(d, h_kv*hd)\n"
                      "angles[t, i] = t * theta^(-2i / hd); cos, sin = cat(angles, angles).cos(), .sin()\n"
                      "q = q * cos + rotate_half(q) * sin   # rotate_half(q) = cat(-q[..., hd/2:], q[..., :hd/2])");
  s.in("a", lt.normed);
  s.keep("q_proj.weight", L.q_proj.weight).keep("k_proj.weight", L.k_proj.weight);
  s.keep("v_proj.weight", L.v_proj.weight);
  s.keep("q_before_rope", q_plain).keep("k_before_rope", k_plain);
  s.show("angles", rope.angles, tok).detail();  // the note gives each pair's angle per token
  s.show("q", lt.q, tok).show("k", lt.k, tok).show("v", lt.v, tok).detail();  // v as RoPE leaves it
  const std::string reads =
      groups == 1 ? "each query head has a key/value head of its own: ordinary multi-head attention"
      : h_kv == 1 ? (h == 2 ? std::string("both query heads") : "all " + H + " query heads") +
                        " read the same one: multi-query attention"
                  : "each key/value head serves " + std::to_string(groups) +
                        " neighbouring query heads: grouped-query attention";
  s.note(H + " query heads and " + HKV + " key/value " + (h_kv == 1 ? "head" : "heads") + " of " + HD +
         ", no biases; " + reads + ".");
  std::string turns;
  for (std::size_t i = 0; i < P; ++i)
    turns += (i ? (i + 1 == P ? " and " : ", ") : "") + rate(model.inv_freq(i));
  s.note("RoPE pairs dimension i with i + " + std::to_string(P) + " (rotate_half) and turns q and k, not v, by " +
         (P == 1 ? std::string("1 radian per token (with one pair theta plays no part).")
                 : "angles growing with the position: " + turns + " radians per token for the " +
                       std::to_string(P) + " pairs (theta " + theta_text + ")."));
  std::vector<double> turned = row_lengths(lt.q), plain = row_lengths(q_plain);
  for (double v : row_lengths(lt.k)) turned.push_back(v);
  for (double v : row_lengths(k_plain)) plain.push_back(v);
  s.check("turning keeps the length of every row of q and k", "max | |turned| - |before| |", max_diff(turned, plain),
          Relation::AtMost, 1e-5 * std::max(1.0, *std::max_element(plain.begin(), plain.end())));
  const Ten4 q0 = xt::view(lt.q, xt::all(), xt::all(), xt::range(0, 1), xt::all());          // (B, h, 1, hd)
  const Ten4 q0_plain = xt::view(q_plain, xt::all(), xt::all(), xt::range(0, 1), xt::all());  // (B, h, 1, hd)
  check_identical(s, "position 0 is not turned (angle 0: cos 1, sin 0)", q0, q0_plain);
}

void stage_scores(const BlockLesson& r, report::Report& out) {
  const std::size_t T = r.T;
  const report::Labels& tok = r.tok;
  const LayerTrace& lt = r.lt();
  const Attention& att = r.att;
  auto& s = out.stage("Scores and the causal mask",
                      "attn_scores = q @ k.transpose(2, 3) * hd^-0.5   # query head i against kv head i // (h / h_kv)\n"
                      "attn_scores = attn_scores.masked_fill(torch.triu(torch.ones(T, T), 1).bool(), -inf)");
  s.in("q", lt.q).in("k", lt.k);
  s.show("attn_scores", att.scaled, tok, tok);
  s.note(std::to_string(T * (T - 1) / 2) + " of each head's " + std::to_string(T * T) +
         " scores are a token's future, set to -inf: softmax gives them weight exactly 0. Hugging Face fills "
         "float32's lowest value instead, which gives the same weights here.");
}

void stage_softmax(const BlockLesson& r, report::Report& out) {
  const std::size_t T = r.T, h = r.h;
  const report::Labels& tok = r.tok;
  const LayerTrace& lt = r.lt();
  const Attention& att = r.att;
  const report::Training untrained = report::Training::untrained();
  auto& s = out.stage("Softmax: the attention weights, and the context",
                      "attn_weights = softmax(attn_scores, dim=-1)   # outputs.attentions[0]\n"
                      "context = (attn_weights @ v_rep).transpose(1, 2).reshape(B, T, h*hd)");
  s.in("attn_scores", att.scaled).in("v", lt.v);
  s.show("attn_weights", lt.attn_weights, tok, tok).attention_weights(untrained);
  check_rows_sum_to_one(s, "attn_weights", lt.attn_weights);
  check_identical(s, "the layer's own attn_weights are the softmax of the scores above", lt.attn_weights,
                  att.attn_weights);
  s.show("context", lt.context, tok);
  std::string most;
  for (std::size_t i = 0; i < h; ++i) {
    const float* row = &lt.attn_weights(0, i, T - 1, 0);
    const std::size_t j = argmax(row, T);
    most += (i ? (i + 1 == h ? " and " : ", ") : "") + ("head " + std::to_string(i) + " to " + tok[j] + " (" +
                                                          f4(row[j]) + ")");
  }
  s.note("The last token (" + tok[T - 1] + ") gives its largest weight in " + most + ".");
}

void stage_o_proj(const BlockLesson& r, report::Report& out) {
  const report::Labels& tok = r.tok;
  const ModelTrace& trace = r.trace;
  const LlamaLayer& L = r.layer();
  const LayerTrace& lt = r.lt();
  auto& s = out.stage("o_proj and the first residual", "residual = x + o_proj(context)   # o_proj = nn.Linear(h*hd, d)");
  s.in("context", lt.context).in("x", trace.embeddings);
  s.keep("o_proj.weight", L.o_proj.weight).keep("attn_out", lt.attn_out);
  s.show("residual", lt.residual, tok);
  s.note("Attention adds to x rather than replacing it: o_proj(context) has root mean square " +
         f4(rms_all(lt.attn_out)) + ", x " + f4(rms_all(trace.embeddings)) + ".");
}

void stage_mlp(const BlockLesson& r, report::Report& out) {
  const report::Labels& tok = r.tok;
  const LlamaLayer& L = r.layer();
  const LayerTrace& lt = r.lt();
  const std::string F = std::to_string(r.f);
  // The MLP step by step, as LlamaMLP writes it.
  const Ten3 gate = linear(L.mlp.gate_proj, lt.mlp_normed);  // (B, T, f)
  const Ten3 up = linear(L.mlp.up_proj, lt.mlp_normed);      // (B, T, f)
  const Ten3 act = silu(gate);                                // (B, T, f)
  const Ten3 hidden = act * up;                               // (B, T, f)
  auto& s = out.stage("post_attention_layernorm and the SwiGLU MLP",
                      "b = rms_norm(residual) * post_attention_layernorm   # as in stage 2\n"
                      "hidden = silu(gate_proj(b)) * up_proj(b)   # silu(z) = z * sigmoid(z); nn.Linear(d, f)\n"
                      "mlp_out = down_proj(hidden)                 # nn.Linear(f, d)");
  s.in("residual", lt.residual);
  s.show("post_attention_layernorm", L.post_attention_layernorm.weight).detail();
  s.keep("b", lt.mlp_normed);
  s.keep("gate_proj.weight", L.mlp.gate_proj.weight).keep("up_proj.weight", L.mlp.up_proj.weight);
  s.keep("down_proj.weight", L.mlp.down_proj.weight);
  s.show("hidden", hidden, tok).detail().show("mlp_out", lt.mlp_out, tok);  // hidden: the MLP's inside
  std::size_t negative = 0;
  float lowest = 0.0f;
  for (std::size_t i = 0; i < gate.size(); ++i)
    if (gate.data()[i] < 0) {
      ++negative;
      lowest = std::min(lowest, act.data()[i]);
    }
  s.note("The gate sets how much of each of the " + F + " up_proj features passes. " + std::to_string(negative) +
         " of the " + std::to_string(gate.size()) + " gate values are negative" +
         (negative ? ", and silu squeezes them into [" + f4(lowest) + ", 0]" : std::string()) +
         ". Llama-3.2-3B's MLP is 8192 wide for d = 3072; this one is 2d.");
  check_close(s, "down_proj(hidden) is the layer's mlp_out", linear(L.mlp.down_proj, hidden), lt.mlp_out);
}

void stage_output(const BlockLesson& r, report::Report& out) {
  const report::Labels& tok = r.tok;
  const ModelTrace& trace = r.trace;
  const LlamaLayer& L = r.layer();
  const LayerTrace& lt = r.lt();
  const RopeTables& rope = r.rope;
  const double rms_x = r.rms_x;
  const double rms_change = r.rms_change;
  auto& s = out.stage("The second residual: the layer's output", "output = residual + mlp_out");
  s.in("residual", lt.residual).in("mlp_out", lt.mlp_out);
  s.show("output", lt.output, tok);
  s.note("The layer's two additions change x by a root mean square of " + f4(rms_change) + " (x: " + f4(rms_x) +
         "). Llama-3.2-3B stacks 28 such layers on the same stream.");
  const Ten3 fast = llama_layer_forward(L, trace.embeddings, rope);  // (B, T, d)
  check_close(s, "the layer without the (T, T) weights, as attn model runs it, gives the same output", fast,
              lt.output);
}

void stage_logits(const BlockLesson& r, report::Report& out) {
  const std::vector<std::string>& vocab = vocabulary();
  const report::Labels& tok = r.tok;
  const LlamaModel& model = r.model;
  const ModelTrace& trace = r.trace;
  const LayerTrace& lt = r.lt();
  const Ten3& logits = r.logits;  // (B, T, V)
  const Ten3& logits_fast = r.logits_fast;  // (B, T, V)
  auto& s = out.stage("Final norm and the logits",
                      "hidden_states = rms_norm(output) * norm\n"
                      "logits = hidden_states @ embed_tokens.weight^T   # the head tied to the embedding");
  s.in("output", lt.output);
  s.show("norm", model.norm.weight).detail();
  s.keep("hidden_states", trace.final_hidden);
  s.show("logits", logits, tok, vocab);
  s.note("Logit v is the final hidden state's dot product with word v's embedding: the head is embed_tokens.weight "
         "itself, as in Llama-3.2-1B and 3B.");
  check_close(s, "the whole model run as attn model runs it (no (T, T) weights kept) gives the same logits",
              logits_fast, logits);
}

void stage_next_token(const BlockLesson& r, report::Report& out) {
  const std::size_t V = r.V, T = r.T;
  const std::vector<std::string>& vocab = vocabulary();
  const report::Labels& tok = r.tok;
  const Ids& ids = r.ids;
  const Ten3& logits = r.logits;  // (B, T, V)
  const double rms_x = r.rms_x;
  const double rms_change = r.rms_change;
  Mat probs = xt::view(logits, 0, xt::all(), xt::all());  // (T, V)
  probs = softmax_rows(probs);                            // (T, V)
  const float* last = &probs(T - 1, 0);
  std::vector<std::size_t> order(V);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return last[a] > last[b]; });
  std::vector<std::vector<std::string>> top;
  for (std::size_t rank = 0; rank < std::min(kTopK, V); ++rank)
    top.push_back({std::to_string(rank + 1), vocab[order[rank]], std::to_string(order[rank]),
                   f4(logits(0, T - 1, order[rank])), f4(last[order[rank]])});
  std::vector<std::vector<std::string>> each;
  std::size_t own = 0;
  for (std::size_t t = 0; t < T; ++t) {
    const std::size_t p = argmax(&probs(t, 0), V);
    own += p == ids(0, t);
    each.push_back({std::to_string(t), tok[t], vocab[p], f4(probs(t, p))});
  }
  auto& s = out.stage("The next token",
                      "probs = softmax(logits[0, -1], dim=-1); probs.topk(3)   # and logits[0].argmax(-1)");
  s.in("logits", logits);
  s.table({"rank", "next token", "id", "logit", "probability"}, top);
  Vec last_probs = xt::view(probs, T - 1, xt::all());  // (V,)
  check_rows_sum_to_one(s, "probs", last_probs);
  s.table({"position", "token", "predicts", "probability"}, each);
  std::string note = "Row t of the logits guesses token t + 1, every row from one pass (how training scores "
                     "them all at once).";
  if (own > 0)
    note += " " + std::to_string(own) + " of the " + std::to_string(T) +
            " positions pick their own token: the head is tied to the embedding and the stream still carries "
            "x (changed by " + f4(rms_change) + " against " + f4(rms_x) + "). Training moves the choice on.";
  s.note(note);
}

}  // namespace

// The lesson as its table of contents: the layer in the order it runs, then the model's head.
void lesson_block(const LessonOptions& opts, report::Report& out) {
  const BlockLesson r = setup(opts, out);
  stage_tokens(r, out);
  stage_input_norm(r, out);
  stage_qkv_rope(r, out);
  stage_scores(r, out);
  stage_softmax(r, out);
  stage_o_proj(r, out);
  stage_mlp(r, out);
  stage_output(r, out);
  stage_logits(r, out);
  stage_next_token(r, out);
}

// Teaching order 750: after the modern lessons (rope 650 ... flash 680) and scaling (700), before
// the trained learn-heads (780); docs/block.md is its page.
ATTN_REGISTER_LESSON({750, "block", "One Llama decoder layer and the model's head",
                      "a toy Llama: embedding, RMSNorm, grouped heads with RoPE, SwiGLU, residuals, logits, "
                      "next token",
                      "Hugging Face transformers' LlamaDecoderLayer and LlamaForCausalLM; Llama-3.2-3B",
                      kSeed | kSeqLen | kDIn | kHeads | kKvHeads, lesson_block,
                      {{"--rope-theta", OptionType::Real, 2, 1e9, 500000, "RoPE base (Llama 3: 500000)"}}});

}  // namespace attn
