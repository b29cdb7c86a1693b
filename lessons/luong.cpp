// Lesson: Luong global attention (Luong, Pham, Manning 2015).
//
// A unidirectional RNN encoder reads the source sentence into one state h_s per word; an RNN
// decoder starts from the last of them. At every target step t the decoder first takes its RNN
// step to h_t, and only then attends: it scores h_t against every h_s (dot, general or concat),
// turns the scores into weights a_t with softmax, mixes the encoder states into the context c_t,
// and combines c_t with h_t into the attentional state h~_t = tanh(W_c [c_t ; h_t]). Bahdanau's
// decoder scores with the state before its step instead; the lesson sets the two orders side by
// side. It ends with the bridge to transformers: the general score with W_a = W_query W_key^T is
// exactly Q K^T, the unscaled self-attention scores.
//
// Legend: S source words, T_tgt target words, d_in embedding width, d_h hidden width (encoder
// and decoder), d_a concat alignment width (= d_h), d_k query/key width of the bridge.
#include <algorithm>
#include <cctype>
#include <cmath>

#include <xtensor/xview.hpp>

#include "core/embedding.hpp"
#include "core/linear.hpp"
#include "core/matmul.hpp"
#include "core/rnn.hpp"
#include "core/scoring.hpp"
#include "core/softmax.hpp"
#include "lessons/checks.hpp"
#include "lessons/registry.hpp"
#include "lessons/seq2seq.hpp"

namespace attn {
namespace {

constexpr std::uint64_t kDefaultSeed = 2015;  // the year of the paper
constexpr std::size_t kDk = 4;                // query/key width of the bridge

std::string num(std::size_t n) { return std::to_string(n); }

// Row i of a matrix: (n, m) -> (m,)
Vec row_of(const Mat& m, std::size_t i) { return xt::view(m, i, xt::all()); }

// [a ; b]: (n,), (m,) -> (n + m,), as torch.cat([a, b])
Vec concat(const Vec& a, const Vec& b) {
  Vec out = xt::empty<float>({a.size() + b.size()});  // (n + m,)
  std::copy(a.begin(), a.end(), out.begin());
  std::copy(b.begin(), b.end(), out.begin() + a.size());
  return out;
}

// Element-wise tanh, materialised (no lazy expression leaves this function).
Vec tanh_of(const Vec& v) {
  Vec out = v;  // (n,)
  for (float& x : out) x = std::tanh(x);
  return out;
}

// "the 3020861980, cat 108289031, ...": each distinct word's embedding seed, first seen first;
// a long sentence lists its first eight (a learner computes the rest with fnv1a32).
std::string seed_list(const std::vector<std::string>& words) {
  constexpr std::size_t kListed = 8;
  std::vector<std::string> seen;
  std::string out;
  for (const auto& word : words) {
    std::string w = word;
    for (char& ch : w) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (std::find(seen.begin(), seen.end(), w) != seen.end()) continue;
    seen.push_back(w);
    if (seen.size() <= kListed) out += (seen.size() > 1 ? ", " : "") + w + " " + std::to_string(word_seed(w));
  }
  if (seen.size() > kListed) out += " and " + num(seen.size() - kListed) + " more";
  return out;
}

// "sat (3)": a word with its 1-based position, so a repeated word is told apart.
std::string at(const std::vector<std::string>& words, std::size_t i) { return words[i] + " (" + num(i + 1) + ")"; }

// Index of the largest entry (the first one on ties).
std::size_t argmax(const Vec& v) {
  std::size_t best = 0;
  for (std::size_t j = 1; j < v.size(); ++j)
    if (v(j) > v(best)) best = j;
  return best;
}

// Index of the smallest entry (the first one on ties).
std::size_t argmin(const Vec& v) {
  std::size_t best = 0;
  for (std::size_t j = 1; j < v.size(); ++j)
    if (v(j) < v(best)) best = j;
  return best;
}

// Everything one decoder step computes. The three scores are kept for step 1; the rest of the
// lesson follows the general score.
struct Step {
  Vec h;                              // h_t (d_h,)
  Vec e_dot, e_general, e_concat;     // (S,) each
  Vec a;                              // softmax(e_general) (S,)
  Vec c;                              // c_t (d_h,)
  Vec ch;                             // [c_t ; h_t] (2 d_h,)
  Vec h_tilde;                        // h~_t (d_h,)
};

struct Weights {
  RnnCell encoder, decoder;
  Linear W_general;  // weight (d_h, d_h) = W_a of the general score
  Linear W_concat;   // weight (d_a, 2 d_h)
  Linear v_a;        // weight (1, d_a)
  Linear W_c;        // weight (d_h, 2 d_h)
};

// One Luong step: RNN update first, then attention with the new state h_t.
Step luong_step(const Weights& w, const Mat& h_enc, const Vec& y_prev, const Vec& h_prev) {
  Step s;
  s.h = rnn_step(w.decoder, y_prev, h_prev);  // (d_in,), (d_h,) -> (d_h,)
  s.e_dot = dot_scores(s.h, h_enc);           // (d_h,), (S, d_h) -> (S,)
  s.e_general = general_scores(s.h, w.W_general.weight, h_enc);  // (S,)
  const Vec v = row_of(w.v_a.weight, 0);                          // (1, d_a) -> (d_a,)
  s.e_concat = concat_scores(s.h, h_enc, w.W_concat.weight, v);   // (S,)
  s.a = softmax_rows(s.e_general);                                // (S,)
  s.c = weighted_sum(s.a, h_enc);                                 // (S,), (S, d_h) -> (d_h,)
  s.ch = concat(s.c, s.h);                                        // (2 d_h,)
  s.h_tilde = tanh_of(matvec(w.W_c.weight, s.ch));                // (d_h, 2 d_h) @ (2 d_h,) -> (d_h,)
  return s;
}

}  // namespace

void lesson_luong(const LessonOptions& opts, report::Report& out) {
  const Seq2SeqSetup set = seq2seq_setup(opts, kDefaultSeed);
  const std::size_t d_in = set.d_in, d_h = set.d_h, d_a = d_h, d_k = kDk;
  const std::size_t S = set.src.tokens.size(), T = set.tgt.tokens.size();
  const auto& src = set.src.tokens;
  const auto& tgt = set.tgt.tokens;
  const Mat& x = set.src.x;  // (S, d_in)
  const Mat& y = set.tgt.x;  // (T_tgt, d_in)

  const std::string h2 = num(2 * d_h);
  std::vector<std::string> setting = set.setting();
  setting.push_back("d_a " + num(d_a));
  setting.push_back("d_k " + num(d_k));
  out.header = {"luong", "Luong attention: dot, general and concat scores",
                "Luong, Pham, Manning (2015), Effective Approaches to Attention-based Neural "
                "Machine Translation, as told in Evolution of Attention Mechanism",
                setting,
                {"torch.manual_seed(" + std::to_string(set.seed) + ")",
                 "encoder = nn.RNNCell(" + num(d_in) + ", " + num(d_h) + ")",
                 "decoder = nn.RNNCell(" + num(d_in) + ", " + num(d_h) + ")",
                 "W_general = nn.Linear(" + num(d_h) + ", " + num(d_h) + ", bias=False)  # W_a = W_general.weight",
                 "W_concat = nn.Linear(" + h2 + ", " + num(d_a) + ", bias=False)",
                 "v_a = nn.Linear(" + num(d_a) + ", 1, bias=False)",
                 "W_c = nn.Linear(" + h2 + ", " + num(d_h) + ", bias=False)",
                 "W_query = torch.rand(" + num(d_h) + ", " + num(d_k) + ")",
                 "W_key = torch.rand(" + num(d_h) + ", " + num(d_k) + ")",
                 "# each word: torch.manual_seed(seed); torch.rand(" + num(d_in) + "), seeds in stage 1"}};

  // Drawn in exactly the order of the reproduce lines above.
  TorchGenerator gen(set.seed);
  Weights w;
  w.encoder = make_rnn_cell(gen, d_in, d_h);            // weight_ih (d_h, d_in), weight_hh (d_h, d_h)
  w.decoder = make_rnn_cell(gen, d_in, d_h);            // same shapes
  w.W_general = make_linear(gen, d_h, d_h, false);      // weight (d_h, d_h)
  w.W_concat = make_linear(gen, 2 * d_h, d_a, false);   // weight (d_a, 2 d_h)
  w.v_a = make_linear(gen, d_a, 1, false);              // weight (1, d_a)
  w.W_c = make_linear(gen, 2 * d_h, d_h, false);        // weight (d_h, 2 d_h)
  const Mat W_query = gen.rand(d_h, d_k);               // (d_h, d_k)
  const Mat W_key = gen.rand(d_h, d_k);                 // (d_h, d_k)

  const Vec y_0 = row_of(set.start.x, 0);  // embed(<s>): (1, d_in) -> (d_in,)
  {
    auto& s = out.stage("The sentences and their embeddings",
                        "x_s = embed(source word s)    y_t = embed(target word t)    y_0 = embed(<s>)");
    s.show("x", x, src).show("y", y, tgt).show("y_0", y_0);
    s.note(kUntrainedNote);
    s.note("Every word has its own vector, the same each time (a repeated word repeats it): "
           "torch.manual_seed(fnv1a32(word.lower())); torch.rand(" + num(d_in) + "). " +
           (opts.input ? set.src.origin + " Seeds" : "Seeds for the source: " + seed_list(src) + "; seeds") +
           " for the target: " + seed_list(tgt) + "; for <s>: " + std::to_string(word_seed("<s>")) + ".");
  }

  const Mat h_enc = rnn_forward(w.encoder, x);  // (S, d_in) -> (S, d_h)
  const Vec h_S = row_of(h_enc, S - 1);         // (d_h,)
  {
    auto& s = out.stage("Encoder: one state h_s per source word",
                        "h_s = tanh(W_ih x_s + b_ih + W_hh h_{s-1} + b_hh),  h_0 = 0");
    s.in("x", x);
    s.show("h_s", h_enc, src);
    s.note("One nn.RNNCell reads the sentence left to right (Luong's encoder is unidirectional; "
           "Bahdanau's reads it both ways). Row s has read words 1..s, so a repeated word gets a "
           "different state each time. The last row, h_S, is where the decoder starts.");
  }
  {
    auto& s = out.stage("The step order: Luong scores after the RNN step",
                        "Bahdanau:  s_{i-1} -> e_i -> alpha_i -> c_i -> s_i\n"
                        "Luong:     h_{t-1} -> h_t -> e_t -> a_t -> c_t -> h~_t");
    s.table({"step", "Bahdanau: query s_{i-1}", "Luong: query h_t"},
            {{"1", "e_ij = a(s_{i-1}, h_j)", "h_t = RNN(y_{t-1}, h_{t-1})"},
             {"2", "alpha_i = softmax(e_i)", "e_t(s) = score(h_t, h_s)"},
             {"3", "c_i = sum_j alpha_ij h_j", "a_t = softmax(e_t)"},
             {"4", "s_i = RNN([y_{i-1} ; c_i], s_{i-1})", "c_t = sum_s a_t(s) h_s"},
             {"5", "predict y_i from s_i, c_i", "h~_t = tanh(W_c [c_t ; h_t])"},
             {"6", "", "predict y_t from h~_t"}});
    s.note("Bahdanau's context is an input of the recurrence, so it has to be computed from the "
           "old state s_{i-1}, before the step. Luong runs the recurrence first and puts attention "
           "on top of its output: the query is the fresh h_t, which has already read y_{t-1}.");
    s.note("This lesson leaves out Luong's input feeding (h~_{t-1} joined to the next input), so "
           "the decoder RNN never sees a context: every h_t depends only on the target words and "
           "h_S, and attention only reads it.");
  }

  // The decoder with teacher forcing: step t reads y_{t-1} (y_0 = <s>) and produces y_t.
  std::vector<Step> steps;
  Vec h = h_S;  // h_0 = h_S: (d_h,)
  for (std::size_t t = 0; t < T; ++t) {
    const Vec y_prev = t == 0 ? y_0 : row_of(y, t - 1);  // (d_in,)
    steps.push_back(luong_step(w, h_enc, y_prev, h));
    h = steps.back().h;  // (d_h,)
  }
  const Step& first = steps.front();
  {
    auto& s = out.stage("Step 1: the decoder's RNN step comes first", "h_1 = RNN(y_0, h_0),  h_0 = h_S");
    s.in("y_0", y_0).in("h_0", h_S);
    s.show("h_1", first.h);
    s.note("h_0 is the last row of h_s in stage 2. Bahdanau would score step 1 with that state, "
           "before the step; Luong scores with h_1, which has already read <s>.");
  }

  Mat e_1 = xt::empty<float>({std::size_t{3}, S});  // (3, S): dot, general, concat
  xt::view(e_1, 0, xt::all()) = first.e_dot;
  xt::view(e_1, 1, xt::all()) = first.e_general;
  xt::view(e_1, 2, xt::all()) = first.e_concat;
  const Mat a_1 = softmax_rows(e_1);  // (3, S)
  const report::Labels kinds = {"dot", "general", "concat"};
  {
    auto& s = out.stage("Step 1: three scores for the same states",
                        "dot:      e_1(s) = h_1^T h_s\n"
                        "general:  e_1(s) = h_1^T W_a h_s\n"
                        "concat:   e_1(s) = v_a^T tanh(W_a [h_1 ; h_s])");
    s.in("h_1", first.h).in("h_s", h_enc).in("W_general.weight", w.W_general.weight);
    s.in("W_concat.weight", w.W_concat.weight).in("v_a.weight", w.v_a.weight);
    s.show("e_1", e_1, kinds, src);
    const std::string eqs[] = {"h_1 . h_s", "h_1 . (W_a h_s)", "v_a . tanh(W_a [h_1 ; h_s])"};
    std::vector<std::vector<std::string>> rows;
    for (std::size_t k = 0; k < 3; ++k) {
      const Vec e = row_of(e_1, k);  // (S,)
      const std::size_t lo = argmin(e), hi = argmax(e);
      rows.push_back({kinds[k], eqs[k], report::fixed(e(lo), 4), report::fixed(e(hi), 4), at(src, hi)});
    }
    s.table({"score", "computed as", "lowest", "highest", "highest at"}, rows);
    s.note("Dot has no parameters and needs h_t and h_s of the same width. General puts a trainable "
           "matrix between them: W_a h_s is W_general(h_s). Concat is Bahdanau's additive score "
           "fed with h_t: W_a [h_t ; h_s] = W_1 h_t + W_2 h_s, where W_a is W_concat.weight (the "
           "paper uses the letter W_a for both matrices). With random weights the three "
           "need not agree on anything; only training would make any of them meaningful.");
  }
  {
    auto& s = out.stage("Step 1: softmax turns each score row into weights", "a_1(s) = exp(e_1(s)) / sum_s' exp(e_1(s'))");
    s.in("e_1", e_1);
    s.show("a_1", a_1, kinds, src);
    s.attention_weights();
    check_rows_sum_to_one(s, "a_1", a_1);
    s.note("Each row is a distribution over the " + num(S) + " source words. From here on the "
           "lesson follows the general score (row 2): it is the one that leads to Q K^T.");
  }
  {
    auto& s = out.stage("Step 1: the context vector", "c_1 = sum_s a_1(s) h_s");
    s.in("a_1[general]", first.a).in("h_s", h_enc);
    s.show("c_1", first.c);
    s.note("A weighted average of the encoder states: c_1 has their width, d_h = " + num(d_h) +
           ", whatever the sentence length.");
  }
  {
    auto& s = out.stage("Step 1: the attentional state", "h~_1 = tanh(W_c [c_1 ; h_1])");
    s.in("c_1", first.c).in("h_1", first.h).in("W_c.weight", w.W_c.weight);
    s.show("[c_1 ; h_1]", first.ch).show("h~_1", first.h_tilde);
    s.note("h~_t is what Luong's decoder predicts from: p(y_t) = softmax(W_s h~_t) over the "
           "target vocabulary. There is no vocabulary here (nothing is trained), so the lesson "
           "stops at h~_t.");
  }

  Mat H_dec = xt::empty<float>({T, d_h});    // (T_tgt, d_h): h_t
  Mat C = xt::empty<float>({T, d_h});        // (T_tgt, d_h): c_t
  Mat H_tilde = xt::empty<float>({T, d_h});  // (T_tgt, d_h): h~_t
  Mat alignment = xt::empty<float>({T, S});  // (T_tgt, S): a_t, general score
  Mat general = xt::empty<float>({T, S});    // (T_tgt, S): e_t, general score
  for (std::size_t t = 0; t < T; ++t) {
    xt::view(H_dec, t, xt::all()) = steps[t].h;
    xt::view(C, t, xt::all()) = steps[t].c;
    xt::view(H_tilde, t, xt::all()) = steps[t].h_tilde;
    xt::view(alignment, t, xt::all()) = steps[t].a;
    xt::view(general, t, xt::all()) = steps[t].e_general;
  }
  {
    auto& s = out.stage("Every step the same way (general score)",
                        "h_t = RNN(y_{t-1}, h_{t-1});  a_t = softmax(h_t^T W_a h_s);\n"
                        "c_t = sum_s a_t(s) h_s;  h~_t = tanh(W_c [c_t ; h_t])");
    s.in("y", y).in("h_s", h_enc);
    std::vector<std::vector<std::string>> rows;
    for (std::size_t t = 0; t < T; ++t) {
      const std::size_t top = argmax(steps[t].a);
      rows.push_back({num(t + 1), t == 0 ? "<s>" : tgt[t - 1], tgt[t], at(src, top), report::fixed(steps[t].a(top), 4)});
    }
    s.table({"t", "reads y_{t-1}", "produces y_t", "most weight on", "a_t there"}, rows);
    s.show("h_t", H_dec, tgt).show("c_t", C, tgt).show("h~_t", H_tilde, tgt);
    s.note("One row per target step, labelled with the word it produces; row 1 is step 1 above. "
           "The steps run one after another because h_t needs h_{t-1}; only the attention inside "
           "a step looks at all source words at once.");
  }
  {
    auto& s = out.stage("The alignment matrix", "alignment[t, s] = a_t(s)");
    s.in("a_t", alignment);
    s.show("alignment", alignment, tgt, src);
    s.attention_weights();
    check_rows_sum_to_one(s, "alignment", alignment);
    const float uniform = 1.0f / static_cast<float>(S);
    float spread = 0.0f, span = 0.0f;  // largest |a - 1/S|; widest range of one row's scores
    for (std::size_t t = 0; t < T; ++t) {
      const Vec e = row_of(general, t);  // (S,)
      span = std::fmax(span, e(argmax(e)) - e(argmin(e)));
      for (std::size_t j = 0; j < S; ++j) spread = std::fmax(spread, std::fabs(alignment(t, j) - uniform));
    }
    std::string why = "Every weight is within " + report::fixed(spread, 4) + " of 1/S = " +
                      report::fixed(uniform, 4) + ", because no row's scores span more than " +
                      report::fixed(span, 4) + " and softmax only sharpens large differences.";
    if (spread < 0.5f * uniform)
      why += " That is why the c_t rows in stage 9 look alike: each is close to the mean of the h_s.";
    s.note("Rows are target words, columns source words. A trained model shows a near-diagonal "
           "band here (le -> the, chat -> cat, ...); these random weights show the mechanism, not "
           "an alignment.");
    s.note(why);
  }
  {
    const std::size_t general_p = d_h * d_h, concat_p = d_a * 2 * d_h + d_a, wc_p = d_h * 2 * d_h;
    auto& s = out.stage("What each score costs",
                        "dot: 0    general: d_h*d_h    concat: d_a*2d_h + d_a    W_c: d_h*2d_h");
    s.table({"part", "shapes", "parameters", "multiply-adds per step"},
            {{"dot score", "-", "0", num(S * d_h)},
             {"general score", "W_a " + shape_str({d_h, d_h}), num(general_p), num(d_h * d_h + S * d_h)},
             {"concat score", "W_a " + shape_str({d_a, 2 * d_h}) + ", v_a " + shape_str({d_a}), num(concat_p),
              num(S * (d_a * 2 * d_h + d_a))},
             {"W_c (all three)", shape_str({d_h, 2 * d_h}), num(wc_p), num(wc_p)},
             {"each RNN cell", "W_ih, W_hh, b_ih, b_hh", num(w.decoder.parameters()),
              num(d_h * d_in + d_h * d_h)}});
    s.note("Multiply-adds: dot is S dot products of length d_h; general computes h_t^T W_a once "
           "per step, then S dot products; concat, computed naively, runs W_a on every [h_t ; h_s] "
           "pair. Since W_a [h_t ; h_s] = W_1 h_t + W_2 h_s and W_2 h_s does not change with t, a "
           "real decoder computes it once per sentence (as Bahdanau's U_a h_j), leaving d_a*d_h + "
           "S*d_a = " + num(d_a * d_h + S * d_a) + " per step, plus S*d_a tanh.");
  }

  // The bridge: a general score whose W_a is factored through d_k.
  const Mat W_a = matmul_bt(W_query, W_key);  // (d_h, d_k) @ (d_k, d_h) -> (d_h, d_h)
  Mat bridged = xt::empty<float>({T, S});      // (T_tgt, S)
  for (std::size_t t = 0; t < T; ++t) xt::view(bridged, t, xt::all()) = general_scores(steps[t].h, W_a, h_enc);
  {
    auto& s = out.stage("The bridge: a general score with W_a = W_query W_key^T",
                        "W_a = W_query @ W_key^T\n"
                        "general_scores[t, s] = h_t^T W_a h_s    (every h_t against every h_s)");
    s.in("h_t", H_dec).in("h_s", h_enc);
    s.show("W_query", W_query).show("W_key", W_key).show("W_a", W_a);
    s.show("general_scores", bridged, tgt, src);
    s.note("Two (d_h, d_k) matrices, d_k = " + num(d_k) + ", multiply into a (d_h, d_h) W_a of rank "
           "at most d_k. It is a new matrix, not W_general, so these scores differ from stage 10's; "
           "they are still Luong's general scores, computed one decoder state at a time exactly "
           "as in step 1.");
  }
  const Mat Q = matmul(H_dec, W_query);  // (T_tgt, d_h) @ (d_h, d_k) -> (T_tgt, d_k)
  const Mat K = matmul(h_enc, W_key);    // (S, d_h) @ (d_h, d_k) -> (S, d_k)
  const Mat QK = matmul_bt(Q, K);        // (T_tgt, d_k) @ (d_k, S) -> (T_tgt, S)
  {
    auto& s = out.stage("The same numbers as Q K^T",
                        "H_dec = the h_t as rows    H_enc = the h_s as rows\n"
                        "Q = H_dec @ W_query    K = H_enc @ W_key\n"
                        "Q @ K^T = H_dec @ W_query @ W_key^T @ H_enc^T = H_dec @ W_a @ H_enc^T");
    s.in("H_dec", H_dec).in("H_enc", h_enc);
    s.show("Q", Q, tgt).show("K", K, src).show("Q @ K^T", QK, tgt, src);
    // Not bit for bit: the products are summed in another order, so the bound is float32 rounding.
    check_close(s, "Q @ K^T equals general_scores", QK, bridged);
    s.note("Project the decoder states into queries and the encoder states into keys, and the "
           "general score is the matrix of query-key dot products: the unscaled attention scores "
           "of a transformer, here with queries from one sequence and keys from another "
           "(cross-attention).");
    s.note("Self-attention then takes Q and K from the same sequence, divides the scores by "
           "sqrt(d_k) before softmax, and drops the recurrence: with no h_{t-1} to wait for, all "
           "T rows of Q @ K^T come from one matrix product.");
  }
}

}  // namespace attn
