// Lesson: padding masks (d2l 11.3's masked_softmax and valid lengths; PyTorch's key_padding_mask).
//
// Sentences of different lengths share one (B, S, d) tensor: each is padded to the longest, and
// its valid length says where the real tokens end. A key-padding mask hides the padded keys from
// every query; in cross-attention (decoder queries over padded encoder states) every query row
// still has a real key to look at. In self-attention over a padded batch the padded queries
// have rows of their own; masked on both sides they have no visible key at all, and then the
// fill decides what they become: NaN with -inf, a uniform row with -1e9 or d2l's -1e6. The
// lesson measures all of this on the PyTorch `padding` fixture's numbers, then shows what a
// model does so that those rows are never read.
//
// Legend: B batch (sequences), T decoder queries, S positions per sequence (the longest), d the
// width of queries, keys and values.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/attention.hpp"
#include "core/generator.hpp"
#include "core/matmul.hpp"
#include "core/padding.hpp"
#include "core/softmax.hpp"
#include "lesson_kit/checks.hpp"
#include "lesson_kit/external.hpp"
#include "lesson_kit/registry.hpp"

namespace attn {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr float kFloatMin = -std::numeric_limits<float>::max();  // torch.finfo(torch.float32).min
const char* const kPad = "<pad>";
// exp(x) is 0 in float32 below about -103.97 (the smallest subnormal is 2^-149).
constexpr double kExpUnderflow = -103.97;
// The value every padded key and value is replaced by in the "padding is invisible" check:
// large enough to dominate any score if a single one leaked through.
constexpr float kProbe = 1000.0f;

using report::Held;
using report::hold;

// The padded batch and everything about where it came from.
struct PaddedBatch {
  std::uint64_t seed = 4;
  std::size_t B = 2, T = 3, S = 5, d = 4;
  std::vector<std::size_t> lens;  // (B,) valid lengths, each 1..S
  Held<Ten3> q;                   // (B, T, d) decoder queries
  Held<Ten3> k, v;                // (B, S, d) encoder keys and values, padded
  Held<Ten3> xs;                  // (B, S, d) the batch that self-attends
  bool from_tokens = false;       // k = v = xs = the embedded sentences, padded with zero rows
  // False: a --shapes-only run whose tensors would be too large to print computes nothing, and
  // every Held above and in the stages carries its shape alone (check_sizes' rule, on `held`).
  bool values = true;
  long double held = 0;           // the most bytes a run with values holds at once (held_bytes)
  report::Labels q_rows;          // T labels: q1, q2, ...
  report::Labels src_rows;        // B * S labels: the tokens (or t1, t2, ...), then <pad>
  std::vector<std::string> reproduce;
};

// "[5, 2]"; a long list (one length per sequence of a large --batch) shows its first and last 8
// and counts the rest, so that the setting line stays a line.
std::string list_text(const std::vector<std::size_t>& v) {
  constexpr std::size_t kEnds = 8;
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v.size() > 2 * kEnds && i == kEnds) {
      s += ", ...";
      i = v.size() - kEnds;
    }
    s += (i ? ", " : "") + std::to_string(v[i]);
  }
  return s + "]" + (v.size() > 2 * kEnds ? " (" + std::to_string(v.size()) + " values)" : "");
}

// The lengths as a Python list that runs as printed: "[5, 2]", or with runs of one value written
// "[1] * 4096 + [3]" when that is shorter (a large --batch of equal lengths stays one short line).
std::string python_list(const std::vector<std::size_t>& v) {
  std::string plain = "[", runs;
  for (std::size_t i = 0; i < v.size(); ++i) plain += (i ? ", " : "") + std::to_string(v[i]);
  plain += "]";
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j < v.size() && v[j] == v[i]) ++j;
    runs += (i ? " + [" : "[") + std::to_string(v[i]) + "]" + (j - i > 1 ? " * " + std::to_string(j - i) : "");
    i = j;
  }
  return runs.size() < plain.size() ? runs : plain;
}

std::string join_words(const std::vector<std::string>& words) {
  std::string s;
  for (std::size_t i = 0; i < words.size(); ++i) s += (i ? " " : "") + words[i];
  return s;
}

// Bytes a label holds as a std::string: 32, and a heap block for a word longer than 15 bytes.
std::size_t label_bytes(std::size_t length) { return 32 + (length > 15 ? length + 17 : 0); }

// The most bytes a run with values holds at once, counted from the sizes before anything is made.
//
// Tensors, 4 bytes a value (X = B*T*S, Y = B*S*S, Q = B*T*d, K = B*S*d): the report keeps every
// tensor a stage shows until the run is printed, five (B, T, S) (mask, scores, masked,
// attn_weights_inf, attn_weights_d2l), six (B, S, S) (self_mask, self_scores, the three
// self_weights, keys_only), three (B, T, d) (q, both contexts), k, v, xs, out and key_pad; the
// lesson keeps self_weights_inf @ xs (B, S, d) for stage 8. On top of those it works on one
// (B, S, S) at a time (the finfo.min weights, each second layer's weights) with its (B, S, d)
// output, or on three (B, S, d) in stage 7 (a context, the mean rows). Every moment of the run is
// within this sum.
//
// Labels: the B*S row labels of the (B, S, ...) tensors, copied into each of the ten a stage
// shows, the batch's own list and --format json's index of label lists; the T labels of the
// (B, T, ...) tensors, nine times; stage 1's table. At --batch 65536 --seq-len 16 they were a
// third of the run (1.0 GiB in all, measured, before they were counted). docs/testing.md has the
// measured peaks.
long double held_bytes(const PaddedBatch& p, const std::vector<std::vector<std::string>>& sentences) {
  const long double B = p.B, T = p.T, S = p.S, d = p.d;
  const long double X = B * T * S, Y = B * S * S, Q = B * T * d, K = B * S * d;
  const long double values = 5 * X + 7 * Y + 3 * Q + 7 * K + B * S;
  long double rows = 0, table = 0;  // one list of the B*S row labels; stage 1's table
  for (std::size_t b = 0; b < p.B; ++b) {
    std::size_t real = 0, joined = 0;  // the label bytes of sequence b's real tokens, their words joined
    for (std::size_t s = 0; s < p.lens[b]; ++s) {
      const std::size_t length = p.from_tokens ? sentences[b][s].size() : 1 + std::to_string(s + 1).size();
      real += label_bytes(length);
      joined += length + 1;
    }
    rows += static_cast<long double>(real) + 32.0L * static_cast<long double>(p.S - p.lens[b]);
    table += 4 * 32 + 24 + static_cast<long double>(label_bytes(joined));
  }
  constexpr long double kRowCopies = 12, kQueryCopies = 9;
  return 4 * values + kRowCopies * rows + kQueryCopies * 32 * T + table + 32 * B;
}

// The batch, its valid lengths and labels, from --tokens sentences or drawn like the fixture.
// `values_optional`: no sink reads values (see check_sizes).
PaddedBatch build_batch(const LessonOptions& opts, bool values_optional) {
  PaddedBatch p;
  p.seed = opts.seed.value_or(4);
  p.T = static_cast<std::size_t>(opts.integer("--queries"));
  p.d = size_option(opts.d_in, 4, "--d-in");
  const std::vector<std::int64_t>& given_lens = opts.integers("--valid-lens");
  std::vector<std::vector<std::string>> sentences;
  if (opts.tokens) {
    p.from_tokens = true;
    sentences.push_back(*opts.tokens);
    for (const auto& s : opts.more_sentences) sentences.push_back(s);
    if (!given_lens.empty())
      throw UsageError("--valid-lens cannot be combined with --tokens: the sentences' lengths are the valid lengths",
                       "--valid-lens", "no --valid-lens with --tokens", "both");
    p.B = sentences.size();
    p.S = 0;
    for (const auto& s : sentences) {
      p.lens.push_back(s.size());
      p.S = std::max(p.S, s.size());
    }
    if (opts.batch && *opts.batch != p.B)
      throw UsageError("--batch disagrees with the number of --tokens sentences", "--batch",
                       std::to_string(p.B) + " (one per sentence)", std::to_string(*opts.batch));
    if (opts.seq_len && *opts.seq_len != p.S)
      throw UsageError("--seq-len disagrees with --tokens: S is the longest sentence", "--seq-len",
                       std::to_string(p.S) + " (the longest sentence)", std::to_string(*opts.seq_len));
  } else {
    p.S = size_option(opts.seq_len, 5, "--seq-len");
    if (!given_lens.empty()) {
      p.B = opts.batch ? *opts.batch : given_lens.size();
      if (given_lens.size() != p.B)
        throw UsageError("--valid-lens needs one length per sequence", "--valid-lens",
                         std::to_string(p.B) + " lengths (--batch " + std::to_string(p.B) + ")",
                         std::to_string(given_lens.size()));
      for (std::int64_t n : given_lens) {
        if (n < 1)
          throw UsageError("--valid-lens: every sequence needs at least one real token", "--valid-lens",
                           "lengths 1.." + std::to_string(p.S), std::to_string(n));
        if (static_cast<std::size_t>(n) > p.S)
          throw UsageError("--valid-lens: a length exceeds the S = " + std::to_string(p.S) + " positions (--seq-len)",
                           "--valid-lens", "lengths 1.." + std::to_string(p.S), std::to_string(n));
        p.lens.push_back(static_cast<std::size_t>(n));
      }
    } else {
      // The fixture's [5, 2] at the defaults: the first sequence full, each next one 3 shorter, at least 1.
      p.B = size_option(opts.batch, 2, "--batch");
      for (std::size_t b = 0; b < p.B; ++b) p.lens.push_back(3 * b >= p.S ? 1 : std::max<std::size_t>(1, p.S - 3 * b));
    }
  }
  check_size("q", {p.B, p.T, p.d}, opts.shapes_only, "--batch, --queries, --d-in");
  check_size("k", {p.B, p.S, p.d}, opts.shapes_only, "--batch, --seq-len, --d-in");
  check_size("attn_scores", {p.B, p.T, p.S}, opts.shapes_only, "--batch, --queries, --seq-len");
  check_size("self_scores", {p.B, p.S, p.S}, opts.shapes_only, "--batch, --seq-len");
  // Each tensor fits; all of them together must too. A --shapes-only run that no sink reads
  // values from computes nothing once they would be too large to print together (check_sizes'
  // rule: more than 2^24 values, 64 MiB); any other run is refused past kMaxHeldBytes.
  const char* const all_sizes = p.from_tokens ? "--tokens, --queries, --d-in" : "--batch, --seq-len, --queries, --d-in";
  p.held = held_bytes(p, sentences);
  p.values = !(opts.shapes_only && values_optional && p.held > 4.0L * kMaxPrintedValues);
  if (p.values) check_held("padding at these sizes", p.held, /*suggest_shapes_only=*/!opts.shapes_only, all_sizes);

  const std::string Bs = std::to_string(p.B), Ts = std::to_string(p.T), Ss = std::to_string(p.S),
                    ds = std::to_string(p.d);
  TorchGenerator gen(p.seed);
  recipe::Recipe steps;
  if (p.from_tokens) {
    // embed() reseeds for every word, so the sentences come first, then the seed for q.
    p.xs = hold(p.values, {p.B, p.S, p.d}, [&] {
      Ten3 xs = xt::zeros<float>({p.B, p.S, p.d});  // (B, S, d): pad_sequence's zero rows past each length
      for (std::size_t b = 0; b < p.B; ++b) {
        const TokenInput one = embed_tokens(sentences[b], p.d, true);  // (len_b, d)
        std::copy(one.x.begin(), one.x.end(), xs.begin() + b * p.S * p.d);
      }
      return xs;
    });
    steps.add(recipe::Words{"xs", sentences, p.d, book_table(p.d)});
    if (p.B == 1) steps.add(recipe::Stack{"xs", 1});  // one sentence is (S, d): add the batch axis
    steps.seed(gen, p.seed);
    p.q = hold(p.values, {p.B, p.T, p.d}, [&] { return gen.rand(p.B, p.T, p.d); });  // (B, T, d)
    p.k = p.xs;  // (B, S, d), the same tensor
    p.v = p.xs;  // (B, S, d)
    p.reproduce = steps.lines();
    p.reproduce.push_back("q = torch.rand(" + Bs + ", " + Ts + ", " + ds + ")");
    p.reproduce.push_back("k = v = xs");
  } else {
    steps.seed(gen, p.seed);
    p.q = hold(p.values, {p.B, p.T, p.d}, [&] { return gen.rand(p.B, p.T, p.d); });   // (B, T, d)
    p.k = hold(p.values, {p.B, p.S, p.d}, [&] { return gen.rand(p.B, p.S, p.d); });   // (B, S, d)
    p.v = hold(p.values, {p.B, p.S, p.d}, [&] { return gen.rand(p.B, p.S, p.d); });   // (B, S, d)
    p.xs = hold(p.values, {p.B, p.S, p.d}, [&] { return gen.rand(p.B, p.S, p.d); });  // (B, S, d)
    p.reproduce = steps.lines();
    for (const char* name : {"q", "k", "v", "xs"})
      p.reproduce.push_back(std::string(name) + " = torch.rand(" + Bs + ", " + (name[0] == 'q' ? Ts : Ss) + ", " +
                            ds + ")");
  }
  const std::string root = ds + " ** 0.5";
  const std::vector<std::string> rest = {
      "valid_lens = torch.tensor(" + python_list(std::vector<std::size_t>(p.lens.begin(), p.lens.begin() + p.B)) + ")",
      "key_pad = (torch.arange(" + Ss + ")[None, :] >= valid_lens[:, None]).float()",
      "mask = key_pad[:, None, :].expand(" + Bs + ", " + Ts + ", " + Ss + ")",
      "scores = q @ k.transpose(1, 2) / " + root,
      "masked = scores.masked_fill(mask.bool(), float(\"-inf\"))",
      "attn_weights_inf = torch.softmax(masked, dim=-1); context_inf = attn_weights_inf @ v",
      "attn_weights_d2l = torch.softmax(scores.masked_fill(mask.bool(), -1e6), dim=-1); "
      "context_d2l = attn_weights_d2l @ v",
      "self_mask = ((key_pad[:, :, None] + key_pad[:, None, :]) > 0).float()",
      "self_scores = xs @ xs.transpose(1, 2) / " + root,
      "fill = lambda f: torch.softmax(self_scores.masked_fill(self_mask.bool(), f), dim=-1)",
      "self_weights_inf = fill(float(\"-inf\")); self_weights_1e9 = fill(-1e9); self_weights_d2l = fill(-1e6)",
      "keys_only = torch.softmax(self_scores.masked_fill(key_pad[:, None, :].bool(), float(\"-inf\")), dim=-1)",
      "out = (keys_only @ xs) * (1 - key_pad)[:, :, None]"};
  p.reproduce.insert(p.reproduce.end(), rest.begin(), rest.end());

  for (std::size_t t = 0; t < p.T; ++t) p.q_rows.push_back("q" + std::to_string(t + 1));
  for (std::size_t b = 0; b < p.B; ++b)
    for (std::size_t s = 0; s < p.S; ++s)
      p.src_rows.push_back(s >= p.lens[b] ? kPad : p.from_tokens ? sentences[b][s] : "t" + std::to_string(s + 1));
  return p;
}

// x with every padded row (position >= its sequence's length) set to `value`: (B, S, d) -> (B, S, d).
Ten3 with_padded_rows(const Ten3& x, const std::vector<std::size_t>& lens, float value) {
  Ten3 out = x;  // (B, S, d)
  for (std::size_t b = 0; b < out.shape()[0]; ++b)
    for (std::size_t s = lens[b]; s < out.shape()[1]; ++s)
      for (std::size_t c = 0; c < out.shape()[2]; ++c) out(b, s, c) = value;
  return out;
}

// Largest weight where the mask hides the key; NaN when any such weight is NaN.
double max_hidden_weight(const Ten3& w, const Ten3& mask) {
  double m = 0.0;
  for (std::size_t i = 0; i < w.size(); ++i)
    if (mask.data()[i] != 0.0f) {
      if (std::isnan(w.data()[i])) return w.data()[i];
      m = std::fmax(m, w.data()[i]);
    }
  return m;
}

// Whether a row of a (B, R, C) tensor holds a NaN / anything not finite.
bool row_has_nan(const Ten3& x, std::size_t b, std::size_t r) {
  for (std::size_t c = 0; c < x.shape()[2]; ++c)
    if (std::isnan(x(b, r, c))) return true;
  return false;
}
std::size_t nan_rows(const Ten3& x) {
  std::size_t n = 0;
  for (std::size_t b = 0; b < x.shape()[0]; ++b)
    for (std::size_t r = 0; r < x.shape()[1]; ++r) n += row_has_nan(x, b, r);
  return n;
}
std::size_t nonfinite_values(const Ten3& x) {
  std::size_t n = 0;
  for (float v : x) n += !std::isfinite(v);
  return n;
}

// The fully masked rows of a (B, S, S) self mask: listed in row-major order, and looked up in
// constant time (a search of the list for every row was quadratic: at --batch 65536 --seq-len 16
// a million rows searched a list of a million, and the run had not ended after two minutes).
struct FullRows {
  std::vector<MaskedRow> rows;
  std::vector<char> flags;  // (B * S): 1 where row r of sequence b is fully masked
  std::size_t S = 0;
  FullRows(std::vector<MaskedRow> list, std::size_t B, std::size_t S_) : rows(std::move(list)), flags(B * S_), S(S_) {
    for (const MaskedRow& m : rows) flags[m.batch * S + m.row] = 1;
  }
  bool has(std::size_t b, std::size_t r) const { return flags[b * S + r] != 0; }
  bool empty() const { return rows.empty(); }
  std::size_t size() const { return rows.size(); }
};

// The padded query rows (r >= valid_lens[b]): the rows of self_mask that are fully masked, since
// every sequence has a real key. A run without values lists them from the lengths alone.
std::vector<MaskedRow> padded_rows(const std::vector<std::size_t>& lens, std::size_t S) {
  std::vector<MaskedRow> rows;
  for (std::size_t b = 0; b < lens.size(); ++b)
    for (std::size_t r = lens[b]; r < S; ++r) rows.push_back({b, r});
  return rows;
}

// max |a - b| over the rows that are not fully masked (a NaN there counts).
double max_diff_visible_rows(const Ten3& a, const Ten3& b, const FullRows& full) {
  double m = 0.0;
  for (std::size_t i = 0; i < a.shape()[0]; ++i)
    for (std::size_t r = 0; r < a.shape()[1]; ++r) {
      if (full.has(i, r)) continue;
      for (std::size_t c = 0; c < a.shape()[2]; ++c) {
        const double diff = std::fabs(static_cast<double>(a(i, r, c)) - b(i, r, c));
        if (std::isnan(diff)) return diff;
        m = std::fmax(m, diff);
      }
    }
  return m;
}

// max |w - 1/S| over the fully masked rows (0 when there are none; NaN when any is NaN).
double max_from_uniform(const Ten3& w, const FullRows& full) {
  const double u = 1.0 / static_cast<double>(w.shape()[2]);
  double m = 0.0;
  for (const MaskedRow& r : full.rows)
    for (std::size_t c = 0; c < w.shape()[2]; ++c) {
      const double diff = std::fabs(w(r.batch, r.row, c) - u);
      if (std::isnan(diff)) return diff;
      m = std::fmax(m, diff);
    }
  return m;
}

// "(1, 2), (1, 3), (1, 4)": (sequence, row) pairs, at most 8 and then "and K more".
std::string rows_text(const std::vector<MaskedRow>& rows) {
  std::string s;
  for (std::size_t i = 0; i < rows.size() && i < 8; ++i)
    s += (i ? ", " : "") + std::string("(") + std::to_string(rows[i].batch) + ", " + std::to_string(rows[i].row) + ")";
  if (rows.size() > 8) s += " and " + std::to_string(rows.size() - 8) + " more";
  return s;
}

// The closest any fill came to a visible score: max over the rows with a visible key of
// (fill - largest visible scaled score). exp of it is the weight each masked key keeps relative
// to the row's largest; below -103.97 it is exactly 0 in float32. -inf when nothing is masked.
double closest_fill_gap(const Ten3& scaled, const Ten3& mask, double fill) {
  double worst = -std::numeric_limits<double>::infinity();
  const std::size_t C = scaled.shape()[2];
  for (std::size_t r = 0; r < scaled.size() / C; ++r) {
    double row_max = -std::numeric_limits<double>::infinity();
    bool hidden = false, seen = false;
    for (std::size_t c = 0; c < C; ++c) {
      const float m = mask.data()[r * C + c], x = scaled.data()[r * C + c];
      if (m != 0.0f) hidden = true;
      else seen = true, row_max = std::fmax(row_max, x);
    }
    if (hidden && seen) worst = std::fmax(worst, fill - row_max);
  }
  return worst;
}

// Why a finite fill left weight on masked keys, for a question's "because".
std::string fill_gap_reason(double gap) {
  if (std::isnan(gap)) return "the scores hold inf or NaN";
  return "fill - the largest visible score comes to " + report::measured(gap) + " in some row, and exp(" +
         report::measured(gap) + ") is not 0 in float32 (it underflows below -104)";
}

// (x * (1 - key_pad)[:, :, None]).sum(): a loss that weights padded rows 0, as d2l's MaskedSoftmaxCELoss.
double weighted_sum(const Ten3& x, const Mat& key_pad) {
  double s = 0.0;
  for (std::size_t b = 0; b < x.shape()[0]; ++b)
    for (std::size_t r = 0; r < x.shape()[1]; ++r)
      for (std::size_t c = 0; c < x.shape()[2]; ++c)
        s += static_cast<double>(x(b, r, c)) * (1.0f - key_pad(b, r));
  return s;
}

// x[real rows].sum(): the padded rows left out, as ignore_index or boolean indexing does.
double selected_sum(const Ten3& x, const Mat& key_pad) {
  double s = 0.0;
  for (std::size_t b = 0; b < x.shape()[0]; ++b)
    for (std::size_t r = 0; r < x.shape()[1]; ++r)
      if (key_pad(b, r) == 0.0f)
        for (std::size_t c = 0; c < x.shape()[2]; ++c) s += x(b, r, c);
  return s;
}

// x / sqrt(d) in place, in float as scale_scores divides.
void scale_inplace(Ten3& x, std::size_t d) {
  const float root = std::sqrt(static_cast<float>(d));
  for (float& v : x) v /= root;
}

// x.masked_fill(mask.bool(), fill) in place: x and mask (B, R, C).
void fill_where(Ten3& x, const Ten3& mask, float fill) {
  for (std::size_t i = 0; i < x.size(); ++i)
    if (mask.data()[i] != 0.0f) x.data()[i] = fill;
}

// softmax(scores.masked_fill(mask.bool(), fill), dim=-1), as core's masked_softmax computes it,
// in the scores' own buffer: a temporary is worked on where it is, a tensor the lesson keeps is
// copied once (masked_softmax copies twice): (B, R, C) -> (B, R, C).
Ten3 masked_weights(Ten3 w, const Ten3& mask, float fill) {
  fill_where(w, mask, fill);
  const std::size_t C = w.shape()[2];
  softmax_rows_inplace(w.data(), w.size() / C, C);
  return w;
}

// The same under the keys-only mask key_pad[:, None, :] (key_pad (B, S)), without making it.
Ten3 keys_only_weights(Ten3 w, const Mat& key_pad, float fill) {
  const std::size_t B = w.shape()[0], R = w.shape()[1], S = w.shape()[2];
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t r = 0; r < R; ++r)
      for (std::size_t c = 0; c < S; ++c)
        if (key_pad(b, c) != 0.0f) w(b, r, c) = fill;
  softmax_rows_inplace(w.data(), B * R, S);
  return w;
}

// x @ x^T / sqrt(d): (B, S, d) -> (B, S, S).
Ten3 self_scores_of(const Ten3& x, std::size_t d) {
  Ten3 s = matmul_bt(x, x);  // (B, S, d) @ (B, S, d)^T -> (B, S, S)
  scale_inplace(s, d);
  return s;
}

// A number as a table cell: "nan" like PyTorch, else four decimals.
std::string cell(double v) { return std::isnan(v) ? "nan" : report::fixed(v, 4); }

// What the stages share: the batch, its sizes, and the masks, scores and weights later stages
// read. Each stage makes what it adds, in the lesson's order, so a run holds what it held before
// at every point. A --shapes-only run past printable sizes computes nothing (build_batch):
// `values` is then false, every tensor holds its shape alone, and the checks, the tables of
// measured numbers and the sentences about them are left out (the stages' `if (values)`). A run
// with values holds every tensor a stage shows once, shared with the report, and makes the
// others one at a time.
struct PaddingLesson {
  const PaddedBatch p;
  const bool values;
  const std::size_t B, T, S, d;
  const std::string Ss;
  std::size_t padded_positions = 0;
  Held<Mat> key_pad;                          // (B, S), 1 = padding
  Held<Ten3> mask;                            // (B, T, S)
  Held<Ten3> scores, masked;                  // (B, T, S)
  Held<Ten3> weights_inf;                     // (B, T, S)
  Held<Ten3> context_inf;                     // (B, T, d)
  Held<Ten3> self_mask, self_scores;          // (B, S, S)
  FullRows full{{}, 0, 0};                    // the fully masked rows of self_mask
  Held<Ten3> self_inf, self_1e9, self_d2l;    // (B, S, S)
  Held<Ten3> self_context;                    // (B, S, d)

  PaddingLesson(const LessonOptions& opts, report::Report& out)
      : p(build_batch(opts, /*values_optional=*/!out.keep_values)),
        values(p.values),
        B(p.B),
        T(p.T),
        S(p.S),
        d(p.d),
        Ss(std::to_string(S)) {
    for (std::size_t n : p.lens) padded_positions += S - n;
    std::vector<std::string> setting = {"seed " + std::to_string(p.seed), "batch " + std::to_string(B),
                                        "queries " + std::to_string(T), "S " + Ss, "d " + std::to_string(d),
                                        "valid_lens " + list_text(p.lens)};
    out.header = {"padding", "Padding masks: sentences of different lengths in one batch",
                  "d2l 11.3 (masked_softmax, valid_lens); PyTorch's key_padding_mask", setting, p.reproduce};
  }
  PaddingLesson(const PaddingLesson&) = delete;
};

// Stage 1: the batch.
void stage_batch(const PaddingLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T, S = L.S, padded_positions = L.padded_positions;
  const bool values = L.values;
  const std::string& Ss = L.Ss;
  const PaddedBatch& p = L.p;
  auto& s = out.stage("A padded batch: decoder queries over encoder states of different lengths",
                      p.from_tokens ? "xs = pad_sequence([embed(sentence) for sentence in sentences]);  k = v = xs;  "
                                      "q = torch.rand(B, T, d)"
                                    : "q = torch.rand(B, T, d);  k, v = torch.rand(B, S, d);  valid_lens = " +
                                          list_text(p.lens));
  s.show("q", p.q, p.q_rows).detail();
  if (p.from_tokens) s.show("xs", p.xs, p.src_rows);
  else s.show("k", p.k, p.src_rows).show("v", p.v, p.src_rows).detail();
  std::vector<std::vector<std::string>> rows;
  for (std::size_t b = 0; b < B; ++b) {
    std::vector<std::string> words(p.src_rows.begin() + b * S, p.src_rows.begin() + b * S + p.lens[b]);
    rows.push_back({std::to_string(b), join_words(words), std::to_string(p.lens[b]), std::to_string(S - p.lens[b])});
  }
  s.table({"sequence", "real tokens", "valid_len", "padded positions"}, std::move(rows));
  s.note(std::string(p.from_tokens
                         ? "Each sentence is embedded word by word and padded with zero rows to the longest, "
                           "S = " + Ss + " (torch.nn.utils.rnn.pad_sequence; nn.Embedding(padding_idx=...) also "
                           "gives the pad token a zero vector). The encoder states are these embeddings: k = v = xs. "
                           "The decoder's T = " + std::to_string(T) + " queries are drawn from the seed."
                         : "Sequence b has valid_lens[b] real positions out of S = " + Ss + "; the rest are padding." +
                               (padded_positions == 0
                                    ? std::string()
                                    : " Here the padded rows hold random numbers like the real ones, to make the "
                                      "point that their values must never matter: only the mask decides.")) +
         (padded_positions == 0
              ? " No sequence is padded here (every valid length is S): the masks below hide nothing."
              : " In all, " + std::to_string(padded_positions) + " of the " + std::to_string(B * S) +
                    " key positions are padding."));
  if (!values)
    s.note("--shapes-only at these sizes computes nothing: with values the lesson would hold " +
           report::bytes(static_cast<double>(p.held)) + " at once, among them attn_scores " + shape_str({B, T, S}) +
           " and self_scores " + shape_str({B, S, S}) + " as float32. The stages below list names and shapes only; "
           "the checks, the tables of measured numbers and the sentences about the numbers need the values and "
           "are left out.");
}

// Stage 2: the key-padding mask and its broadcast.
void stage_key_padding_mask(PaddingLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T, S = L.S;
  const bool values = L.values;
  const PaddedBatch& p = L.p;
  L.key_pad = hold(values, {B, S}, [&] { return key_padding_mask(p.lens, S); });  // (B, S), 1 = padding
  L.mask = hold(values, {B, T, S}, [&] { return cross_padding_mask(*L.key_pad, T); });  // (B, T, S)
  const Held<Mat>& key_pad = L.key_pad;
  const Held<Ten3>& mask = L.mask;
  auto& s = out.stage("The key-padding mask, and how it covers every query",
                      "key_pad = (torch.arange(S)[None, :] >= valid_lens[:, None]).float()   # (B, S), 1 = padding\n"
                      "mask = key_pad[:, None, :].expand(B, T, S)");
  report::Labels seq_rows;
  for (std::size_t b = 0; b < B; ++b) seq_rows.push_back("valid_len " + std::to_string(p.lens[b]));
  s.show("key_pad", key_pad, std::move(seq_rows)).show("mask", mask, p.q_rows).detail();
  if (values) {
    double worst = 0.0;  // max over t of |mask[:, t, :] - key_pad|
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t t = 0; t < T; ++t)
        for (std::size_t c = 0; c < S; ++c) worst = std::fmax(worst, std::fabs((*mask)(b, t, c) - (*key_pad)(b, c)));
    s.check("every query row of mask[b] is key_pad[b]: the mask depends on the key only", "max |diff|", worst,
            Relation::AtMost, 0.0);
  }
  std::string repeated;
  for (std::size_t b = 0; b < B && b < 4; ++b)
    for (std::size_t t = 0; t < T && t < 3; ++t) repeated += (repeated.empty() ? "" : ", ") + std::to_string(p.lens[b]);
  s.note("A key-padding mask is one row per sequence: key s of sequence b is hidden when s >= valid_lens[b]. "
         "Adding the axis (key_pad[:, None, :]) lets one row cover all " + std::to_string(T) +
         " queries, without a copy in PyTorch. d2l's masked_softmax reaches the same cells another way: it "
         "flattens the scores to (B*T, S) and repeats each length T times (valid_lens.repeat_interleave(T) = [" +
         repeated + (B * T > std::min<std::size_t>(B, 4) * std::min<std::size_t>(T, 3) ? ", ..." : "") + "]).");
}

// Stage 3: cross-attention scores, scaled, then masked.
void stage_scores(PaddingLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T, S = L.S, d = L.d, padded_positions = L.padded_positions;
  const bool values = L.values;
  const PaddedBatch& p = L.p;
  const Held<Ten3>& mask = L.mask;
  L.scores = hold(values, {B, T, S}, [&] {
    Ten3 x = matmul_bt(*p.q, *p.k);  // (B, T, d) @ (B, S, d)^T -> (B, T, S)
    scale_inplace(x, d);             // nothing masked yet
    return x;
  });
  L.masked = hold(values, {B, T, S}, [&] {
    Ten3 x = *L.scores;  // (B, T, S)
    fill_where(x, *mask, kNegInf);
    return x;
  });
  const Held<Ten3> &scores = L.scores, &masked = L.masked;
  auto& s = out.stage("Cross-attention scores, scaled, then masked",
                      "scores = q @ k^T / sqrt(d);  masked = scores.masked_fill(mask.bool(), -inf)");
  s.in("q", p.q).in("k", p.k).in("mask", mask);
  s.show("scores", scores, p.q_rows).detail().show("masked", masked, p.q_rows);
  if (padded_positions == 0) {
    s.note("Nothing is masked: masked equals scores.");
  } else if (values) {
    double hidden_max = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < scores->size(); ++i)
      if (mask->data()[i] != 0.0f) hidden_max = std::fmax(hidden_max, scores->data()[i]);
    s.note("The scores do not know about padding: every query scores the padded keys too (up to " +
           report::fixed(hidden_max, 4) + " here, ordinary numbers). Only the mask turns them into -inf.");
  }
}

// Stage 4: softmax with -inf; the padding gets nothing.
void stage_softmax_inf(PaddingLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T, S = L.S, d = L.d;
  const bool values = L.values;
  const PaddedBatch& p = L.p;
  const Held<Ten3> &mask = L.mask, &masked = L.masked;
  L.weights_inf = hold(values, {B, T, S}, [&] { return softmax_rows(*masked); });  // (B, T, S)
  L.context_inf = hold(values, {B, T, d}, [&] { return matmul(*L.weights_inf, *p.v); });  // (B, T, d)
  const Held<Ten3> &weights_inf = L.weights_inf, &context_inf = L.context_inf;
  auto& s = out.stage("Softmax over the keys: padded keys get exactly 0",
                      "attn_weights_inf = softmax(masked, dim=-1);  context_inf = attn_weights_inf @ v");
  s.in("masked", masked).in("v", p.v);
  s.show("attn_weights_inf", weights_inf, p.q_rows).attention_weights();
  s.show("context_inf", context_inf, p.q_rows).detail();
  if (values) {
    check_rows_sum_to_one(s, "attn_weights_inf", *weights_inf);
    s.check("every padded key gets weight exactly 0", "largest weight on a padded key",
            max_hidden_weight(*weights_inf, *mask), Relation::AtMost, 0.0);
    // Bound 0: a hidden key reaches the output only through a weight that is exactly 0.
    double probe_diff = 0.0;
    {
      const Ten3 k_probe = with_padded_rows(*p.k, p.lens, kProbe);  // (B, S, d)
      const Ten3 v_probe = with_padded_rows(*p.v, p.lens, kProbe);  // (B, S, d)
      Ten3 probe = matmul_bt(*p.q, k_probe);                        // (B, T, S)
      scale_inplace(probe, d);
      fill_where(probe, *mask, kNegInf);
      softmax_rows_inplace(probe.data(), B * T, S);  // (B, T, S): the probe's weights
      probe_diff = std::fmax(max_abs_diff(probe, *weights_inf),
                             max_abs_diff(matmul(probe, v_probe), *context_inf));  // (B, T, d)
    }
    s.check("replacing every padded key and value by 1000 changes no weight and no context", "max |diff|",
            probe_diff, Relation::AtMost, 0.0);
  }
  std::string one_key;  // sequences whose queries see a single key: weight 1 on it (the first 16 named)
  std::size_t n_one = 0;
  for (std::size_t b = 0; b < B; ++b)
    if (p.lens[b] == 1 && n_one++ < 16) one_key += (n_one > 1 ? ", " : "") + std::to_string(b);
  if (n_one > 16) one_key += " and " + std::to_string(n_one - 16) + " more";
  s.note("exp(-inf) is exactly 0, so each row shares its weight among the real keys of its own sequence only, "
         "and the padded values are multiplied by 0 in context_inf. Every query here has at least one real key, "
         "so no row is left empty." +
         (n_one == 0 ? std::string()
          : n_one == 1 ? " Sequence " + one_key + " has one real token: all of its queries' weight goes there."
                       : " Sequences " + one_key + " have one real token each: all of their queries' weight goes there."));
}

// Stage 5: d2l's fill.
void stage_d2l_fill(const PaddingLesson& L, report::Report& out) {
  const std::size_t B = L.B, T = L.T, S = L.S, d = L.d;
  const bool values = L.values;
  const PaddedBatch& p = L.p;
  const Held<Ten3> &mask = L.mask, &scores = L.scores, &weights_inf = L.weights_inf;
  const Held<Ten3> weights_d2l = hold(values, {B, T, S}, [&] { return masked_weights(*scores, *mask, kD2lFill); });
  const Held<Ten3> context_d2l = hold(values, {B, T, d}, [&] { return matmul(*weights_d2l, *p.v); });  // (B, T, d)
  auto& s = out.stage("d2l's masked_softmax: fill -1e6 instead of -inf",
                      "attn_weights_d2l = softmax(scores.masked_fill(mask.bool(), -1e6), dim=-1)   "
                      "# d2l: sequence_mask(X.reshape(-1, S), valid_lens.repeat_interleave(T), value=-1e6)\n"
                      "context_d2l = attn_weights_d2l @ v");
  s.in("scores", scores).in("mask", mask);
  s.show("attn_weights_d2l", weights_d2l, p.q_rows).attention_weights();
  s.show("context_d2l", context_d2l, p.q_rows);
  if (values) {
    const double gap = closest_fill_gap(*scores, *mask, kD2lFill);
    const double diff = max_abs_diff(*weights_d2l, *weights_inf);
    // The same numbers as stage 4's, bit for bit: the default text does not print them twice.
    if (diff == 0.0) s.detail("attn_weights_d2l").detail("context_d2l");
    s.question("does fill -1e6 give exactly the same attn_weights as -inf here?", "max |diff|", diff,
               Relation::AtMost, 0.0, fill_gap_reason(gap));
    s.note(std::isinf(gap)
               ? std::string("Nothing is masked here, so the fill is never used.")
               : "Softmax subtracts each row's largest score, so a masked key keeps exp(-1e6 - max) of the largest "
                 "key's weight. The closest any row comes is exp(" + report::measured(gap) + "), which is " +
                     (gap < kExpUnderflow ? std::string("exactly 0 in float32 (exp underflows below -104): the same "
                                                        "weights as -inf, bit for bit.")
                                          : std::string("not 0 in float32: masked keys keep a little weight.")) +
                     " d2l fills after dividing by sqrt(d); the causal lesson fills before, which makes no "
                     "difference for -inf but scales a finite fill.");
  }
}

// Stage 6: self-attention over the padded batch, padded queries masked too.
void stage_self_attention(PaddingLesson& L, report::Report& out) {
  const std::size_t B = L.B, S = L.S, d = L.d;
  const bool values = L.values;
  const PaddedBatch& p = L.p;
  const Held<Mat>& key_pad = L.key_pad;
  L.self_mask = hold(values, {B, S, S}, [&] { return self_padding_mask(p.lens, S); });  // (B, S, S)
  // With values the fully masked rows are read off self_mask (and checked against the padding below).
  L.full = FullRows(values ? fully_masked_rows(*L.self_mask) : padded_rows(p.lens, S), B, S);
  L.self_scores = hold(values, {B, S, S}, [&] { return self_scores_of(*p.xs, d); });  // nothing masked
  const FullRows& full = L.full;
  const Held<Ten3> &self_mask = L.self_mask, &self_scores = L.self_scores;
  auto& s = out.stage("Self-attention over the padded batch: padded queries are masked too",
                      "self_mask = key_pad[:, :, None] | key_pad[:, None, :]   # (B, S, S)\n"
                      "self_scores = xs @ xs^T / sqrt(d)");
  s.in("xs", p.xs).in("key_pad", key_pad);
  if (!p.from_tokens) s.show("xs", p.xs, p.src_rows).detail();
  s.show("self_mask", self_mask, p.src_rows).show("self_scores", self_scores, p.src_rows).detail();
  if (values) {
    std::size_t mismatched = 0;  // rows whose "fully masked" differs from "the query is padding"
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t r = 0; r < S; ++r) mismatched += full.has(b, r) != ((*key_pad)(b, r) != 0.0f);
    s.check("a row of self_mask is fully masked exactly when its query is padding", "rows that differ",
            static_cast<double>(mismatched), Relation::AtMost, 0.0);
  }
  s.note(std::string(p.from_tokens ? "The encoder's own layer: the padded sentences attend to themselves (xs, "
                                     "the same tensor as k and v above). "
                                   : "Now a batch attends to itself (xs, drawn after v), as an encoder layer does. ") +
         "When the mask hides padded queries as well as padded keys (mask = pad_q | pad_k), "
         "a padded query has no key it may see: " +
         (full.empty() ? std::string("here no query is padding, so no row is fully masked.")
                       : std::to_string(full.size()) + " rows of self_mask are all 1, (sequence, row) = " +
                             rows_text(full.rows) + "."));
}

// Stage 7: what the fill does to a fully masked row. Weights (B, S, S) with three fills.
void stage_fully_masked_row(PaddingLesson& L, report::Report& out) {
  const std::size_t B = L.B, S = L.S, d = L.d;
  const bool values = L.values;
  const std::string& Ss = L.Ss;
  const PaddedBatch& p = L.p;
  const FullRows& full = L.full;
  const Held<Ten3> &self_mask = L.self_mask, &self_scores = L.self_scores;
  L.self_inf = hold(values, {B, S, S}, [&] { return masked_weights(*self_scores, *self_mask, kNegInf); });
  L.self_1e9 = hold(values, {B, S, S}, [&] { return masked_weights(*self_scores, *self_mask, kLargeFill); });
  L.self_d2l = hold(values, {B, S, S}, [&] { return masked_weights(*self_scores, *self_mask, kD2lFill); });
  // self_weights_inf @ xs (B, S, d): the first layer's output that stage 8 feeds to a second layer.
  L.self_context = hold(values, {B, S, d}, [&] { return matmul(*L.self_inf, *p.xs); });
  const Held<Ten3> &self_inf = L.self_inf, &self_1e9 = L.self_1e9, &self_d2l = L.self_d2l;
  auto& s = out.stage("A fully masked row: NaN with -inf, uniform with -1e9 and -1e6",
                      "self_weights_fill = softmax(self_scores.masked_fill(self_mask.bool(), fill), dim=-1)   "
                      "# fill = -inf, -1e9, -1e6");
  s.in("self_scores", self_scores).in("self_mask", self_mask);
  s.show("self_weights_inf", self_inf, p.src_rows).attention_weights().nan_from_masked_rows().picture_only();
  // The checks and the table below state the -1e9 rows; -1e6 gives the same numbers here when
  // nothing underflows differently (then the default text prints it once).
  s.show("self_weights_1e9", self_1e9, p.src_rows).attention_weights().picture_only();
  s.show("self_weights_d2l", self_d2l, p.src_rows).attention_weights();
  if (values && max_abs_diff(*self_d2l, *self_1e9) == 0.0) s.detail();
  if (values) {
    std::size_t nan_mismatch = 0;  // rows where "holds NaN" differs from "fully masked"
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t r = 0; r < S; ++r) nan_mismatch += row_has_nan(*self_inf, b, r) != full.has(b, r);
    s.check("-inf turns exactly the fully masked rows into NaN (0/0)", "rows that differ",
            static_cast<double>(nan_mismatch), Relation::AtMost, 0.0);
    s.check("-1e9 spreads every fully masked row evenly, 1/S each", "max |w - 1/S|",
            max_from_uniform(*self_1e9, full), Relation::AtMost, sum_tolerance(S));
    s.check("-1e6 spreads every fully masked row evenly, 1/S each", "max |w - 1/S|",
            max_from_uniform(*self_d2l, full), Relation::AtMost, sum_tolerance(S));
    // A uniform row's context is the plain mean of all S value rows, padding included.
    {
      const Ten3 context_1e9 = matmul(*self_1e9, *p.xs);  // (B, S, S) @ (B, S, d) -> (B, S, d)
      Ten3 mean_rows = xt::zeros<float>({B, S, d});  // (B, S, d): row r of sequence b = mean of xs[b]
      Ten3 uniform_ctx = mean_rows;                  // (B, S, d): self_1e9's context on those rows, else 0
      for (const MaskedRow& r : full.rows)
        for (std::size_t c = 0; c < d; ++c) {
          double sum = 0.0;
          for (std::size_t j = 0; j < S; ++j) sum += (*p.xs)(r.batch, j, c);
          mean_rows(r.batch, r.row, c) = static_cast<float>(sum / static_cast<double>(S));
          uniform_ctx(r.batch, r.row, c) = context_1e9(r.batch, r.row, c);
        }
      check_close(s, "with -1e9 a fully masked row's output is the mean of all S values, padding included",
                  uniform_ctx, mean_rows);
    }
    const double diff_1e9 = max_diff_visible_rows(*self_1e9, *self_inf, full);
    const double diff_d2l = max_diff_visible_rows(*self_d2l, *self_inf, full);
    s.question("do -1e9 and -1e6 give exactly the -inf weights on every row that has a visible key?", "max |diff|",
               std::fmax(diff_1e9, diff_d2l), Relation::AtMost, 0.0,
               fill_gap_reason(closest_fill_gap(*self_scores, *self_mask, kD2lFill)));
    auto outcome = [&](const Ten3& w) {
      if (full.empty()) return std::string("(no such row here)");
      std::size_t nan = 0;
      for (const MaskedRow& r : full.rows) nan += row_has_nan(w, r.batch, r.row);
      if (nan == full.size()) return std::string("NaN, every entry");
      return holds(max_from_uniform(w, full), Relation::AtMost, sum_tolerance(S)) ? "uniform, 1/" + Ss + " each"
                                                                                    : std::string("neither");
    };
    auto other_rows = [&](double diff) {
      return holds(diff, Relation::AtMost, 0.0) ? std::string("identical") : "differ by " + report::measured(diff);
    };
    std::string min_outcome, min_rows;  // finfo(float32).min, made and read here only
    {
      const Ten3 self_min = masked_weights(*self_scores, *self_mask, kFloatMin);  // (B, S, S)
      min_outcome = outcome(self_min);
      min_rows = other_rows(max_diff_visible_rows(self_min, *self_inf, full));
    }
    s.table({"fill", "used by", "masked rows become", "other rows vs -inf"},
            {{"-inf", "masked_fill examples, Raschka 3.5", outcome(*self_inf), "(the reference)"},
             {"-1e9", "the Llama-3.2-3B walk-through", outcome(*self_1e9), other_rows(diff_1e9)},
             {"-1e6", "d2l's masked_softmax", outcome(*self_d2l), other_rows(diff_d2l)},
             {"finfo(float32).min", "Hugging Face's masks", min_outcome, min_rows}});
  }
  s.note(full.empty()
             ? std::string("No row is fully masked here, so the four fills agree wherever a key is visible, "
                           "and NaN never appears.")
             : "In a fully masked row every entry is the fill. With -inf softmax computes exp(-inf - -inf) = "
               "exp(nan): the row is NaN, and so is its output. With a finite fill every entry equals the row's "
               "maximum, exp(0) = 1 each, and the row becomes 1/" + Ss + " everywhere: a finite average of "
               "padding that nothing should read. Neither is a meaningful answer; the difference is that NaN "
               "spreads (next stage).");
}

// Stage 8: what a model does about those rows.
void stage_what_a_model_does(const PaddingLesson& L, report::Report& out) {
  const std::size_t B = L.B, S = L.S, d = L.d;
  const bool values = L.values;
  const PaddedBatch& p = L.p;
  const FullRows& full = L.full;
  const Held<Mat>& key_pad = L.key_pad;
  const Held<Ten3> &self_mask = L.self_mask, &self_scores = L.self_scores, &self_inf = L.self_inf, &self_context = L.self_context;
  auto& s = out.stage("What a model does about padded queries: mask keys only, then never read those rows",
                      "keys_only = softmax(self_scores.masked_fill(key_pad[:, None, :].bool(), -inf), dim=-1)\n"
                      "out = (keys_only @ xs) * (1 - key_pad)[:, :, None]   # padded query rows set to 0");
  s.in("self_scores", self_scores).in("key_pad", key_pad);
  const Held<Ten3> keys_only =
      hold(values, {B, S, S}, [&] { return keys_only_weights(*self_scores, *key_pad, kNegInf); });  // (B, S, S)
  const Held<Ten3> out_zeroed = hold(values, {B, S, d}, [&] {
    Ten3 x = matmul(*keys_only, *p.xs);  // (B, S, S) @ (B, S, d) -> (B, S, d)
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t r = p.lens[b]; r < S; ++r)
        for (std::size_t c = 0; c < d; ++c) x(b, r, c) = 0.0f;
    return x;
  });
  s.show("keys_only", keys_only, p.src_rows).attention_weights().picture_only();
  s.show("out", out_zeroed, p.src_rows);
  if (values) {
    std::size_t keys_only_full = 0;  // rows of the keys-only mask with every key hidden: S per empty sequence
    for (std::size_t b = 0; b < B; ++b) {
      bool all = true;
      for (std::size_t c = 0; c < S && all; ++c) all = (*key_pad)(b, c) != 0.0f;
      if (all) keys_only_full += S;
    }
    s.check("with the keys-only mask no row is fully masked (every sequence has a real token)", "fully masked rows",
            static_cast<double>(keys_only_full), Relation::AtMost, 0.0);
    // Bound 0: a real query's row of the two masks is the same, and so is the arithmetic on it.
    s.check("the real queries' rows are the same as with self_mask (only the padded rows differ)", "max |diff|",
            max_diff_visible_rows(*keys_only, *self_inf, full), Relation::AtMost, 0.0);
    s.check("out holds no NaN or inf", "values not finite", static_cast<double>(nonfinite_values(*out_zeroed)),
            Relation::AtMost, 0.0);

    // A second layer: the same attention over each first layer's output, one (B, S, S) at a time.
    std::size_t nan_after_nan = 0, nan_after_fixed = 0, real_nan = 0;  // NaN rows after layer 2
    {
      const Ten3 layer2_nan = matmul(masked_weights(self_scores_of(*self_context, d), *self_mask, kNegInf),
                                     *self_context);  // (B, S, S) @ (B, S, d) -> (B, S, d): pad_q | pad_k, -inf
      nan_after_nan = nan_rows(layer2_nan);
      for (std::size_t b = 0; b < B; ++b)
        for (std::size_t r = 0; r < p.lens[b]; ++r) real_nan += row_has_nan(layer2_nan, b, r);
    }
    nan_after_fixed = nan_rows(matmul(keys_only_weights(self_scores_of(*out_zeroed, d), *key_pad, kNegInf),
                                      *out_zeroed));  // (B, S, S) @ (B, S, d) -> (B, S, d), keys only
    s.table({"layer 1 output x", "NaN rows", "after layer 2", "(x * (1 - key_pad)).sum()", "x[real].sum()"},
            {{"self_weights_inf @ xs", std::to_string(nan_rows(*self_context)), std::to_string(nan_after_nan),
              cell(weighted_sum(*self_context, *key_pad)), cell(selected_sum(*self_context, *key_pad))},
             {"out", std::to_string(nan_rows(*out_zeroed)), std::to_string(nan_after_fixed),
              cell(weighted_sum(*out_zeroed, *key_pad)), cell(selected_sum(*out_zeroed, *key_pad))}});
    s.question("do the NaN rows stay inside the padded queries after a second layer?", "real rows that are NaN",
               static_cast<double>(real_nan), Relation::AtMost, 0.0,
               "in layer 2 the NaN rows are keys and values that the real queries weight 0, and 0 * nan is nan");
    s.note(std::string("The table feeds each layer-1 output x to a second layer (the same attention again, with "
                       "self_mask and -inf for the first row, keys only for the second) and sums x the two ways a "
                       "masked loss does. ") +
           (full.empty() ? "With no padded query there is no NaN to spread. "
                         : "The NaN rows do not stay put: " + std::to_string(real_nan) + " real rows are NaN after "
                           "layer 2. Weighting a loss by 0 fails the same way (0 * nan is nan); leaving the rows out "
                           "does not. ") +
           "So models mask keys only, which leaves no row empty while every sequence has a token, and make "
           "sure nothing reads the padded query rows: their outputs are finite but meaningless.");
  }
  s.note("What nn.MultiheadAttention, nn.TransformerEncoder, the losses, d2l and Hugging Face do about padded "
         "rows is on the lesson's page, docs/padding.md, \"What PyTorch and the libraries do\".");
}

}  // namespace

// The lesson reads as its table of contents: one function per stage, in the order they print.
void lesson_padding(const LessonOptions& opts, report::Report& out) {
  PaddingLesson L(opts, out);
  stage_batch(L, out);
  stage_key_padding_mask(L, out);
  stage_scores(L, out);
  stage_softmax_inf(L, out);
  stage_d2l_fill(L, out);
  stage_self_attention(L, out);
  stage_fully_masked_row(L, out);
  stage_what_a_model_does(L, out);
}

// Teaching order 550: right after causal (500), the first kind of mask, and before heads (600);
// docs/padding.md is its page.
ATTN_REGISTER_LESSON({550, "padding", "Padding masks: sentences of different lengths in one batch",
                      "valid lengths, the key-padding mask, cross-attention over padded states, -inf vs -1e9 vs -1e6",
                      "d2l 11.3 (masked_softmax, valid_lens); PyTorch's key_padding_mask",
                      kSeed | kBatch | kSeqLen | kDIn | kTokens, lesson_padding,
                      {{"--queries", OptionType::Integer, 1, 4096, 3, "Decoder queries T in the cross-attention"},
                       {"--valid-lens", OptionType::IntegerList, 1, 65536, 1,
                        "Valid length of each sequence, e.g. 5,2 (default: S, then 3 shorter each, at least 1)"}}});

}  // namespace attn
