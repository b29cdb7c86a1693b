// Lesson: Luong global attention (Luong, Pham, Manning 2015).
//
// A unidirectional RNN encoder reads the source sentence into one state h_enc_s per word; an RNN
// decoder starts from the last of them. At every target step t the decoder first takes its RNN
// step to h_t, and only then attends: it scores h_t against every h_enc_s (dot, general or concat),
// turns the scores into weights a_t with softmax, mixes the encoder states into the context c_t,
// and combines c_t with h_t into the attentional state h~_t = tanh(W_att [c_t ; h_t]). Bahdanau's
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
#include "lesson_kit/recipe.hpp"
#include "lesson_kit/checks.hpp"
#include "lesson_kit/registry.hpp"
#include "lesson_kit/rnn_external.hpp"
#include "lesson_kit/seq2seq.hpp"

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
  Linear W_g;        // weight (d_h, d_h): the general score's matrix (the paper's W_a)
  Linear W_c;        // weight (d_a, 2 d_h): the concat score's matrix (the paper's W_a)
  Linear v_c;        // weight (1, d_a): the concat score's vector (the paper's v_a)
  Linear W_att;      // weight (d_h, 2 d_h): Luong's W_c, the attentional layer
};

// One Luong step: RNN update first, then attention with the new state h_t.
Step luong_step(const Weights& w, const Mat& h_enc, const Vec& y_prev, const Vec& h_prev) {
  Step s;
  s.h = rnn_step(w.decoder, y_prev, h_prev);  // (d_in,), (d_h,) -> (d_h,)
  s.e_dot = dot_scores(s.h, h_enc);           // (d_h,), (S, d_h) -> (S,)
  s.e_general = general_scores(s.h, w.W_g.weight, h_enc);  // (S,)
  const Vec v = row_of(w.v_c.weight, 0);                          // (1, d_a) -> (d_a,)
  s.e_concat = concat_scores(s.h, h_enc, w.W_c.weight, v);   // (S,)
  s.a = softmax_rows(s.e_general);                                // (S,)
  s.c = weighted_sum(s.a, h_enc);                                 // (S,), (S, d_h) -> (d_h,)
  s.ch = concat(s.c, s.h);                                        // (2 d_h,)
  s.h_tilde = tanh_of(matvec(w.W_att.weight, s.ch));                // (d_h, 2 d_h) @ (2 d_h,) -> (d_h,)
  return s;
}

// --states: the encoder states and the decoder state(s) come from files, so the lesson starts
// at the scores. The scoring weights come from --weights, or are drawn from the seed.
// What the stages of that shorter path share.
struct StatesLesson {
  const LessonOptions& opts;
  RnnStates st;  // h_enc and h_t from --states, with their labels
  std::size_t S;
  std::size_t T;
  std::size_t d_enc;
  std::size_t d_t;
  bool from_files;  // W_g, W_c, v_c from --weights
  std::uint64_t seed;
  Mat W_g;  // (d_t, d_enc)
  Mat W_c;  // (d_a, d_t + d_enc), as nn.Linear keeps it
  Vec v_c;  // (d_a,)
  std::size_t d_a;
  bool dot;  // the dot score needs equal widths
  std::string dir;  // --states DIR
  Mat e_dot;  // (T, S)
  Mat e_general;  // (T, S)
  Mat e_concat;  // (T, S)
  Mat a;  // (T, S)
  Mat c;  // (T, d_enc)
};

// The states, the scoring weights (drawn or from --weights), the header, and every query scored.
StatesLesson states_setup(const LessonOptions& opts, report::Report& out) {
  const RnnStates st = rnn_states(opts, "h_t", "h_enc_");
  const std::size_t S = st.S, T = st.T, d_enc = st.d_enc, d_t = st.d_s;
  const bool from_files = !opts.weights.empty();
  if (from_files && opts.seed)
    throw UsageError("--seed has nothing to draw: --states and --weights give every tensor", "--seed",
                     "no --seed with --states and --weights", "--seed " + num(*opts.seed));
  const std::uint64_t seed = opts.seed.value_or(kDefaultSeed);

  Mat W_g, W_c;  // (d_t, d_enc); (d_a, d_t + d_enc) as nn.Linear keeps it
  Vec v_c;       // (d_a,)
  std::size_t d_a = d_t;  // drawn weights: d_a = d_t, as the seeded lesson's d_a = d_h
  if (from_files) {
    W_g = bilinear_weight(opts, "W_g", {"d_t", d_t}, {"d_enc", d_enc});   // (d_t, d_enc)
    W_c = rnn_weight(opts, "W_c", {"d_a", 0}, {"d_t + d_enc", d_t + d_enc});  // (d_a, d_t + d_enc)
    d_a = W_c.shape()[0];
    v_c = rnn_vector(opts, "v_c", {"d_a", d_a});  // (d_a,)
  } else {
    TorchGenerator gen(seed);
    W_g = make_linear(gen, d_enc, d_t, false).weight;          // (d_t, d_enc)
    W_c = make_linear(gen, d_t + d_enc, d_a, false).weight;    // (d_a, d_t + d_enc)
    v_c = row_of(make_linear(gen, d_a, 1, false).weight, 0);  // (1, d_a) -> (d_a,)
  }
  const bool dot = d_t == d_enc;  // the dot score needs equal widths

  const std::string dir = opts.states_dir;
  std::vector<std::string> setting = {"states from " + dir, "source states " + num(S),
                                      "decoder states " + num(T), "d_enc " + num(d_enc), "d_t " + num(d_t),
                                      "d_a " + num(d_a)};
  std::vector<std::string> reproduce = {"h_enc = " + py_load(dir, "H") + "  # (S, d_enc)",
                                        "h_t = " + py_load(dir, "h_t") + (st.one_query ? "  # (d_t,)" : "  # (T, d_t)")};
  if (from_files) {
    setting.push_back(layout_name(opts));
    reproduce.push_back("W_g = " + py_load(opts.weights_dir, "W_g") + "  # (d_t, d_enc), either layout");
    reproduce.push_back("W_c = " + py_load(opts.weights_dir, "W_c", !opts.weights_torch_layout) + "  # (d_a, d_t + d_enc)");
    reproduce.push_back("v_c = " + py_load(opts.weights_dir, "v_c") + ".reshape(-1)  # (d_a,)");
  } else {
    setting.insert(setting.begin() + 1, "seed " + num(seed) + " (the scoring weights)");
    reproduce.push_back("torch.manual_seed(" + num(seed) + ")");
    reproduce.push_back("W_g = nn.Linear(" + num(d_enc) + ", " + num(d_t) + ", bias=False).weight.detach()");
    reproduce.push_back("W_c = nn.Linear(" + num(d_t + d_enc) + ", " + num(d_a) + ", bias=False).weight.detach()");
    reproduce.push_back("v_c = nn.Linear(" + num(d_a) + ", 1, bias=False).weight.detach().reshape(-1)");
  }
  if (dot) reproduce.push_back("e_dot = h_t @ h_enc.T");
  reproduce.push_back("e_general = h_t @ W_g @ h_enc.T");
  reproduce.push_back("e_concat = torch.tanh((h_t @ W_c[:, :" + num(d_t) + "].T).unsqueeze(-2) + h_enc @ W_c[:, " +
                      num(d_t) + ":].T) @ v_c");
  reproduce.push_back("a = torch.softmax(e_general, dim=-1); c = a @ h_enc");
  out.header = {"luong", "Luong attention: dot, general and concat scores",
                "Luong, Pham, Manning (2015), Effective Approaches to Attention-based Neural "
                "Machine Translation, as told in Evolution of Attention Mechanism",
                setting, recipe::with_imports(reproduce)};

  Mat e_dot = xt::zeros<float>({T, S}), e_general = xt::empty<float>({T, S}), e_concat = xt::empty<float>({T, S});  // (T, S) each
  for (std::size_t t = 0; t < T; ++t) {
    const Vec h = row_of(st.queries, t);  // (d_t,)
    if (dot) xt::view(e_dot, t, xt::all()) = dot_scores(h, st.H);              // (S,)
    xt::view(e_general, t, xt::all()) = general_scores(h, W_g, st.H);          // (S,)
    xt::view(e_concat, t, xt::all()) = concat_scores(h, st.H, W_c, v_c);       // (S,)
  }
  const Mat a = softmax_rows(e_general);  // (T, S)
  Mat c = xt::empty<float>({T, d_enc});   // (T, d_enc)
  for (std::size_t t = 0; t < T; ++t) xt::view(c, t, xt::all()) = weighted_sum(row_of(a, t), st.H);  // (d_enc,)
  return StatesLesson{opts, st, S, T, d_enc, d_t, from_files, seed, W_g, W_c, v_c, d_a, dot, dir, e_dot, e_general,
                   e_concat, a, c};
}

void stage_states(const StatesLesson& r, report::Report& out) {
  const std::size_t S = r.S, T = r.T, d_enc = r.d_enc, d_t = r.d_t;
  const RnnStates& st = r.st;
  const std::string& dir = r.dir;
  auto& s = out.stage("The encoder and decoder states, from --states",
                      "h_enc_s = row s of H    (S, d_enc)\n"
                      "h_t = the decoder state that asks    (d_t,), or one per row (T, d_t)");
  s.show("h_enc", st.H, st.src);
  if (st.one_query) s.show("h_t", row_of(st.queries, 0));
  else s.show("h_t", st.queries, st.tgt);
  s.note("The lesson's own embeddings, encoder and decoder are skipped: h_enc comes from " + dir +
         "/H.npy, " + shape_str({S, d_enc}) + ", and h_t from " + dir + "/h_t.npy, " +
         (st.one_query ? shape_str({d_t}) : shape_str({T, d_t})) +
         ". In Luong's model h_t is the decoder's state after its RNN step; the lesson scores "
         "with whatever the files hold.");
}

void stage_states_scores(const StatesLesson& r, report::Report& out) {
  const LessonOptions& opts = r.opts;
  const std::size_t d_enc = r.d_enc, d_t = r.d_t, d_a = r.d_a;
  const RnnStates& st = r.st;
  const bool from_files = r.from_files;
  const std::uint64_t seed = r.seed;
  const Mat& W_g = r.W_g;
  const Mat& W_c = r.W_c;
  const Vec& v_c = r.v_c;
  const bool dot = r.dot;
  const Mat& e_dot = r.e_dot;
  const Mat& e_general = r.e_general;
  const Mat& e_concat = r.e_concat;
  auto& s = out.stage("Three scores for the same states",
                      "dot:      e_dot(s) = h_t^T h_enc_s\n"
                      "general:  e_general(s) = h_t^T W_g h_enc_s\n"
                      "concat:   e_concat(s) = v_c^T tanh(W_c [h_t ; h_enc_s])");
  if (st.one_query) s.in("h_t", row_of(st.queries, 0));
  else s.in("h_t", st.queries);
  s.in("h_enc", st.H);
  s.show("W_g", W_g).show("W_c", W_c).show("v_c", v_c);
  s.note(from_files ? "W_g, W_c and v_c come from --weights " + opts.weights_dir + " (W_c " +
                          (opts.weights_torch_layout ? "in torch layout (out, in)"
                                                     : "in math layout (in, out), shown transposed") +
                          "; W_g is read as it stands in h_t^T W_g h_enc_s, (d_t, d_enc), in either layout)."
                    : "W_g, W_c and v_c are drawn after torch.manual_seed(" + num(seed) +
                          ") as nn.Linear weights, d_a = d_t = " + num(d_a) +
                          "; --weights DIR gives your own (W_g.npy, W_c.npy, v_c.npy).");
  for (const auto& [name, e] : {std::pair<const char*, const Mat*>{"e_dot", &e_dot}, {"e_general", &e_general},
                                {"e_concat", &e_concat}}) {
    if (std::string(name) == "e_dot" && !dot) continue;
    if (st.one_query) s.show(name, row_of(*e, 0), {}, st.src);
    else s.show(name, *e, st.tgt, st.src);
  }
  if (!dot)
    s.note("No dot score: it needs h_t and h_enc_s of the same width, and here d_t = " + num(d_t) +
           " but d_enc = " + num(d_enc) + ". General and concat bridge the widths with their matrices.");
}

void stage_states_context(const StatesLesson& r, report::Report& out) {
  const std::size_t d_enc = r.d_enc;
  const RnnStates& st = r.st;
  const bool from_files = r.from_files;
  const Mat& e_general = r.e_general;
  const Mat& a = r.a;
  const Mat& c = r.c;
  auto& s = out.stage("Weights and context (general score)", "a = softmax(e_general)\nc = sum_s a(s) h_enc_s = a @ h_enc");
  if (st.one_query) s.in("e_general", row_of(e_general, 0));
  else s.in("e_general", e_general);
  s.in("h_enc", st.H);
  if (st.one_query) s.show("a", row_of(a, 0), {}, st.src);
  else s.show("a", a, st.tgt, st.src);
  s.attention_weights(report::Training::drawn_unless(from_files),
                      "target words (decoder steps)", "source words (encoder states)", "a (attention weight)");
  if (st.one_query) s.show("c", row_of(c, 0));
  else s.show("c", c, st.tgt);
  check_rows_sum_to_one(s, "a", a);
  const Vec a0 = row_of(a, 0);  // (S,)
  const std::size_t top = argmax(a0);
  s.note("c is as wide as one encoder state, d_enc = " + num(d_enc) + ". " +
         (st.one_query ? "The largest weight, " + report::fixed(a0(top), 4) + ", is on " + at(st.src, top) + "."
                       : std::string("Row t of a weighs h_enc for decoder state t.")) +
         " The attentional state h~_t = tanh(W_att [c_t ; h_t]) needs the decoder's own layer, which is "
         "not in the files (run without --states for the whole model).");
}

// The --states path as its table of contents.
void luong_from_states(const LessonOptions& opts, report::Report& out) {
  const StatesLesson r = states_setup(opts, out);
  stage_states(r, out);
  stage_states_scores(r, out);
  stage_states_context(r, out);
}

// What the stages of the seeded model share: the sentences, the modules, and every step's tensors.
struct LuongLesson {
  const LessonOptions& opts;
  Seq2SeqSetup set;  // the sentences, their embeddings and the sizes
  std::size_t d_in;
  std::size_t d_h;
  std::size_t d_k;
  std::size_t S;
  std::size_t T;
  bool from_files;  // W_g, W_c, v_c from --weights
  std::size_t d_a;
  std::string h2;  // "2 d_h"
  Weights w;  // every module, drawn in the reproduce lines' order
  Mat W_query;  // (d_h, d_k)
  Mat W_key;  // (d_h, d_k)
  Vec y_0;  // (d_in,): embed(<s>)
  Mat h_enc;  // (S, d_h)
  Vec h_enc_S;  // (d_h,)
  std::vector<Step> steps;  // one per target word
  Mat e_1;  // (3, S): dot, general, concat
  Mat a_1;  // (3, S)
  report::Labels kinds;  // the three scores' names
  Mat H_dec;  // (T_tgt, d_h): h_t
  Mat C;  // (T_tgt, d_h): c_t
  Mat H_tilde;  // (T_tgt, d_h): h~_t
  Mat alignment;  // (T_tgt, S): a_t, general score
  Mat general;  // (T_tgt, S): e_t, general score
  Mat W_a;  // (d_h, d_h) = W_query W_key^T
  Mat bridged;  // (T_tgt, S)
  Mat Q;  // (T_tgt, d_k)
  Mat K;  // (S, d_k)
  Mat QK;  // (T_tgt, S)
};

// The sentences, the header, every module drawn in the reproduce lines' order, and the whole forward
// pass: the encoder, every decoder step, step 1's three scores, the stacked steps and the bridge.
LuongLesson setup(const LessonOptions& opts, report::Report& out) {
  const Seq2SeqSetup set = seq2seq_setup(opts, kDefaultSeed);
  const std::size_t d_in = set.d_in, d_h = set.d_h, d_k = kDk;
  const std::size_t S = set.src.tokens.size(), T = set.tgt.tokens.size();
  const Mat& x = set.src.x;  // (S, d_in)
  const Mat& y = set.tgt.x;  // (T_tgt, d_in)

  // --weights: the two scores' weights from files, read before anything is drawn (d_a from W_c.npy).
  const bool from_files = !opts.weights.empty();
  const Mat W_g_file = from_files ? bilinear_weight(opts, "W_g", {"d_h", d_h}, {"d_h", d_h}) : Mat{};  // (d_h, d_h)
  const Mat W_c_file = from_files ? rnn_weight(opts, "W_c", {"d_a", 0}, {"2 d_h", 2 * d_h}) : Mat{};   // (d_a, 2 d_h)
  const std::size_t d_a = from_files ? W_c_file.shape()[0] : d_h;  // d_a = d_h unless W_c.npy says otherwise
  const Vec v_c_file = from_files ? rnn_vector(opts, "v_c", {"d_a", d_a}) : Vec{};  // (d_a,)

  const std::string h2 = num(2 * d_h);
  std::vector<std::string> setting = set.setting();
  setting.push_back("d_a " + num(d_a));
  setting.push_back("d_k " + num(d_k));
  if (from_files) setting.push_back(layout_name(opts));
  std::vector<std::string> reproduce = {"torch.manual_seed(" + std::to_string(set.seed) + ")",
                                        "encoder = nn.RNNCell(" + num(d_in) + ", " + num(d_h) + ")",
                                        "decoder = nn.RNNCell(" + num(d_in) + ", " + num(d_h) + ")",
                                        "W_g = nn.Linear(" + num(d_h) + ", " + num(d_h) + ", bias=False)",
                                        "W_c = nn.Linear(" + h2 + ", " + num(d_a) + ", bias=False)",
                                        "v_c = nn.Linear(" + num(d_a) + ", 1, bias=False)",
                                        "W_att = nn.Linear(" + h2 + ", " + num(d_h) + ", bias=False)",
                                        "W_query = torch.rand(" + num(d_h) + ", " + num(d_k) + ")",
                                        "W_key = torch.rand(" + num(d_h) + ", " + num(d_k) + ")"};
  if (from_files) {
    reproduce.push_back("W_g.weight.data = " + py_load(opts.weights_dir, "W_g") + "  # drawn, then replaced");
    reproduce.push_back("W_c.weight.data = " + py_load(opts.weights_dir, "W_c", !opts.weights_torch_layout));
    reproduce.push_back("v_c.weight.data = " + py_load(opts.weights_dir, "v_c") + ".reshape(1, -1)");
  }
  if (opts.input) reproduce.push_back(py_input_line(*opts.input));
  reproduce.push_back("# each " + std::string(opts.input ? "target " : "") + "word: torch.manual_seed(seed); torch.rand(" +
                      num(d_in) + "), seeds in stage 1");
  out.header = {"luong", "Luong attention: dot, general and concat scores",
                "Luong, Pham, Manning (2015), Effective Approaches to Attention-based Neural "
                "Machine Translation, as told in Evolution of Attention Mechanism",
                setting, recipe::with_imports(reproduce)};

  // Drawn in exactly the order of the reproduce lines above; a weight from --weights is drawn
  // too (as in PyTorch, where the module exists before its weight is replaced).
  TorchGenerator gen(set.seed);
  Weights w;
  w.encoder = make_rnn_cell(gen, d_in, d_h);          // weight_ih (d_h, d_in), weight_hh (d_h, d_h)
  w.decoder = make_rnn_cell(gen, d_in, d_h);          // same shapes
  w.W_g = make_linear(gen, d_h, d_h, false);          // weight (d_h, d_h)
  w.W_c = make_linear(gen, 2 * d_h, d_a, false);      // weight (d_a, 2 d_h)
  w.v_c = make_linear(gen, d_a, 1, false);            // weight (1, d_a)
  w.W_att = make_linear(gen, 2 * d_h, d_h, false);    // weight (d_h, 2 d_h)
  const Mat W_query = gen.rand(d_h, d_k);             // (d_h, d_k)
  const Mat W_key = gen.rand(d_h, d_k);               // (d_h, d_k)
  if (from_files) {
    w.W_g.weight = W_g_file;                               // (d_h, d_h)
    w.W_c.weight = W_c_file;                               // (d_a, 2 d_h)
    w.v_c.weight = xt::empty<float>({std::size_t{1}, d_a});  // (1, d_a)
    std::copy(v_c_file.begin(), v_c_file.end(), w.v_c.weight.begin());
  }

  const Vec y_0 = row_of(set.start.x, 0);  // embed(<s>): (1, d_in) -> (d_in,)

  const Mat h_enc = rnn_forward(w.encoder, x);  // (S, d_in) -> (S, d_h)
  const Vec h_enc_S = row_of(h_enc, S - 1);     // (d_h,)

  // The decoder with teacher forcing: step t reads y_{t-1} (y_0 = <s>) and produces y_t.
  std::vector<Step> steps;
  Vec h = h_enc_S;  // h_0 = h_enc_S: (d_h,)
  for (std::size_t t = 0; t < T; ++t) {
    const Vec y_prev = t == 0 ? y_0 : row_of(y, t - 1);  // (d_in,)
    steps.push_back(luong_step(w, h_enc, y_prev, h));
    h = steps.back().h;  // (d_h,)
  }
  const Step& first = steps.front();

  Mat e_1 = xt::empty<float>({std::size_t{3}, S});  // (3, S): dot, general, concat
  xt::view(e_1, 0, xt::all()) = first.e_dot;
  xt::view(e_1, 1, xt::all()) = first.e_general;
  xt::view(e_1, 2, xt::all()) = first.e_concat;
  const Mat a_1 = softmax_rows(e_1);  // (3, S)
  const report::Labels kinds = {"dot", "general", "concat"};

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

  // The bridge: a general score whose W_a is factored through d_k.
  const Mat W_a = matmul_bt(W_query, W_key);  // (d_h, d_k) @ (d_k, d_h) -> (d_h, d_h)
  Mat bridged = xt::empty<float>({T, S});      // (T_tgt, S)
  for (std::size_t t = 0; t < T; ++t) xt::view(bridged, t, xt::all()) = general_scores(steps[t].h, W_a, h_enc);
  const Mat Q = matmul(H_dec, W_query);  // (T_tgt, d_h) @ (d_h, d_k) -> (T_tgt, d_k)
  const Mat K = matmul(h_enc, W_key);    // (S, d_h) @ (d_h, d_k) -> (S, d_k)
  const Mat QK = matmul_bt(Q, K);        // (T_tgt, d_k) @ (d_k, S) -> (T_tgt, S)
  return LuongLesson{opts, set, d_in, d_h, d_k, S, T, from_files, d_a, h2, w, W_query, W_key, y_0, h_enc,
                  h_enc_S, steps, e_1, a_1, kinds, H_dec, C, H_tilde, alignment, general, W_a, bridged, Q, K, QK};
}

void stage_embeddings(const LuongLesson& r, report::Report& out) {
  const LessonOptions& opts = r.opts;
  const std::size_t d_in = r.d_in;
  const Seq2SeqSetup& set = r.set;
  const Vec& y_0 = r.y_0;
  const auto& src = r.set.src.tokens;
  const auto& tgt = r.set.tgt.tokens;
  const Mat& x = r.set.src.x;  // (S, d_in)
  const Mat& y = r.set.tgt.x;  // (T_tgt, d_in)
  auto& s = out.stage("The sentences and their embeddings",
                      "x_s = embed(source word s)    y_t = embed(target word t)    y_0 = embed(<s>)");
  s.show("x", x, src).show("y", y, tgt).detail().show("y_0", y_0).detail();
  s.note(kUntrainedNote);
  s.note("Every word has its own vector, the same each time (a repeated word repeats it): "
         "torch.manual_seed(fnv1a32(word.lower())); torch.rand(" + num(d_in) + "). " +
         (opts.input ? set.src.origin + " Seeds" : "Seeds for the source: " + seed_list(src) + "; seeds") +
         " for the target: " + seed_list(tgt) + "; for <s>: " + std::to_string(word_seed("<s>")) + ".");
}

void stage_encoder(const LuongLesson& r, report::Report& out) {
  const Mat& h_enc = r.h_enc;
  const auto& src = r.set.src.tokens;
  const Mat& x = r.set.src.x;  // (S, d_in)
  auto& s = out.stage("Encoder: one state h_enc_s per source word",
                      "h_enc_s = tanh(W_ih x_s + b_ih + W_hh h_enc_{s-1} + b_hh),  h_enc_0 = 0");
  s.in("x", x);
  s.show("h_enc", h_enc, src);
  s.note("One nn.RNNCell reads the sentence left to right (Luong's encoder is unidirectional; "
         "Bahdanau's reads it both ways). Row s has read words 1..s, so a repeated word gets a "
         "different state each time. The last row, h_enc_S, is where the decoder starts.");
}

// No numbers: the two orders of work side by side.
void stage_step_order(report::Report& out) {
  auto& s = out.stage("The step order: Luong scores after the RNN step",
                      "Bahdanau:  s_{i-1} -> e_i -> alpha_i -> c_i -> s_i\n"
                      "Luong:     h_{t-1} -> h_t -> e_t -> a_t -> c_t -> h~_t");
  s.table({"step", "Bahdanau: query s_{i-1}", "Luong: query h_t"},
          {{"1", "e_ij = a(s_{i-1}, h_j)", "h_t = RNN(y_{t-1}, h_{t-1})"},
           {"2", "alpha_i = softmax(e_i)", "e_t(s) = score(h_t, h_enc_s)"},
           {"3", "c_i = sum_j alpha_ij h_j", "a_t = softmax(e_t)"},
           {"4", "s_i = RNN([y_{i-1} ; c_i], s_{i-1})", "c_t = sum_s a_t(s) h_enc_s"},
           {"5", "predict y_i from s_i, c_i", "h~_t = tanh(W_att [c_t ; h_t])"},
           {"6", "", "predict y_t from h~_t"}});
  s.note("Bahdanau's context is an input of the recurrence, so it has to be computed from the "
         "old state s_{i-1}, before the step. Luong runs the recurrence first and puts attention "
         "on top of its output: the query is the fresh h_t, which has already read y_{t-1}.");
  s.note("This lesson leaves out Luong's input feeding (h~_{t-1} joined to the next input), so "
         "the decoder RNN never sees a context: every h_t depends only on the target words and "
         "h_enc_S, and attention only reads it.");
}

void stage_step1_rnn(const LuongLesson& r, report::Report& out) {
  const Vec& y_0 = r.y_0;
  const Vec& h_enc_S = r.h_enc_S;
  const Step& first = r.steps.front();
  auto& s = out.stage("Step 1: the decoder's RNN step comes first", "h_1 = RNN(y_0, h_0),  h_0 = h_enc_S");
  s.in("y_0", y_0).in("h_0", h_enc_S);
  s.show("h_1", first.h);
  s.note("h_0 is the decoder's first state: the last row of h_enc in stage 2. Bahdanau would score step 1 with that state, "
         "before the step; Luong scores with h_1, which has already read <s>.");
}

void stage_step1_scores(const LuongLesson& r, report::Report& out) {
  const LessonOptions& opts = r.opts;
  const bool from_files = r.from_files;
  const Weights& w = r.w;
  const Mat& h_enc = r.h_enc;
  const Mat& e_1 = r.e_1;
  const report::Labels& kinds = r.kinds;
  const auto& src = r.set.src.tokens;
  const Step& first = r.steps.front();
  auto& s = out.stage("Step 1: three scores for the same states",
                      "dot:      e_1(s) = h_1^T h_enc_s\n"
                      "general:  e_1(s) = h_1^T W_g h_enc_s\n"
                      "concat:   e_1(s) = v_c^T tanh(W_c [h_1 ; h_enc_s])");
  s.in("h_1", first.h).in("h_enc", h_enc).in("W_g.weight", w.W_g.weight);
  s.in("W_c.weight", w.W_c.weight).in("v_c.weight", w.v_c.weight);
  s.show("e_1", e_1, kinds, src);
  const std::string eqs[] = {"h_1 . h_enc_s", "h_1 . (W_g h_enc_s)", "v_c . tanh(W_c [h_1 ; h_enc_s])"};
  std::vector<std::vector<std::string>> rows;
  for (std::size_t k = 0; k < 3; ++k) {
    const Vec e = row_of(e_1, k);  // (S,)
    const std::size_t lo = argmin(e), hi = argmax(e);
    rows.push_back({kinds[k], eqs[k], report::fixed(e(lo), 4), report::fixed(e(hi), 4), at(src, hi)});
  }
  s.table({"score", "computed as", "lowest", "highest", "highest at"}, rows);
  if (from_files)
    s.note("W_g, W_c and v_c come from --weights " + opts.weights_dir + " (W_c " +
           (opts.weights_torch_layout ? "in torch layout (out, in)" : "in math layout (in, out), shown transposed") +
           "; W_g is read as it stands in h_t^T W_g h_enc_s in either layout), not from the seed.");
  s.note("Dot has no parameters and needs h_t and h_enc_s of the same width. General puts a trainable "
         "matrix between them: W_g h_enc_s is W_g(h_enc_s) in nn.Linear terms. Concat is Bahdanau's additive score "
         "fed with h_t: W_c [h_t ; h_enc_s] = W_1 h_t + W_2 h_enc_s, W_1 and W_2 the two halves of W_c (the "
         "paper calls both W_g and W_c W_a, v_c v_a, and its W_c is this lesson's W_att). With random weights the three "
         "need not agree on anything; only training would make any of them meaningful.");
}

void stage_step1_weights(const LuongLesson& r, report::Report& out) {
  const std::size_t S = r.S;
  const bool from_files = r.from_files;
  const Mat& e_1 = r.e_1;
  const Mat& a_1 = r.a_1;
  const report::Labels& kinds = r.kinds;
  const auto& src = r.set.src.tokens;
  auto& s = out.stage("Step 1: softmax turns each score row into weights", "a_1(s) = exp(e_1(s)) / sum_s' exp(e_1(s'))");
  s.in("e_1", e_1);
  s.show("a_1", a_1, kinds, src);
  s.attention_weights(report::Training::drawn_unless(from_files),
                      "score function", "source words (encoder states)", "a_1 (attention weight)");
  check_rows_sum_to_one(s, "a_1", a_1);
  s.note("Each row is a distribution over the " + num(S) + " source words. From here on the "
         "lesson follows the general score (row 2): it is the one that leads to Q K^T.");
}

void stage_step1_context(const LuongLesson& r, report::Report& out) {
  const std::size_t d_h = r.d_h;
  const Mat& h_enc = r.h_enc;
  const Step& first = r.steps.front();
  auto& s = out.stage("Step 1: the context vector", "c_1 = sum_s a_1(s) h_enc_s");
  s.in("a_1[general]", first.a).in("h_enc", h_enc);
  s.show("c_1", first.c);
  s.note("A weighted average of the encoder states: c_1 has their width, d_h = " + num(d_h) +
         ", whatever the sentence length.");
}

void stage_step1_attentional(const LuongLesson& r, report::Report& out) {
  const Weights& w = r.w;
  const Step& first = r.steps.front();
  auto& s = out.stage("Step 1: the attentional state", "h~_1 = tanh(W_att [c_1 ; h_1])");
  s.in("c_1", first.c).in("h_1", first.h).in("W_att.weight", w.W_att.weight);
  s.show("[c_1 ; h_1]", first.ch).detail().show("h~_1", first.h_tilde);
  s.note("h~_t is what Luong's decoder predicts from: p(y_t) = softmax(W_s h~_t) over the "
         "target vocabulary. There is no vocabulary here (nothing is trained), so the lesson "
         "stops at h~_t.");
}

void stage_every_step(const LuongLesson& r, report::Report& out) {
  const std::size_t T = r.T;
  const Mat& h_enc = r.h_enc;
  const std::vector<Step>& steps = r.steps;
  const Mat& H_dec = r.H_dec;
  const Mat& C = r.C;
  const Mat& H_tilde = r.H_tilde;
  const auto& src = r.set.src.tokens;
  const auto& tgt = r.set.tgt.tokens;
  const Mat& y = r.set.tgt.x;  // (T_tgt, d_in)
  auto& s = out.stage("Every step the same way (general score)",
                      "h_t = RNN(y_{t-1}, h_{t-1});  a_t = softmax(h_t^T W_g h_enc_s);\n"
                      "c_t = sum_s a_t(s) h_enc_s;  h~_t = tanh(W_att [c_t ; h_t])");
  s.in("y", y).in("h_enc", h_enc);
  std::vector<std::vector<std::string>> rows;
  for (std::size_t t = 0; t < T; ++t) {
    const std::size_t top = argmax(steps[t].a);
    rows.push_back({num(t + 1), t == 0 ? "<s>" : tgt[t - 1], tgt[t], at(src, top), report::fixed(steps[t].a(top), 4)});
  }
  s.table({"t", "reads y_{t-1}", "produces y_t", "most weight on", "a_t there"}, rows);
  s.show("h_t", H_dec, tgt).detail().show("c_t", C, tgt).detail().show("h~_t", H_tilde, tgt).detail();
  s.note("One row per target step, labelled with the word it produces; row 1 is step 1 above. "
         "The steps run one after another because h_t needs h_{t-1}; only the attention inside "
         "a step looks at all source words at once.");
}

void stage_alignment(const LuongLesson& r, report::Report& out) {
  const std::size_t d_h = r.d_h, S = r.S, T = r.T;
  const bool from_files = r.from_files;
  const Mat& h_enc = r.h_enc;
  const Mat& C = r.C;
  const Mat& alignment = r.alignment;
  const Mat& general = r.general;
  const auto& src = r.set.src.tokens;
  const auto& tgt = r.set.tgt.tokens;
  auto& s = out.stage("The alignment matrix", "alignment[t, s] = a_t(s)");
  s.in("a_t", alignment);
  s.show("alignment", alignment, tgt, src);
  s.attention_weights(report::Training::drawn_unless(from_files),
                      "target words (decoder steps)", "source words (encoder states)", "a (attention weight)");
  s.picture_only();  // the heatmap stays; stage 9's table gives each row's largest weight
  check_rows_sum_to_one(s, "alignment", alignment);
  const float uniform = 1.0f / static_cast<float>(S);
  float spread = 0.0f, span = 0.0f;  // largest |a - 1/S|; widest range of one row's scores
  for (std::size_t t = 0; t < T; ++t) {
    const Vec e = row_of(general, t);  // (S,)
    span = std::fmax(span, e(argmax(e)) - e(argmin(e)));
    for (std::size_t j = 0; j < S; ++j) spread = std::fmax(spread, std::fabs(alignment(t, j) - uniform));
  }
  std::string why = "Every weight is within " + report::fixed(spread, 4) + " of 1/S = " +
                    report::fixed(uniform, 4) + "; the widest row of scores spans " + report::fixed(span, 4) +
                    (spread < 0.5f * uniform ? ", too little for softmax to pull the weights far apart."
                                             : ", enough for softmax to pull the weights apart.");
  // How far the contexts stray from the plain mean of the encoder states, against how far the
  // states themselves do: near-uniform weights make every c_t nearly that mean.
  Vec mean = xt::zeros<float>({d_h});  // (d_h,)
  for (std::size_t j = 0; j < S; ++j)
    for (std::size_t k = 0; k < d_h; ++k) mean(k) += h_enc(j, k) / static_cast<float>(S);
  float c_off = 0.0f, h_off = 0.0f;  // largest |c_t - mean|, largest |h_enc_s - mean|, element-wise
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t k = 0; k < d_h; ++k) c_off = std::fmax(c_off, std::fabs(C(t, k) - mean(k)));
  for (std::size_t j = 0; j < S; ++j)
    for (std::size_t k = 0; k < d_h; ++k) h_off = std::fmax(h_off, std::fabs(h_enc(j, k) - mean(k)));
  if (S > 1 && c_off < 0.5f * h_off)
    why += " That is why the c_t rows of stage 9 (--full prints them) look alike: every c_t is within " + report::fixed(c_off, 4) +
           " of the mean of the h_enc_s, element by element, while the h_enc_s themselves stray up to " +
           report::fixed(h_off, 4) + " from it.";
  s.note("Rows are target words, columns source words. A trained model shows a near-diagonal "
         "band here (le -> the, chat -> cat, ...); these random weights show the mechanism, not "
         "an alignment.");
  s.note(why);
}

void stage_cost(const LuongLesson& r, report::Report& out) {
  const std::size_t d_in = r.d_in, d_h = r.d_h, S = r.S, d_a = r.d_a;
  const Weights& w = r.w;
  const std::size_t general_p = d_h * d_h, concat_p = d_a * 2 * d_h + d_a, wc_p = d_h * 2 * d_h;
  auto& s = out.stage("What each score costs",
                      "dot: 0    general: d_h*d_h    concat: d_a*2d_h + d_a    W_att: d_h*2d_h");
  s.table({"part", "shapes", "parameters", "multiply-adds per step"},
          {{"dot score", "-", "0", num(S * d_h)},
           {"general score", "W_g " + shape_str({d_h, d_h}), num(general_p), num(d_h * d_h + S * d_h)},
           {"concat score", "W_c " + shape_str({d_a, 2 * d_h}) + ", v_c " + shape_str({d_a}), num(concat_p),
            num(S * (d_a * 2 * d_h + d_a))},
           {"W_att (all three)", shape_str({d_h, 2 * d_h}), num(wc_p), num(wc_p)},
           {"each RNN cell", "W_ih, W_hh, b_ih, b_hh", num(w.decoder.parameters()),
            num(d_h * d_in + d_h * d_h)}});
  s.note("Multiply-adds: dot is S dot products of length d_h; general computes h_t^T W_g once "
         "per step, then S dot products; concat, computed naively, runs W_c on every [h_t ; h_enc_s] "
         "pair. Since W_c [h_t ; h_enc_s] = W_1 h_t + W_2 h_enc_s and W_2 h_enc_s does not change with t, a "
         "real decoder computes it once per sentence (as Bahdanau's U_a h_j), leaving d_a*d_h + "
         "S*d_a = " + num(d_a * d_h + S * d_a) + " per step, plus S*d_a tanh.");
}

void stage_bridge(const LuongLesson& r, report::Report& out) {
  const std::size_t d_k = r.d_k;
  const Mat& W_query = r.W_query;
  const Mat& W_key = r.W_key;
  const Mat& h_enc = r.h_enc;
  const Mat& H_dec = r.H_dec;
  const Mat& W_a = r.W_a;
  const Mat& bridged = r.bridged;
  const auto& src = r.set.src.tokens;
  const auto& tgt = r.set.tgt.tokens;
  auto& s = out.stage("The bridge: a general score with W_a = W_query W_key^T",
                      "W_a = W_query @ W_key^T\n"
                      "general_scores[t, s] = h_t^T W_a h_enc_s    (every h_t against every h_enc_s)");
  s.in("h_t", H_dec).in("h_enc", h_enc);
  s.show("W_query", W_query).detail().show("W_key", W_key).detail().show("W_a", W_a).detail();
  s.show("general_scores", bridged, tgt, src).detail();  // stage 13 prints the same numbers as Q @ K^T
  s.note("Two (d_h, d_k) matrices, d_k = " + num(d_k) + ", multiply into a (d_h, d_h) W_a of rank "
         "at most d_k. It is a new matrix, not W_g, so these scores differ from stage 10's; "
         "they are still Luong's general scores, computed one decoder state at a time exactly "
         "as in step 1.");
}

void stage_bridge_qk(const LuongLesson& r, report::Report& out) {
  const Mat& h_enc = r.h_enc;
  const Mat& H_dec = r.H_dec;
  const Mat& bridged = r.bridged;
  const Mat& Q = r.Q;
  const Mat& K = r.K;
  const Mat& QK = r.QK;
  const auto& src = r.set.src.tokens;
  const auto& tgt = r.set.tgt.tokens;
  auto& s = out.stage("The same numbers as Q K^T",
                      "H_dec = the h_t as rows    H_enc = the h_enc_s as rows\n"
                      "Q = H_dec @ W_query    K = H_enc @ W_key\n"
                      "Q @ K^T = H_dec @ W_query @ W_key^T @ H_enc^T = H_dec @ W_a @ H_enc^T");
  s.in("H_dec", H_dec).in("H_enc", h_enc);
  s.show("Q", Q, tgt).detail().show("K", K, src).detail().show("Q @ K^T", QK, tgt, src);
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

}  // namespace

// The lesson as its table of contents (--states takes its own, shorter path).
void lesson_luong(const LessonOptions& opts, report::Report& out) {
  if (!opts.states_dir.empty()) return luong_from_states(opts, out);
  const LuongLesson r = setup(opts, out);
  stage_embeddings(r, out);
  stage_encoder(r, out);
  stage_step_order(out);
  stage_step1_rnn(r, out);
  stage_step1_scores(r, out);
  stage_step1_weights(r, out);
  stage_step1_context(r, out);
  stage_step1_attentional(r, out);
  stage_every_step(r, out);
  stage_alignment(r, out);
  stage_cost(r, out);
  stage_bridge(r, out);
  stage_bridge_qk(r, out);
}

// Teaching order 300: see `attn list`; docs/luong.md is its page.
ATTN_REGISTER_LESSON({300, "luong", "Luong attention: dot, general and concat scores",
                      "scores from the current decoder state, three scoring functions, and the bridge to Q K^T",
                      "Luong, Pham, Manning (2015), as told in Evolution of Attention Mechanism",
                      kSeed | kDIn | kSrc | kTgt | kHidden | kInput | kWeights | kStates, lesson_luong,
                      {}, {"W_g", "W_c", "v_c"}, {"H", "h_t"}});

}  // namespace attn
