// Lesson: rotary position embeddings (RoPE; Su et al. 2021, RoFormer; Llama's Hugging Face
// implementation, LlamaRotaryEmbedding and rotate_half).
//
// Instead of adding a position vector to x, RoPE rotates every query and key, pair of dimensions
// by pair of dimensions, by an angle proportional to the token's position. A rotation by the
// query's position followed by the inverse rotation by the key's position is a rotation by their
// difference, so q_rope . k_rope depends on the distance between the tokens, not on where the
// sequence starts. The lesson measures that (shift every position, compare the scores) and the
// other promises: rotations keep lengths, and the two conventions (Llama's rotate_half pairs
// (i, i + d_k/2), RoFormer / GPT-J pairs (2i, 2i + 1)) differ only by a permutation.
//
// With --batch or --heads, q and k are (B, h, T, d_k), one (T, d_k) matrix per batch entry and
// head, as a model holds them (and as the PyTorch fixture tests/data/rope__* draws them); every
// head is turned by the same tables, because the angle depends on the position only.
//
// Legend: B batch, h heads, T tokens, d_k head width (even), P = d_k / 2 pairs, s the shift of
// every position.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include "core/generator.hpp"
#include "core/matmul.hpp"
#include "core/rope.hpp"
#include "lesson_kit/checks.hpp"
#include "lesson_kit/inputs.hpp"
#include "lesson_kit/recipe.hpp"
#include "lesson_kit/registry.hpp"

namespace attn {
namespace {

using report::Held;
using report::hold;

constexpr double kPi = 3.14159265358979323846;

// Every row of (B, h, T, d) as one (B * h * T, d) matrix, for the per-row norms.
Mat rows_of(const Ten4& t) {
  Mat out = xt::empty<float>({t.shape()[0] * t.shape()[1] * t.shape()[2], t.shape()[3]});  // (B * h * T, d)
  std::copy(t.begin(), t.end(), out.begin());
  return out;
}

// Position p of every (batch, head): (B, h, T, d) -> (B, h, 1, d).
Ten4 at_position(const Ten4& t, std::size_t p) {
  return xt::view(t, xt::all(), xt::all(), xt::range(p, p + 1), xt::all());  // (B, h, 1, d)
}

// Euclidean length of every row: (T, d) -> (T,)
Vec row_norms(const Mat& m) {
  Vec out = xt::zeros<float>({m.shape()[0]});  // (T,)
  for (std::size_t r = 0; r < m.shape()[0]; ++r) {
    double s = 0.0;
    for (std::size_t c = 0; c < m.shape()[1]; ++c) s += static_cast<double>(m(r, c)) * m(r, c);
    out(r) = static_cast<float>(std::sqrt(s));
  }
  return out;
}

// A bound rounded up to one significant digit, so it reads as a bound.
double round_up(double raw) {
  if (!(raw > 0.0)) return raw;
  const double unit = std::pow(10.0, std::floor(std::log10(raw)));
  return std::ceil(raw / unit) * unit;
}

// theta as the reproduce lines and the setting write it: an integral value as its exact digits
// ("10000", "500000"), any other as the shortest literal Python turns back into the same float32.
std::string theta_literal(float theta) {
  if (theta == std::floor(theta) && theta < 1e15f) return std::to_string(static_cast<long long>(theta));
  return recipe::float_literal(theta);
}

std::string f(double v, int decimals) { return report::fixed(v, decimals); }

// What the stages share: the sizes, the labels, q and k, the tables, the rotated q and k and
// their scores. Each stage makes what it adds, in the lesson's order, so a run holds what it held
// before at every point. With `values` false (a --shapes-only run whose tensors are too large to
// print, alone or together: check_sizes) nothing is computed and every Held holds its shape
// alone; the stages branch only where a check or a sentence needs the numbers.
struct RopeLesson {
  std::uint64_t seed;
  std::size_t T, d_k, P;
  float theta;
  std::size_t shift;
  bool heads_view;  // --batch or --heads: q and k as (B, h, T, d_k); neither: one (T, d_k) matrix, B = h = 1
  std::size_t B, H;
  bool values;
  Shape qk_shape, scores_shape;
  report::Labels tok;         // the book's tokens, then tok7, tok8, ... (the position is the row index 0..T-1)
  report::Labels pos_labels;  // "pos 0", "pos 1", ... for the tables
  Held<Ten4> q4, k4;          // (B, h, T, d_k)
  Vec inv_freq;               // (P,): needs only d_k and theta
  RopeTables tab;             // inv_freq (P,), angles (T, P), cos / sin (T, d_k); made when the run computes values
  Held<Ten4> q_half, q_rope, k_rope;  // (B, h, T, d_k)
  Held<Ten4> scores;                  // (B, h, T, T)

  RopeLesson(const LessonOptions& opts, report::Report& out);

  // A (B, h, T, n) tensor as the lesson shows it: whole when --batch or --heads was given, else
  // as its one (T, n) matrix (then B = h = 1, so the values are the same, in the same order).
  Shape shown_shape(const Shape& t) const { return heads_view ? t : Shape{t[2], t[3]}; }
  report::Stage& show4(report::Stage& s, const std::string& name, const Held<Ten4>& t, report::Labels rows = {},
                       report::Labels cols = {}) const {
    return s.show_shared(name, shown_shape(t.shape()), t.shared(), t.computed() ? t->data() : nullptr, std::move(rows),
                         std::move(cols));
  }
  report::Stage& in4(report::Stage& s, const std::string& name, const Held<Ten4>& t) const {
    return s.in_shape(name, shown_shape(t.shape()));
  }
};

RopeLesson::RopeLesson(const LessonOptions& opts, report::Report& out)
    : seed(opts.seed.value_or(0)), T(size_option(opts.seq_len, 6, "--seq-len")) {
  const std::int64_t d_k_in = opts.integer("--d-k");
  if (d_k_in % 2 != 0)
    throw UsageError("--d-k must be even: RoPE rotates pairs of dimensions", "--d-k", "an even number",
                     std::to_string(d_k_in));
  d_k = static_cast<std::size_t>(d_k_in);
  P = d_k / 2;
  theta = static_cast<float>(opts.number("--theta"));
  shift = static_cast<std::size_t>(opts.integer("--shift"));
  heads_view = opts.batch.has_value() || opts.heads.has_value();
  B = size_option(opts.batch, 1, "--batch"), H = size_option(opts.heads, 1, "--heads");
  values = check_sizes({{"q and k", {B, H, T, d_k}, "--batch, --heads, --seq-len, --d-k"},
                        {"scores", {B, H, T, T}, "--batch, --heads, --seq-len"},
                        {"scores_shifted", {B, H, T, T}, "--batch, --heads, --seq-len"}},
                       opts.shapes_only, /*values_optional=*/!out.keep_values);
  qk_shape = {B, H, T, d_k}, scores_shape = {B, H, T, T};
  for (std::size_t t = 0; t < T; ++t)
    tok.push_back(t < book_tokens().size() ? book_tokens()[t] : "tok" + std::to_string(t + 1));
  for (std::size_t t = 0; t < T; ++t) pos_labels.push_back("pos " + std::to_string(t));

  // Inputs: q and k uniform in [-1, 1), drawn as torch.rand(B, h, T, d_k) * 2 - 1 (or (T, d_k)):
  // the same stream either way, row after row. A run without values records the draws only.
  TorchGenerator gen(seed);
  recipe::Recipe steps;
  steps.seed(gen, seed);
  steps.add(recipe::Rand{"q", B * H * T, d_k});
  steps.add(recipe::Rand{"k", B * H * T, d_k});
  auto draw = [&] {
    Ten4 t = xt::empty<float>({B, H, T, d_k});                // (B, h, T, d_k)
    const Mat rows = gen.rand(B * H * T, d_k) * 2.0f - 1.0f;  // (B * h * T, d_k)
    std::copy(rows.begin(), rows.end(), t.begin());
    return t;
  };
  q4 = hold(values, qk_shape, draw);  // (B, h, T, d_k), drawn first
  k4 = hold(values, qk_shape, draw);  // (B, h, T, d_k)

  const std::string Ts = std::to_string(T), dks = std::to_string(d_k), Ps = std::to_string(P);
  const std::string dims = heads_view ? std::to_string(B) + ", " + std::to_string(H) + ", " + Ts + ", " + dks
                                      : Ts + ", " + dks;
  // The recipe renders torch.rand(rows, cols); with heads the draw is written with its four axes.
  std::vector<std::string> lines = {"import torch", "torch.manual_seed(" + std::to_string(seed) + ")",
                                    "q = torch.rand(" + dims + ")", "k = torch.rand(" + dims + ")"};
  if (!heads_view) lines = steps.lines();
  lines.push_back("q = q * 2 - 1; k = k * 2 - 1");
  lines.push_back("inv_freq = 1.0 / (" + theta_literal(theta) + " ** (torch.arange(0, " + dks + ", 2).float() / " + dks + "))");
  lines.push_back("angles = torch.outer(torch.arange(" + Ts + ").float(), inv_freq)");
  lines.push_back("emb = torch.cat((angles, angles), dim=-1); cos, sin = emb.cos(), emb.sin()");
  lines.push_back("rotate_half = lambda x: torch.cat((-x[..., " + Ps + ":], x[..., :" + Ps + "]), dim=-1)");
  lines.push_back("q_rope = q * cos + rotate_half(q) * sin; k_rope = k * cos + rotate_half(k) * sin");
  lines.push_back(heads_view ? "scores = q_rope @ k_rope.transpose(-2, -1)" : "scores = q_rope @ k_rope.T");
  std::vector<std::string> setting = {"seed " + std::to_string(seed)};
  if (heads_view) {
    setting.push_back("batch " + std::to_string(B));
    setting.push_back("heads " + std::to_string(H));
  }
  for (const std::string& item : {"T " + Ts, "d_k " + dks, "theta " + theta_literal(theta), "shift " + std::to_string(shift)})
    setting.push_back(item);
  out.header = {"rope", "Rotary position embeddings",
                "Su et al. 2021 (RoFormer); Llama's Hugging Face LlamaRotaryEmbedding", setting, lines};
}

void stage_queries_keys(const RopeLesson& L, report::Report& out) {
  const bool heads_view = L.heads_view;
  auto& s = out.stage("Queries and keys", heads_view ? "q = torch.rand(B, h, T, d_k) * 2 - 1;  k = torch.rand(B, h, T, d_k) * 2 - 1"
                                                     : "q = torch.rand(T, d_k) * 2 - 1;  k = torch.rand(T, d_k) * 2 - 1");
  L.show4(s, "q", L.q4, L.tok);
  L.show4(s, "k", L.k4, L.tok);
  s.note(std::string(heads_view ? "In a model q and k come out of W_query and W_key, split into heads"
                                : "In a model q and k come out of W_query and W_key for one head") +
         "; here they are drawn directly, uniform in [-1, 1), so that the lesson is about positions only. Row p" +
         (heads_view ? " of every (batch, head) block" : "") + " is the token at position p (0.." +
         std::to_string(L.T - 1) + ")." +
         (heads_view ? " Every head is turned by the same tables below: the angle depends on the position, not "
                       "on the head."
                     : ""));
  if (!L.values)
    s.note("--shapes-only at these sizes computes nothing: the stages below list names and shapes only, and the "
           "checks and the sentences about the numbers, which need the values, are left out. The frequencies and "
           "wavelengths need only d_k and theta, so they stay.");
}

void stage_tables(RopeLesson& L, report::Report& out) {
  const std::size_t T = L.T, d_k = L.d_k, P = L.P;
  const std::string Ps = std::to_string(P);
  L.inv_freq = rope_inv_freq(d_k, L.theta);  // (P,)
  if (L.values) L.tab = rope_tables(T, d_k, L.theta);
  const Vec& inv_freq = L.inv_freq;
  auto table = [&](const Mat& t, std::size_t width) { return hold(L.values, {T, width}, [&] { return t; }); };
  auto& s = out.stage("Frequencies, angles, cos and sin tables",
                      "inv_freq[i] = theta^(-2i/d_k);  angles[p, i] = p * inv_freq[i];  "
                      "cos = cos(cat(angles, angles)), sin likewise");
  s.show("inv_freq", inv_freq).show("angles", table(L.tab.angles, P), L.pos_labels).show("cos", table(L.tab.cos, d_k), L.pos_labels)
      .show("sin", table(L.tab.sin, d_k), L.pos_labels);
  s.note((P == 1 ? std::string("With d_k = 2 there is one pair, turning ") + f(inv_freq(0), 4) + " rad per token."
                 : "Pair 0 turns " + f(inv_freq(0), 4) + " rad per token, pair " + std::to_string(P - 1) +
                       " only " + report::scientific(inv_freq(P - 1), 2) +
                       " rad: the frequencies fall geometrically from 1 to theta^(-(d_k-2)/d_k).") +
         " Hugging Face stores cat(angles, angles), so dimensions i and i + " + Ps +
         " share one angle; row 0 is position 0, where cos is 1 and sin is 0: the first token is not turned.");
}

void stage_rotate(RopeLesson& L, report::Report& out) {
  const std::size_t T = L.T, d_k = L.d_k;
  const bool heads_view = L.heads_view, values = L.values;
  const std::string Ps = std::to_string(L.P);
  const RopeTables& tab = L.tab;
  const Held<Ten4>&q4 = L.q4, &k4 = L.k4;
  L.q_half = hold(values, L.qk_shape, [&] { return rotate_half(*q4); });                        // (B, h, T, d_k)
  L.q_rope = hold(values, L.qk_shape, [&] { return apply_rope(*q4, tab, RopeStyle::half); });  // (B, h, T, d_k)
  L.k_rope = hold(values, L.qk_shape, [&] { return apply_rope(*k4, tab, RopeStyle::half); });  // (B, h, T, d_k)
  const Held<Ten4>&q_half = L.q_half, &q_rope = L.q_rope, &k_rope = L.k_rope;
  const report::Labels& tok = L.tok;
  auto& s = out.stage("Rotate q and k (Llama / Hugging Face)",
                      "rotate_half(x) = cat(-x[..., P:], x[..., :P]);  x_rope = x * cos + rotate_half(x) * sin");
  L.in4(s, "q", q4);
  L.in4(s, "k", k4);
  s.in_shape("cos", {T, d_k}).in_shape("sin", {T, d_k});
  L.show4(s, "rotate_half(q)", q_half, tok);
  L.show4(s, "q_rope", q_rope, tok);
  L.show4(s, "k_rope", k_rope, tok);
  if (values) {
    const Ten4 direct = *q4 * tab.cos + *q_half * tab.sin;  // (B, h, T, d_k), the equation written out ((T, d_k) tables broadcast)
    check_identical(s, "q_rope is q * cos + rotate_half(q) * sin, as written", *q_rope, direct);
    check_identical(s, std::string("row 0 (position 0) comes out unchanged") + (heads_view ? " in every head" : ""),
                    at_position(*q_rope, 0), at_position(*q4, 0));
  }
  s.note("For each pair (i, i + " + Ps + ") this is the 2-d rotation (a, b) -> (a cos - b sin, a sin + b cos) "
         "by angles[p, i]." +
         (values ? " Row " + std::to_string(T - 1) + " of q" + (heads_view ? " (every head)" : "") +
                       " moved by max |q_rope - q| = " +
                       f(max_abs_diff(at_position(*q_rope, T - 1), at_position(*q4, T - 1)), 4) + "."
                 : std::string()));
}

void stage_interleaved(const RopeLesson& L, report::Report& out) {
  const std::size_t P = L.P;
  const bool values = L.values;
  const Shape& qk_shape = L.qk_shape;
  const RopeTables& tab = L.tab;
  const Held<Ten4>&q4 = L.q4, &k4 = L.k4, &q_rope = L.q_rope, &k_rope = L.k_rope;
  const report::Labels& tok = L.tok;
  auto& s = out.stage("The interleaved convention (RoFormer / GPT-J)",
                      "pairs (2i, 2i+1) instead of (i, i+P):  x_int = half_to_interleaved(x);  "
                      "rope_int(x_int) = half_to_interleaved(rope_half(x))");
  const auto q_int = hold(values, qk_shape, [&] { return half_to_interleaved(*q4); });                                 // (B, h, T, d_k)
  const auto q_int_rope = hold(values, qk_shape, [&] { return apply_rope(*q_int, tab, RopeStyle::interleaved); });  // (B, h, T, d_k)
  L.show4(s, "q_int", q_int, tok);
  L.show4(s, "q_int_rope", q_int_rope, tok);
  if (values) {
    const Ten4 back = interleaved_to_half(*q_int_rope);                                           // (B, h, T, d_k)
    const Ten4 k_int_rope = apply_rope(half_to_interleaved(*k4), tab, RopeStyle::interleaved);  // (B, h, T, d_k)
    const Ten4 scores_int = matmul_bt(*q_int_rope, k_int_rope);  // (B, h, T, d_k) @ (B, h, d_k, T) -> (B, h, T, T)
    const Ten4 scores_half = matmul_bt(*q_rope, *k_rope);        // (B, h, T, T)
    check_close(s, "interleaved RoPE on the permuted q, permuted back, equals q_rope", back, *q_rope);
    check_close(s, "both conventions give the same scores (a permutation keeps dot products)", scores_int,
                scores_half);
  }
  // What a model trained with the other convention computes: the interleaved rotation applied
  // to q and k as they are, no permutation.
  const auto q_rope_int = hold(values, qk_shape, [&] { return apply_rope(*q4, tab, RopeStyle::interleaved); });  // (B, h, T, d_k)
  const auto k_rope_int = hold(values, qk_shape, [&] { return apply_rope(*k4, tab, RopeStyle::interleaved); });  // (B, h, T, d_k)
  L.show4(s, "q_rope_interleaved", q_rope_int, tok);
  L.show4(s, "k_rope_interleaved", k_rope_int, tok);
  if (P == 1)
    s.note("With d_k = 2 there is one pair, (0, 1), in both conventions: they coincide.");
  else
    s.note("q_rope_interleaved and k_rope_interleaved are the interleaved rotation applied to the same "
           "unpermuted q and k: other numbers" +
           (values ? " (max |q_rope_interleaved - q_rope| = " + f(max_abs_diff(*q_rope_int, *q_rope), 4) + ")"
                   : std::string()) +
           ". A checkpoint trained with one convention needs its W_query "
           "and W_key rows permuted to run with the other, which is what Hugging Face's Llama "
           "conversion script does.");
}

void stage_scores(RopeLesson& L, report::Report& out) {
  const bool heads_view = L.heads_view, values = L.values;
  const Held<Ten4>&q4 = L.q4, &k4 = L.k4, &q_rope = L.q_rope, &k_rope = L.k_rope;
  L.scores = hold(values, L.scores_shape, [&] { return matmul_bt(*q_rope, *k_rope); });  // (B, h, T, d_k) @ (B, h, d_k, T) -> (B, h, T, T)
  auto& s = out.stage("Scores after RoPE", "scores = q_rope @ k_rope^T");
  L.in4(s, "q_rope", q_rope);
  L.in4(s, "k_rope", k_rope);
  L.show4(s, "scores", L.scores, L.tok, L.tok);
  double plain00 = 0.0;  // (q @ k^T)[0, 0] of the first head
  if (values) plain00 = matmul_bt(*q4, *k4)(0, 0, 0, 0);  // (B, h, T, d_k) @ (B, h, d_k, T) -> (B, h, T, T)
  s.note(std::string(heads_view ? "In every head, entry [0, 0]" : "Entry [0, 0]") +
         " pairs two unrotated vectors, so it equals (q @ k^T)[0, 0]" +
         (values ? " = " + f(plain00, 4) + (heads_view ? " (the first head's)" : "") : std::string()) +
         "; entry [i, j] sees q_i turned by position i and k_j by position j, which is the same as q_i turned "
         "by i - j against an unturned k_j. Without RoPE these scores would not depend on position at all.");
}

void stage_shift(const RopeLesson& L, report::Report& out) {
  const std::size_t T = L.T, d_k = L.d_k, shift = L.shift;
  const bool values = L.values;
  const Shape &qk_shape = L.qk_shape, &scores_shape = L.scores_shape;
  const Held<Ten4>&q4 = L.q4, &k4 = L.k4, &q_rope = L.q_rope, &k_rope = L.k_rope, &scores = L.scores;
  const Vec& inv_freq = L.inv_freq;
  const report::Labels& tok = L.tok;
  auto& s = out.stage("Shift every position: the scores do not change",
                      "positions s .. s + T - 1:  scores_shifted = rope(q, s + p) @ rope(k, s + p)^T == scores");
  RopeTables tab_s;  // positions shift .. shift + T - 1
  if (values) tab_s = rope_tables(T, d_k, L.theta, shift);
  const auto q_s = hold(values, qk_shape, [&] { return apply_rope(*q4, tab_s, RopeStyle::half); });  // (B, h, T, d_k)
  const auto k_s = hold(values, qk_shape, [&] { return apply_rope(*k4, tab_s, RopeStyle::half); });  // (B, h, T, d_k)
  const auto scores_s = hold(values, scores_shape, [&] { return matmul_bt(*q_s, *k_s); });  // (B, h, T, d_k) @ (B, h, d_k, T) -> (B, h, T, T)
  L.show4(s, "q_rope_shifted", q_s, tok);
  L.show4(s, "scores_shifted", scores_s, tok, tok);
  if (values) {
    // The bound: float32 rounding of the scores (check_close's bound), plus the rounding of the
    // angles themselves. An angle near A is stored within 2^-24 A, and a rotation off by e moves a
    // vector by at most e times its length; q and k, shifted and not, each carry one such error.
    const Vec nq = row_norms(rows_of(*q4)), nk = row_norms(rows_of(*k4));  // (B * h * T,) each
    const double max_angle = static_cast<double>(shift + T - 1) * inv_freq(0);
    const double angle_term = 4.0 * std::ldexp(max_angle, -24) * xt::amax(nq)() * xt::amax(nk)();
    s.check("shifting every position by " + std::to_string(shift) + " leaves every score unchanged", "max |diff|",
            max_abs_diff(*scores_s, *scores), Relation::AtMost, round_up(rounding_tolerance(*scores) + angle_term));
    const double diff_s = max_abs_diff(*scores_s, *scores), plain_bound = rounding_tolerance(*scores);
    if (diff_s > plain_bound)
      s.note("The scores moved by " + report::scientific(diff_s, 2) + ", more than float32 rounding of the scores "
             "alone (" + report::scientific(plain_bound, 0) + "): at positions up to " +
             std::to_string(shift + T - 1) + " the float32 angle p * inv_freq is itself off by up to " +
             report::scientific(std::ldexp(max_angle, -24), 2) + " rad, which the bound allows for. In exact "
             "arithmetic the shift changes nothing.");
    check_close(s, "rotation keeps the length of every query (||q_rope|| = ||q||)", row_norms(rows_of(*q_rope)), nq);
    check_close(s, "rotation keeps the length of every key (||k_rope|| = ||k||)", row_norms(rows_of(*k_rope)), nk);
    check_close(s, "shifted rotation keeps the length of every query too", row_norms(rows_of(*q_s)), nq);
    const double moved = max_abs_diff(*q_s, *q_rope);
    s.note(moved == 0.0 ? std::string("With shift 0 the positions did not move, so this stage shows nothing new: "
                                      "try --shift 5.")
                        : "The rotated vectors themselves did change (max |q_rope_shifted - q_rope| = " + f(moved, 4) +
           "): what survives the shift is each dot product, because it depends only on i - j. This is why "
           "absolute position is invisible to the scores. (A KV cache may keep keys already rotated for "
           "another reason: a key's rotation depends only on its own position, which never changes.)");
  }
}

// Needs only d_k and theta: the same with and without values.
void stage_wavelengths(const RopeLesson& L, report::Report& out) {
  const std::size_t T = L.T, d_k = L.d_k, P = L.P;
  const float theta = L.theta;
  const Vec& inv_freq = L.inv_freq;
  const std::string Ts = std::to_string(T);
  auto& s = out.stage("Wavelengths: how far each pair can tell positions apart",
                      "wavelength[i] = 2 pi / inv_freq[i] = 2 pi theta^(2i/d_k)  (tokens per full turn)");
  std::vector<std::size_t> pairs = {0, P / 2, P - 1};
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i : pairs) {
    const double w = 2.0 * kPi / inv_freq(i);
    rows.push_back({std::to_string(i), "(" + std::to_string(i) + ", " + std::to_string(i + P) + ")",
                    report::scientific(inv_freq(i), 3), f(w, 1),
                    f(static_cast<double>(T - 1) / w, 3)});
  }
  s.table({"pair", "dims (half)", "inv_freq", "wavelength (tokens)", "turns over positions 0.." + std::to_string(T - 1)},
          rows);
  if (rows.size() < P)
    s.note("The table samples " + std::to_string(rows.size()) + " of the " + std::to_string(P) +
           " pairs: the fastest, one in the middle and the slowest; the wavelengths of the others lie between, "
           "growing by theta^(2/d_k) = " + f(std::pow(static_cast<double>(theta), 2.0 / static_cast<double>(d_k)), 3) +
           "x from one pair to the next.");
  const double w_first = 2.0 * kPi / inv_freq(0);
  const double w_last = 2.0 * kPi / inv_freq(P - 1);
  const double w_llama3 = 2.0 * kPi / rope_inv_freq(d_k, 500000.0f)(P - 1);
  std::string text = "Pair 0 completes a turn every " + f(w_first, 2) + " tokens, so it repeats within a short "
                     "distance and tells neighbours apart";
  text += P == 1 ? std::string("; it is the only pair at d_k = 2, so its angle wraps around every ") +
                       f(w_first, 2) + " tokens whatever theta is"
                 : "; pair " + std::to_string(P - 1) + " needs " + f(w_last, 1) + " tokens per turn";
  if (P == 1) text += ".";
  else text += static_cast<double>(T - 1) < w_last
              ? ", more than the " + Ts + " positions here, so across this sequence it turns by only " +
                    f(static_cast<double>(T - 1) / w_last * 360.0, 3) +
                    " degrees and still tells far positions apart without wrapping around."
              : ", and with " + Ts + " positions even it wraps around.";
  if (P > 1 && theta != 500000.0f)
    text += " At Llama 3's theta 500000 the slowest pair at this d_k would need " + f(w_llama3, 1) +
            " tokens per turn: a larger theta stretches the slow pairs for longer contexts.";
  s.note(text);
}

}  // namespace

// The lesson reads as its table of contents: one function per stage, in the order they print.
void lesson_rope(const LessonOptions& opts, report::Report& out) {
  RopeLesson L(opts, out);
  stage_queries_keys(L, out);
  stage_tables(L, out);
  stage_rotate(L, out);
  stage_interleaved(L, out);
  stage_scores(L, out);
  stage_shift(L, out);
  stage_wavelengths(L, out);
}

// Teaching order 650: after heads (600), before scaling (700); docs/rope.md is its page.
ATTN_REGISTER_LESSON({650, "rope", "Rotary position embeddings",
                      "rotate q and k by their positions; the scores then depend only on the distance",
                      "Su et al. 2021 (RoFormer); Llama's Hugging Face LlamaRotaryEmbedding",
                      kSeed | kBatch | kSeqLen | kHeads, lesson_rope,
                      {{"--theta", OptionType::Real, 2, 1e9, 10000, "RoPE base (Llama 2: 10000, Llama 3: 500000)"},
                       {"--d-k", OptionType::Integer, 2, 512, 8, "Head width d_k, even: RoPE rotates pairs"},
                       {"--shift", OptionType::Integer, 0, 100000, 5, "Positions added to every token in the shift test"}}});

}  // namespace attn
