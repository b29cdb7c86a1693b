// Lesson: Bahdanau attention, additive scoring (Bahdanau, Cho, Bengio 2014).
//
// The encoder no longer squeezes the sentence into one vector. A bidirectional RNN leaves one
// state h_j per source word, each summarising the words on both sides of j. Before every target
// word the decoder asks a small feed-forward network, the alignment model, how well each h_j fits
// its previous state s_{i-1}: e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j). Softmax turns the S scores
// into weights alpha_i, their weighted sum of the h_j is the context c_i, and the decoder reads
// c_i with the previous target word to make s_i. The T_tgt rows of weights form the alignment
// matrix. The weights are random: the lesson teaches the mechanism, its shapes and its costs.
//
// Legend: S source words, T_tgt target words, d_in embedding width, d_h hidden width (one
// direction), 2 d_h encoder state width, d_a alignment width (= d_h here), i decoder step
// (1..T_tgt), j source position (1..S).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <utility>

#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

#include "core/embedding.hpp"
#include "core/linear.hpp"
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

std::string num(std::size_t n) { return std::to_string(n); }

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Row r of a matrix as its own vector (core functions take contiguous tensors, trap 2).
Vec row_of(const Mat& m, std::size_t r) { return xt::view(m, r, xt::all()); }  // (n,)

// [a ; b]: (n,), (m,) -> (n + m,)
Vec concat(const Vec& a, const Vec& b) {
  Vec out = xt::empty<float>({a.size() + b.size()});  // (n + m,)
  std::copy(a.begin(), a.end(), out.begin());
  std::copy(b.begin(), b.end(), out.begin() + a.size());
  return out;
}


// Everything one decoder step makes, in the order it makes it.
struct Step {
  Vec Ws;        // W_a s_{i-1}                          (d_a,)
  Mat pre;       // W_a s_{i-1} + U_a h_j for every j    (S, d_a)
  Mat act;       // tanh(pre)                            (S, d_a)
  Vec e;         // e_ij = v_a^T act_j                   (S,)
  Vec alpha;     // softmax(e)                           (S,)
  Vec c;         // sum_j alpha_ij h_j                   (2 d_h,)
  Vec input;     // [y_{i-1} ; c_i]                      (d_in + 2 d_h,)
  Vec s;         // s_i                                  (d_h,)
};

// One step of the attentive decoder. Uh = U_a h was computed once, before the loop.
Step decoder_step(const Mat& W_a, const Mat& Uh, const Vec& v_a, const Mat& h, const RnnCell& decoder,
                  const Vec& s_prev, const Vec& y_prev) {
  const std::size_t S = Uh.shape()[0], d_a = Uh.shape()[1];
  Step st;
  st.Ws = matvec(W_a, s_prev);  // (d_a, d_h) @ (d_h,) -> (d_a,)
  st.pre = Uh;                  // (S, d_a)
  for (std::size_t j = 0; j < S; ++j)
    for (std::size_t a = 0; a < d_a; ++a) st.pre(j, a) += st.Ws(a);  // broadcast (d_a,) over S rows
  st.act = xt::tanh(st.pre);                    // (S, d_a)
  st.e = additive_scores_from(st.Ws, Uh, v_a);  // v_a^T tanh(...) per row: (S,)
  st.alpha = softmax_rows(st.e);                // (S,)
  st.c = weighted_sum(st.alpha, h);             // (S,) . (S, 2 d_h) -> (2 d_h,)
  st.input = concat(y_prev, st.c);              // (d_in + 2 d_h,)
  st.s = rnn_step(decoder, st.input, s_prev);   // (d_h,)
  return st;
}

// The first two positions holding the same word (as embed compares words), if any.
std::optional<std::pair<std::size_t, std::size_t>> first_repeat(const std::vector<std::string>& words) {
  for (std::size_t k = 1; k < words.size(); ++k)
    for (std::size_t j = 0; j < k; ++j)
      if (lower(words[j]) == lower(words[k])) return std::make_pair(j, k);
  return std::nullopt;
}

// Index of the largest entry (the first one on ties).
std::size_t argmax_of(const Vec& v) {
  std::size_t best = 0;
  for (std::size_t j = 1; j < v.size(); ++j)
    if (v(j) > v(best)) best = j;
  return best;
}

// "(8, 16)"
std::string dims(std::size_t a, std::size_t b) { return "(" + num(a) + ", " + num(b) + ")"; }


// --states: the encoder and decoder states come from files, so the lesson starts at the
// alignment model. The scoring weights come from --weights, or are drawn from the seed.
// What the stages of that shorter path share.
struct StatesLesson {
  const LessonOptions& opts;
  RnnStates st;  // H and s from --states, with their labels
  std::size_t S;
  std::size_t T;
  std::size_t d_enc;
  std::size_t d_s;
  bool from_files;  // W_a, U_a, v_a from --weights
  std::uint64_t seed;
  Mat W_a;  // (d_a, d_s), as nn.Linear keeps it
  Mat U_a;  // (d_a, d_enc)
  Vec v_a;  // (d_a,)
  std::size_t d_a;
  std::string dir;  // --states DIR
  Mat Uh;  // (S, d_a)
  Mat Ws;  // (T, d_a): W_a s for every query
  Mat e;  // (T, S)
  Mat alpha;  // (T, S)
  Mat c;  // (T, d_enc)
};

// The states, the alignment model (drawn or from --weights), the header, and every query scored.
StatesLesson states_setup(const LessonOptions& opts, report::Report& out) {
  const RnnStates st = rnn_states(opts, "s", "h_");
  const std::size_t S = st.S, T = st.T, d_enc = st.d_enc, d_s = st.d_s;
  const bool from_files = !opts.weights.empty();
  if (from_files && opts.seed)
    throw UsageError("--seed has nothing to draw: --states and --weights give every tensor", "--seed",
                     "no --seed with --states and --weights", "--seed " + num(*opts.seed));
  const std::uint64_t seed = opts.seed.value_or(2014);

  Mat W_a, U_a;  // (d_a, d_s), (d_a, d_enc), as nn.Linear keeps them
  Vec v_a;       // (d_a,)
  std::size_t d_a = d_s;  // drawn weights: d_a = d_s, as the seeded lesson's d_a = d_h
  if (from_files) {
    W_a = rnn_weight(opts, "W_a", {"d_a", 0}, {"d_s", d_s});  // (d_a, d_s)
    d_a = W_a.shape()[0];
    U_a = rnn_weight(opts, "U_a", {"d_a", d_a}, {"d_enc", d_enc});  // (d_a, d_enc)
    v_a = rnn_vector(opts, "v_a", {"d_a", d_a});                     // (d_a,)
  } else {
    TorchGenerator gen(seed);
    W_a = make_linear(gen, d_s, d_a, false).weight;      // (d_a, d_s)
    U_a = make_linear(gen, d_enc, d_a, false).weight;    // (d_a, d_enc)
    v_a = row_of(make_linear(gen, d_a, 1, false).weight, 0);  // (1, d_a) -> (d_a,)
  }

  const std::string dir = opts.states_dir;
  std::vector<std::string> setting = {"states from " + dir, "source states " + num(S),
                                      "decoder states " + num(T), "d_enc " + num(d_enc), "d_s " + num(d_s),
                                      "d_a " + num(d_a)};
  std::vector<std::string> reproduce = {"H = " + py_load(dir, "H") + "  # (S, d_enc)",
                                        "s = " + py_load(dir, "s") + (st.one_query ? "  # (d_s,)" : "  # (T, d_s)")};
  if (from_files) {
    setting.push_back(layout_name(opts));
    const bool math = !opts.weights_torch_layout;
    reproduce.push_back("W_a = " + py_load(opts.weights_dir, "W_a", math) + "  # (d_a, d_s)");
    reproduce.push_back("U_a = " + py_load(opts.weights_dir, "U_a", math) + "  # (d_a, d_enc)");
    reproduce.push_back("v_a = " + py_load(opts.weights_dir, "v_a") + ".reshape(-1)  # (d_a,)");
  } else {
    setting.insert(setting.begin() + 1, "seed " + num(seed) + " (the alignment model)");
    reproduce.push_back("torch.manual_seed(" + num(seed) + ")");
    reproduce.push_back("W_a = nn.Linear(" + num(d_s) + ", " + num(d_a) + ", bias=False).weight.detach()");
    reproduce.push_back("U_a = nn.Linear(" + num(d_enc) + ", " + num(d_a) + ", bias=False).weight.detach()");
    reproduce.push_back("v_a = nn.Linear(" + num(d_a) + ", 1, bias=False).weight.detach().reshape(-1)");
  }
  reproduce.push_back("e = torch.tanh((s @ W_a.T).unsqueeze(-2) + H @ U_a.T) @ v_a");
  reproduce.push_back("alpha = torch.softmax(e, dim=-1); c = alpha @ H");
  out.header = {"bahdanau", "Bahdanau attention: additive scoring",
                "Bahdanau, Cho, Bengio (2014), as told in Evolution of Attention Mechanism and by Rakesh",
                setting, recipe::with_imports(reproduce)};

  const Mat Uh = additive_keys(st.H, U_a);  // (S, d_enc) @ (d_enc, d_a) -> (S, d_a)

  Mat Ws = xt::empty<float>({T, d_a});  // (T, d_a): W_a s for every query
  Mat e = xt::empty<float>({T, S});     // (T, S)
  for (std::size_t i = 0; i < T; ++i) {
    xt::view(Ws, i, xt::all()) = matvec(W_a, row_of(st.queries, i));           // (d_a, d_s) @ (d_s,) -> (d_a,)
    xt::view(e, i, xt::all()) = additive_scores_from(row_of(Ws, i), Uh, v_a);  // (S,)
  }
  const Mat alpha = softmax_rows(e);  // (T, S)
  Mat c = xt::empty<float>({T, d_enc});  // (T, d_enc)
  for (std::size_t i = 0; i < T; ++i) xt::view(c, i, xt::all()) = weighted_sum(row_of(alpha, i), st.H);  // (d_enc,)
  return StatesLesson{opts, st, S, T, d_enc, d_s, from_files, seed, W_a, U_a, v_a, d_a, dir, Uh, Ws, e, alpha, c};
}

void stage_states(const StatesLesson& r, report::Report& out) {
  const std::size_t S = r.S, T = r.T, d_enc = r.d_enc, d_s = r.d_s;
  const RnnStates& st = r.st;
  const std::string& dir = r.dir;
  auto& s = out.stage("The encoder and decoder states, from --states",
                      "h_j = row j of H    (S, d_enc)\n"
                      "s = the decoder state that asks    (d_s,), or one per row (T, d_s)");
  s.show("H", st.H, st.src);
  if (st.one_query) s.show("s", row_of(st.queries, 0));
  else s.show("s", st.queries, st.tgt);
  s.note("The lesson's own embeddings, encoder and decoder are skipped: H comes from " + dir +
         "/H.npy, " + shape_str({S, d_enc}) + ", and s from " + dir + "/s.npy, " +
         (st.one_query ? shape_str({d_s}) : shape_str({T, d_s})) +
         ". In Bahdanau's model H holds the bidirectional encoder's states and s is the decoder's "
         "previous state s_{i-1}; the lesson scores with whatever the files hold.");
  if (!st.one_query)
    s.note("Each row of s is one decoder state; each is scored on its own against every h_j.");
}

void stage_states_alignment_model(const StatesLesson& r, report::Report& out) {
  const LessonOptions& opts = r.opts;
  const std::size_t d_a = r.d_a;
  const RnnStates& st = r.st;
  const bool from_files = r.from_files;
  const std::uint64_t seed = r.seed;
  const Mat& W_a = r.W_a;
  const Mat& U_a = r.U_a;
  const Vec& v_a = r.v_a;
  const Mat& Uh = r.Uh;
  auto& s = out.stage("The alignment model, and U_a h_j once for all queries",
                      "e_j = v_a^T tanh(W_a s + U_a h_j)\n"
                      "U_a h = H @ U_a^T    (S, d_enc) @ (d_enc, d_a) -> (S, d_a)");
  s.in("H", st.H);
  s.show("W_a", W_a).show("U_a", U_a).show("v_a", v_a);
  s.note(from_files ? "W_a, U_a and v_a come from --weights " + opts.weights_dir + " (" +
                          (opts.weights_torch_layout ? "torch layout (out, in)"
                                                     : "math layout (in, out), shown transposed") +
                          "). They are shown as nn.Linear keeps them, (out, in), as the equation uses them."
                    : "W_a, U_a and v_a are drawn after torch.manual_seed(" + num(seed) +
                          ") as nn.Linear weights, d_a = d_s = " + num(d_a) +
                          "; --weights DIR gives your own (W_a.npy, U_a.npy, v_a.npy).");
  s.show("U_a h", Uh, st.src);
}

void stage_states_scores(const StatesLesson& r, report::Report& out) {
  const std::size_t S = r.S, d_a = r.d_a;
  const RnnStates& st = r.st;
  const Vec& v_a = r.v_a;
  const Mat& Uh = r.Uh;
  const Mat& Ws = r.Ws;
  const Mat& e = r.e;
  auto& s = out.stage("Score every source word",
                      "e_j = v_a^T tanh(W_a s + U_a h_j)    for j = 1..S");
  if (st.one_query) s.in("s", row_of(st.queries, 0));
  else s.in("s", st.queries);
  s.in("U_a h", Uh).in("v_a", v_a);
  if (st.one_query) {
    const Vec Ws0 = row_of(Ws, 0);  // (d_a,)
    Mat pre = Uh;                // (S, d_a)
    for (std::size_t j = 0; j < S; ++j)
      for (std::size_t a = 0; a < d_a; ++a) pre(j, a) += Ws0(a);  // broadcast (d_a,) over S rows
    const Mat act = xt::tanh(pre);  // (S, d_a)
    s.show("W_a s", Ws0).show("W_a s + U_a h", pre, st.src).show("tanh(W_a s + U_a h)", act, st.src);
    s.show("e", row_of(e, 0), {}, st.src);
  } else {
    s.show("W_a s", Ws, st.tgt).show("e", e, st.tgt, st.src);
  }
}

void stage_states_context(const StatesLesson& r, report::Report& out) {
  const std::size_t d_enc = r.d_enc;
  const RnnStates& st = r.st;
  const bool from_files = r.from_files;
  const Mat& e = r.e;
  const Mat& alpha = r.alpha;
  const Mat& c = r.c;
  auto& s = out.stage("Weights and context", "alpha = softmax(e)\nc = sum_j alpha_j h_j = alpha @ H");
  if (st.one_query) s.in("e", row_of(e, 0));
  else s.in("e", e);
  s.in("H", st.H);
  if (st.one_query) s.show("alpha", row_of(alpha, 0), {}, st.src);
  else s.show("alpha", alpha, st.tgt, st.src);
  s.attention_weights(report::Training::drawn_unless(from_files),
                      "target words (decoder steps)", "source words (encoder states)", "alpha (attention weight)");
  if (st.one_query) s.show("c", row_of(c, 0));
  else s.show("c", c, st.tgt);
  check_rows_sum_to_one(s, "alpha", alpha);
  const std::size_t top = argmax_of(row_of(alpha, 0));
  s.note("c is as wide as one encoder state, d_enc = " + num(d_enc) + ", whatever S is. " +
         (st.one_query ? std::string("The largest weight, ") + report::fixed(alpha(0, top), 4) + ", is on " +
                             st.src[top] + " (row " + num(top + 1) + " of H)."
                       : std::string("Row i of alpha weighs H for decoder state i.")) +
         " The decoder's next state would read c; that needs the decoder RNN, which is not in the "
         "files (run without --states for the whole model).");
}

// The --states path as its table of contents.
void bahdanau_from_states(const LessonOptions& opts, report::Report& out) {
  const StatesLesson r = states_setup(opts, out);
  stage_states(r, out);
  stage_states_alignment_model(r, out);
  stage_states_scores(r, out);
  stage_states_context(r, out);
}

// What the stages of the seeded model share: the sentences, every module, and every step's tensors.
struct BahdanauLesson {
  const LessonOptions& opts;
  Seq2SeqSetup set;  // the sentences, their embeddings and the sizes
  std::size_t d_in;
  std::size_t d_h;
  std::size_t S;
  std::size_t T_tgt;
  Vec y_0;  // (d_in,): embed("<s>")
  bool from_files;  // the alignment model from --weights
  std::size_t d_a;
  std::string din;
  std::string dh;
  RnnCell enc_fwd;  // weight_ih (d_h, d_in)
  RnnCell enc_bwd;  // weight_ih (d_h, d_in)
  Linear W_s;  // weight (d_h, d_h)
  Linear W_a;  // weight (d_a, d_h)
  Linear U_a;  // weight (d_a, 2 d_h)
  Linear v_a;  // weight (1, d_a)
  RnnCell decoder;  // weight_ih (d_h, d_in + 2 d_h)
  Vec v_a_vec;  // (d_a,)
  Mat h_fwd;  // (S, d_h)
  Mat h_bwd;  // (S, d_h)
  Mat h;  // (S, 2 d_h)
  Mat Uh;  // (S, d_a): U_a h_j for every j
  Vec h_bwd_1;  // (d_h,)
  Vec s_0;  // (d_h,)
  std::vector<Step> steps;  // one per target word
  Mat alignment;  // (T_tgt, S): row i is alpha_i
};

// The sentences, the header, every module drawn in the header's order, and the whole forward pass:
// the encoder, U_a h, s_0, every decoder step and the alignment matrix.
BahdanauLesson setup(const LessonOptions& opts, report::Report& out) {
  const Seq2SeqSetup set = seq2seq_setup(opts, 2014);  // the paper's year
  const std::size_t d_in = set.d_in, d_h = set.d_h;
  const std::size_t S = set.src.tokens.size(), T_tgt = set.tgt.tokens.size();
  const Mat& x = set.src.x;          // (S, d_in)
  const Mat& y = set.tgt.x;          // (T_tgt, d_in)
  const Vec y_0 = row_of(set.start.x, 0);  // embed("<s>"): (d_in,)

  // --weights: the alignment model from files, read before anything is drawn so that d_a is known.
  const bool from_files = !opts.weights.empty();
  const Mat W_a_file = from_files ? rnn_weight(opts, "W_a", {"d_a", 0}, {"d_h", d_h}) : Mat{};  // (d_a, d_h)
  const std::size_t d_a = from_files ? W_a_file.shape()[0] : d_h;  // d_a = d_h unless the files say otherwise
  const Mat U_a_file = from_files ? rnn_weight(opts, "U_a", {"d_a", d_a}, {"2 d_h", 2 * d_h}) : Mat{};  // (d_a, 2 d_h)
  const Vec v_a_file = from_files ? rnn_vector(opts, "v_a", {"d_a", d_a}) : Vec{};  // (d_a,)

  const std::string din = num(d_in), dh = num(d_h), da = num(d_a), dh2 = num(2 * d_h);
  std::vector<std::string> setting = set.setting();
  setting.push_back("d_a " + da);
  if (from_files) setting.push_back(layout_name(opts));
  std::vector<std::string> reproduce = {"torch.manual_seed(" + num(set.seed) + ")",
                                        "enc_fwd = nn.RNNCell(" + din + ", " + dh + ")",
                                        "enc_bwd = nn.RNNCell(" + din + ", " + dh + ")",
                                        "W_s = nn.Linear(" + dh + ", " + dh + ")",
                                        "W_a = nn.Linear(" + dh + ", " + da + ", bias=False)",
                                        "U_a = nn.Linear(" + dh2 + ", " + da + ", bias=False)",
                                        "v_a = nn.Linear(" + da + ", 1, bias=False)",
                                        "decoder = nn.RNNCell(" + num(d_in + 2 * d_h) + ", " + dh + ")"};
  if (from_files) {
    const bool math = !opts.weights_torch_layout;
    reproduce.push_back("W_a.weight.data = " + py_load(opts.weights_dir, "W_a", math) + "  # drawn, then replaced");
    reproduce.push_back("U_a.weight.data = " + py_load(opts.weights_dir, "U_a", math));
    reproduce.push_back("v_a.weight.data = " + py_load(opts.weights_dir, "v_a") + ".reshape(1, -1)");
  }
  if (opts.input) reproduce.push_back(py_input_line(*opts.input));
  reproduce.push_back(std::string("# embed(w): torch.manual_seed(fnv1a32(w.lower())); torch.rand(") + din + ")" +
                      (opts.input ? ", for the target words and <s>" : ""));
  out.header = {"bahdanau", "Bahdanau attention: additive scoring",
                "Bahdanau, Cho, Bengio (2014), as told in Evolution of Attention Mechanism and by Rakesh",
                setting, recipe::with_imports(reproduce)};

  // Every module, drawn from one generator in the order the header lists them (a module whose
  // weight comes from --weights is still drawn, as in PyTorch, then its weight is replaced).
  TorchGenerator gen(set.seed);
  const RnnCell enc_fwd = make_rnn_cell(gen, d_in, d_h);          // weight_ih (d_h, d_in)
  const RnnCell enc_bwd = make_rnn_cell(gen, d_in, d_h);          // weight_ih (d_h, d_in)
  const Linear W_s = make_linear(gen, d_h, d_h, true);            // weight (d_h, d_h)
  Linear W_a = make_linear(gen, d_h, d_a, false);                 // weight (d_a, d_h)
  Linear U_a = make_linear(gen, 2 * d_h, d_a, false);             // weight (d_a, 2 d_h)
  Linear v_a = make_linear(gen, d_a, 1, false);                   // weight (1, d_a)
  const RnnCell decoder = make_rnn_cell(gen, d_in + 2 * d_h, d_h);  // weight_ih (d_h, d_in + 2 d_h)
  if (from_files) {
    W_a.weight = W_a_file;                                           // (d_a, d_h)
    U_a.weight = U_a_file;                                           // (d_a, 2 d_h)
    v_a.weight = xt::empty<float>({std::size_t{1}, d_a});            // (1, d_a)
    std::copy(v_a_file.begin(), v_a_file.end(), v_a.weight.begin());
  }
  const Vec v_a_vec = row_of(v_a.weight, 0);                         // (d_a,)

  // Encoder: one pass each way over the source, then the two states side by side.
  const Mat h_fwd = rnn_forward(enc_fwd, x);                // (S, d_in) -> (S, d_h)
  const Mat h_bwd = rnn_backward(enc_bwd, x);               // (S, d_in) -> (S, d_h)
  const Mat h = bidirectional_encoder(enc_fwd, enc_bwd, x);  // (S, 2 d_h)

  // U_a h_j for every j, before the decoder loop: it does not depend on the step.
  const Mat Uh = additive_keys(h, U_a.weight);  // (S, 2 d_h) @ (2 d_h, d_a) -> (S, d_a)

  const Vec h_bwd_1 = row_of(h_bwd, 0);                 // (d_h,)
  Vec s_0 = matvec(W_s.weight, h_bwd_1) + W_s.bias;  // (d_h, d_h) @ (d_h,) + (d_h,) -> (d_h,)
  s_0 = xt::tanh(s_0);                               // (d_h,)

  // The decoder loop, fed the reference translation (teacher forcing): y_{i-1} is "<s>" at
  // step 1 and target word i-1 after that.
  std::vector<Step> steps;
  Vec s_prev = s_0;  // (d_h,)
  for (std::size_t i = 0; i < T_tgt; ++i) {
    const Vec y_prev = i == 0 ? y_0 : row_of(y, i - 1);  // (d_in,)
    steps.push_back(decoder_step(W_a.weight, Uh, v_a_vec, h, decoder, s_prev, y_prev));
    s_prev = steps.back().s;  // (d_h,)
  }
  Mat alignment = xt::empty<float>({T_tgt, S});  // (T_tgt, S): row i is alpha_i
  for (std::size_t i = 0; i < T_tgt; ++i) xt::view(alignment, i, xt::all()) = steps[i].alpha;
  return BahdanauLesson{opts, set, d_in, d_h, S, T_tgt, y_0, from_files, d_a, din, dh, enc_fwd, enc_bwd, W_s,
                     W_a, U_a, v_a, decoder, v_a_vec, h_fwd, h_bwd, h, Uh, h_bwd_1, s_0, steps, alignment};
}

void stage_embeddings(const BahdanauLesson& r, report::Report& out) {
  const LessonOptions& opts = r.opts;
  const Seq2SeqSetup& set = r.set;
  const Vec& y_0 = r.y_0;
  const std::string& din = r.din;
  const auto& src = r.set.src.tokens;
  const auto& tgt = r.set.tgt.tokens;
  const Mat& x = r.set.src.x;  // (S, d_in)
  const Mat& y = r.set.tgt.x;  // (T_tgt, d_in)
  auto& s = out.stage("The sentences and their embeddings",
                      "x_j = embed(source word j)    (S, d_in)\n"
                      "y_i = embed(target word i)    (T_tgt, d_in),   y_0 = embed(\"<s>\")");
  s.show("x", x, src).show("y", y, tgt).show("y_0", y_0);
  std::vector<std::string> seen;
  std::string seeds;
  for (const auto* words : {&src, &tgt})
    for (const auto& w : *words) {
      if (words == &src && opts.input) continue;  // the source vectors came from --input
      const std::string word = lower(w);
      if (std::find(seen.begin(), seen.end(), word) != seen.end()) continue;
      seen.push_back(word);
      seeds += std::string(seeds.empty() ? "" : ", ") + word + " " + num(word_seed(word));
    }
  if (std::find(seen.begin(), seen.end(), "<s>") == seen.end()) seeds += ", <s> " + num(word_seed("<s>"));
  s.note("Each word's vector is torch.manual_seed(seed); torch.rand(" + din +
         ") with seed = fnv1a32(lowercased word), so a repeated word repeats its vector. Seeds: " +
         seeds + ".");
  if (opts.input) s.note(set.src.origin);
  s.note(kUntrainedNote);
}

void stage_encoder(const BahdanauLesson& r, report::Report& out) {
  const Mat& h_fwd = r.h_fwd;
  const Mat& h_bwd = r.h_bwd;
  const Mat& h = r.h;
  const auto& src = r.set.src.tokens;
  const Mat& x = r.set.src.x;  // (S, d_in)
  auto& s = out.stage("The bidirectional encoder: one state per source word",
                      "h_fwd_j = enc_fwd(x_j, h_fwd_{j-1})   j = 1..S, from zeros\n"
                      "h_bwd_j = enc_bwd(x_j, h_bwd_{j+1})   j = S..1, from zeros\n"
                      "h_j = [h_fwd_j ; h_bwd_j]");
  s.in("x", x);
  s.show("h_fwd", h_fwd, src).show("h_bwd", h_bwd, src).show("h", h, src);
  s.note("Each cell is tanh(W_ih x + b_ih + W_hh h + b_hh), as in nn.RNNCell. h_fwd_j has read "
         "words 1..j, h_bwd_j words j..S: row j of h describes word j in its whole sentence, "
         "and the decoder attends over these S rows instead of one final vector.");
  // A repeated word: same embedding, different state, because the state carries context.
  if (const auto twin = first_repeat(src)) {
    const auto [j, k] = *twin;
    const Vec a = row_of(h, j), b = row_of(h, k);  // (2 d_h,)
    // A question, not a promise: saturated cells (|h| near 1) can forget where they are.
    s.question("\"" + src[j] + "\", words " + num(j + 1) + " and " + num(k + 1) +
                   ", have the same x: do their rows of h differ?",
               "max |h_" + num(j + 1) + " - h_" + num(k + 1) + "|", max_abs_diff(a, b), Relation::AtLeast, 1e-6);
  }
}

void stage_alignment_model(const BahdanauLesson& r, report::Report& out) {
  const LessonOptions& opts = r.opts;
  const std::size_t d_h = r.d_h, S = r.S, T_tgt = r.T_tgt, d_a = r.d_a;
  const bool from_files = r.from_files;
  const Linear& W_a = r.W_a;
  const Linear& U_a = r.U_a;
  const Linear& v_a = r.v_a;
  const Mat& h = r.h;
  const Mat& Uh = r.Uh;
  const auto& src = r.set.src.tokens;
  auto& s = out.stage("The alignment model, and U_a h_j once for all steps",
                      "e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j)\n"
                      "U_a h = h @ U_a.weight^T    (S, 2 d_h) @ (2 d_h, d_a) -> (S, d_a)");
  s.in("h", h);
  s.show("W_a.weight", W_a.weight).detail().show("U_a.weight", U_a.weight).detail();
  s.show("v_a.weight", v_a.weight).detail();
  s.note("One feed-forward layer of d_a tanh units for every (i, j): W_a reads a decoder state, "
         "U_a an encoder state, v_a makes one score. nn.Linear stores each weight (out, in).");
  if (from_files)
    s.note("W_a, U_a and v_a come from --weights " + opts.weights_dir + " (" +
           (opts.weights_torch_layout ? "torch layout (out, in)" : "math layout (in, out), shown transposed") +
           "), not from the seed; everything else is drawn as the header says.");
  s.show("U_a h", Uh, src);
  s.note("U_a h_j does not depend on the decoder step i, so it is computed once, before the "
         "loop: S * d_a * 2 d_h = " + num(S * d_a * 2 * d_h) + " multiply-adds, not T_tgt * " +
         num(S * d_a * 2 * d_h) + " = " + num(T_tgt * S * d_a * 2 * d_h) +
         ". Each step adds only W_a s_{i-1}, d_a * d_h = " + num(d_a * d_h) + ".");
}

void stage_first_state(const BahdanauLesson& r, report::Report& out) {
  const Vec& h_bwd_1 = r.h_bwd_1;
  const Vec& s_0 = r.s_0;
  auto& s = out.stage("The decoder's first state s_0", "s_0 = tanh(W_s h_bwd_1 + b_s)");
  s.in("h_bwd_1", h_bwd_1);
  s.show("s_0", s_0);
  s.note("As in the paper: h_bwd_1 has read the whole sentence. The bottleneck model had only "
         "such a summary; here it is just where the decoder starts.");
}

void stage_step1_scores(const BahdanauLesson& r, report::Report& out) {
  const Linear& W_a = r.W_a;
  const Linear& U_a = r.U_a;
  const Linear& v_a = r.v_a;
  const Vec& v_a_vec = r.v_a_vec;
  const Mat& h = r.h;
  const Mat& Uh = r.Uh;
  const Vec& s_0 = r.s_0;
  const auto& src = r.set.src.tokens;
  const Step& first = r.steps[0];
  auto& s = out.stage("Step 1: score every source word",
                      "e_1j = v_a^T tanh(W_a s_0 + U_a h_j)    for j = 1..S");
  s.in("s_0", s_0).in("U_a h", Uh).in("v_a.weight", v_a.weight);
  s.show("W_a s_0", first.Ws);
  s.show("W_a s_0 + U_a h", first.pre, src);
  s.show("tanh(W_a s_0 + U_a h)", first.act, src);
  s.show("e_1", first.e, {}, src);
  s.note("Broadcasting: the one (d_a,) vector W_a s_0 is added to each of the S rows of U_a h. "
         "The query and the key meet by addition, inside tanh, hence \"additive\" attention; "
         "v_a then reduces each row to one score e_1j.");
  const Vec direct = additive_scores(s_0, h, W_a.weight, U_a.weight, v_a_vec);  // (S,)
  check_close(s, "e_1 equals the scores with U_a h_j recomputed inside the step", direct, first.e);
}

void stage_step1_context(const BahdanauLesson& r, report::Report& out) {
  const Mat& h = r.h;
  const auto& src = r.set.src.tokens;
  const Step& first = r.steps[0];
  auto& s = out.stage("Step 1: weights and context",
                      "alpha_1 = softmax(e_1)\n"
                      "c_1 = sum_j alpha_1j h_j = alpha_1 @ h");
  s.in("e_1", first.e).in("h", h);
  s.show("alpha_1", first.alpha, {}, src);
  check_rows_sum_to_one(s, "alpha_1", first.alpha);
  s.show("c_1", first.c);
  s.note("c_1 is as wide as one encoder state (2 d_h) whatever the sentence length: a summary "
         "made for this step, leaning towards the words with the highest scores.");
}

void stage_step1_state(const BahdanauLesson& r, report::Report& out) {
  const std::size_t d_in = r.d_in, d_h = r.d_h;
  const Vec& y_0 = r.y_0;
  const Vec& s_0 = r.s_0;
  const auto& tgt = r.set.tgt.tokens;
  const Step& first = r.steps[0];
  auto& s = out.stage("Step 1: the decoder's new state s_1",
                      "s_1 = tanh(W_ih [y_0 ; c_1] + b_ih + W_hh s_0 + b_hh)");
  s.in("y_0", y_0).in("c_1", first.c).in("s_0", s_0);
  s.show("s_1", first.s);
  s.note("The cell reads [y_0 ; c_1], the previous target word (\"<s>\" at step 1) beside the "
         "context, d_in + 2 d_h = " + num(d_in + 2 * d_h) + " numbers, and s_0. A trained model "
         "would now predict \"" + tgt[0] + "\" from s_1, y_0 and c_1; there is no vocabulary here.");
}

// Step i + 1 (i >= 1), folded: the alignment matrix gathers every step's weights.
void stage_step(const BahdanauLesson& r, std::size_t i, report::Report& out) {
  const Mat& h = r.h;
  const Mat& Uh = r.Uh;
  const std::vector<Step>& steps = r.steps;
  const auto& src = r.set.src.tokens;
  const auto& tgt = r.set.tgt.tokens;
  const Mat& y = r.set.tgt.x;  // (T_tgt, d_in)
  const Step& st = steps[i];
  const std::string n = num(i + 1), p = num(i);
  auto& s = out.stage("Step " + n + ": towards \"" + tgt[i] + "\", fed \"" + tgt[i - 1] + "\"",
                      "e_" + n + "j = v_a^T tanh(W_a s_" + p + " + U_a h_j);  alpha_" + n +
                          " = softmax(e_" + n + ")\n"
                          "c_" + n + " = alpha_" + n + " @ h;  s_" + n + " = tanh(W_ih [y_" + p +
                          " ; c_" + n + "] + b_ih + W_hh s_" + p + " + b_hh)");
  // Stages 5-7 showed step 1; the alignment matrix gathers every step's weights.
  s.fold("decoder step like step 1 (stages 5-7)", "decoder steps like step 1 (stages 5-7)");
  s.in("s_" + p, steps[i - 1].s).in("U_a h", Uh).in("h", h).in("y_" + p, row_of(y, i - 1));
  s.show("e_" + n, st.e, {}, src);
  s.show("alpha_" + n, st.alpha, {}, src);
  check_rows_sum_to_one(s, "alpha_" + n, st.alpha);
  s.show("c_" + n, st.c);
  s.show("s_" + n, st.s);
}

void stage_alignment(const BahdanauLesson& r, report::Report& out) {
  const std::size_t S = r.S, T_tgt = r.T_tgt;
  const bool from_files = r.from_files;
  const Vec& v_a_vec = r.v_a_vec;
  const Mat& Uh = r.Uh;
  const std::vector<Step>& steps = r.steps;
  const Mat& alignment = r.alignment;
  const auto& src = r.set.src.tokens;
  const auto& tgt = r.set.tgt.tokens;
  auto& s = out.stage("The alignment matrix", "alignment[i, j] = alpha_ij    (T_tgt, S)");
  for (std::size_t i = 0; i < T_tgt; ++i) s.in("alpha_" + num(i + 1), steps[i].alpha);
  s.show("alignment", alignment, tgt, src);
  s.attention_weights(report::Training::drawn_unless(from_files),
                      "target words (decoder steps)", "source words (encoder states)", "alpha (attention weight)");
  check_rows_sum_to_one(s, "alignment", alignment);
  if (S == 1) {
    s.note("With one source word there is nothing to choose: every alpha_i is exactly 1 and every "
           "c_i is h_1.");
  } else {
    float spread = 0.0f;  // largest distance from the uniform 1/S
    for (float a : alignment) spread = std::max(spread, std::fabs(a - 1.0f / static_cast<float>(S)));
    s.note("Row i shows where the decoder looked while producing target word i. Training makes "
           "it sharp and nearly diagonal, bent where the word order differs (the paper's "
           "figures). Here every weight is within " + report::fixed(spread, 4) + " of 1/S = " +
           report::fixed(1.0 / S, 4) + ".");
    // The weights with the query left out: what additive attention gives if tanh were linear.
    const Vec key_only = softmax_rows(matvec(Uh, v_a_vec));  // (S, d_a) @ (d_a,) -> (S,)
    float gap = 0.0f;  // largest distance of an alignment entry from key_only
    for (std::size_t i = 0; i < T_tgt; ++i)
      for (std::size_t j = 0; j < S; ++j) gap = std::max(gap, std::fabs(alignment(i, j) - key_only(j)));
    s.show("softmax(v_a^T U_a h_j)", key_only, {}, src);
    // 0.01: a tenth of what a trained alignment moves (it puts most of a row on one word).
    s.question("does the alignment ignore the decoder here, every entry within 0.01 of these weights?",
               "max |alignment - softmax(v_a^T U_a h)|", gap, Relation::AtMost, 0.01,
               "the pre-activations are large enough for tanh to bend, so W_a s_{i-1} moves the weights");
    float widest = 0.0f;  // largest |W_a s_{i-1} + U_a h_j| over every step and word
    for (const Step& st : steps)
      for (float p : st.pre) widest = std::max(widest, std::fabs(p));
    const double slope = widest > 0.0f ? std::tanh(widest) / widest : 1.0;  // tanh(p) / p at the widest p
    s.note("These weights leave the decoder out. The query enters only as W_a s_{i-1}, the same "
           "for every j; where tanh is nearly linear, e_ij ~ v_a^T W_a s_{i-1} + v_a^T U_a h_j "
           "and softmax cancels the first term. Here the largest |W_a s_{i-1} + U_a h_j| is " +
           report::fixed(widest, 4) + ", where tanh(p) / p = " + report::fixed(slope, 4) +
           (slope >= 0.9 ? ": tanh is close to linear over every pre-activation of this run."
                         : ": tanh bends noticeably there, so the cancellation is only approximate (the question above measures how far).") +
           " The decoder steers attention only through the bend of tanh, which training must exploit.");
  }
}

void stage_cost(const BahdanauLesson& r, report::Report& out) {
  const std::size_t d_in = r.d_in, d_h = r.d_h, S = r.S, T_tgt = r.T_tgt, d_a = r.d_a;
  const std::string& din = r.din;
  const std::string& dh = r.dh;
  const RnnCell& enc_fwd = r.enc_fwd;
  const RnnCell& enc_bwd = r.enc_bwd;
  const Linear& W_s = r.W_s;
  const RnnCell& decoder = r.decoder;
  auto& s = out.stage("What the alignment model costs",
                      "params = d_a * d_h + d_a * 2 d_h + d_a");
  const std::size_t w = d_a * d_h, u = d_a * 2 * d_h, v = d_a;
  s.table({"alignment model", "shape", "count", "parameters"},
          {{"W_a.weight", dims(d_a, d_h), "d_a * d_h", num(w)},
           {"U_a.weight", dims(d_a, 2 * d_h), "d_a * 2 d_h", num(u)},
           {"v_a.weight", dims(1, d_a), "d_a", num(v)},
           {"total", "", "", num(w + u + v)}});
  const std::size_t total = enc_fwd.parameters() + enc_bwd.parameters() + W_s.weight.size() +
                            W_s.bias.size() + decoder.parameters() + w + u + v;
  s.table({"whole model", "module", "parameters"},
          {{"enc_fwd", "nn.RNNCell(" + din + ", " + dh + ")", num(enc_fwd.parameters())},
           {"enc_bwd", "nn.RNNCell(" + din + ", " + dh + ")", num(enc_bwd.parameters())},
           {"W_s", "nn.Linear(" + dh + ", " + dh + ")", num(W_s.weight.size() + W_s.bias.size())},
           {"decoder", "nn.RNNCell(" + num(d_in + 2 * d_h) + ", " + dh + ")", num(decoder.parameters())},
           {"alignment model", "W_a, U_a, v_a", num(w + u + v)},
           {"total", "", num(total)}});
  s.note("An RNNCell(in, d_h) holds d_h * in + d_h * d_h + 2 d_h. The alignment model's size "
         "does not depend on S or T_tgt; its work does: T_tgt * S = " + num(T_tgt * S) +
         " scores, each a tanh layer of d_a units. With the paper's 1000 hidden units and d_a = d_h "
         "it would hold 3,001,000; Luong's dot score has no parameters (attn lesson luong).");
}

}  // namespace

// The lesson as its table of contents (--states takes its own, shorter path).
void lesson_bahdanau(const LessonOptions& opts, report::Report& out) {
  if (!opts.states_dir.empty()) return bahdanau_from_states(opts, out);
  const BahdanauLesson r = setup(opts, out);
  stage_embeddings(r, out);
  stage_encoder(r, out);
  stage_alignment_model(r, out);
  stage_first_state(r, out);
  stage_step1_scores(r, out);
  stage_step1_context(r, out);
  stage_step1_state(r, out);
  for (std::size_t i = 1; i < r.T_tgt; ++i) stage_step(r, i, out);
  stage_alignment(r, out);
  stage_cost(r, out);
}

// Teaching order 200: see `attn list`; docs/bahdanau.md is its page.
ATTN_REGISTER_LESSON({200, "bahdanau", "Bahdanau attention: additive scoring",
                      "a bidirectional encoder, e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j), the alignment matrix",
                      "Bahdanau, Cho, Bengio (2014), as told in Evolution of Attention Mechanism and by Rakesh",
                      kSeed | kDIn | kSrc | kTgt | kHidden | kInput | kWeights | kStates, lesson_bahdanau,
                      {}, {"W_a", "U_a", "v_a"}, {"H", "s"}});

}  // namespace attn
