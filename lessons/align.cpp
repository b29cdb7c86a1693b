// Lesson: attention that learns to align (Bahdanau, Cho, Bengio 2014, section 5.2.2 and its
// alignment figures; d2l.ai's "Bahdanau Attention" trains the same kind of decoder).
//
// The bahdanau lesson's encoder-decoder, given a vocabulary at both ends and trained with Adam
// on a synthetic translation task whose word order is known: English-like sentences into
// French-like ones, word for word, except that a colour adjective moves after its noun ("the
// black cat" -> "le chat noir"). Before training, the alignment of a held-out sentence is a flat
// block; after a few hundred steps it is a diagonal that bends exactly where the adjective and
// the noun swap. The lesson narrates one training step in full (data, forward, loss, backward,
// update), runs the rest, and then measures the result on sentences it never trained on: the
// translations, and whether each target word's strongest alignment is the source word it came
// from.
//
// Legend: S source words, T target words (T = S here), V_src / V_out vocabularies, d_e embedding
// width, d_h hidden width (one direction), d_a alignment width, N target words in a batch,
// K alignment snapshots.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include "core/adam.hpp"
#include "core/bahdanau_model.hpp"
#include "core/cross_entropy.hpp"
#include "lesson_kit/align_task.hpp"
#include "lesson_kit/checks.hpp"
#include "lesson_kit/registry.hpp"
#include "lesson_kit/training.hpp"

namespace attn {
namespace {

// The task and the model, small enough to train in well under a second on two cores.
constexpr std::size_t kHeldOut = 64;  // sentences never trained on: what the checks measure
constexpr std::size_t kTrain = 1024;  // training sentences, visited in order, 16 per step
constexpr std::size_t kBatchSize = 16;
constexpr std::size_t kDe = 16, kDh = 16, kDa = 16;
constexpr std::uint64_t kDefaultSeed = 2014;  // the paper's year, as in the bahdanau lesson

// The bounds of the checks, and why (the page docs/align.md says the same):
// - accuracy 0.9: nine held-out words in ten; chance is 1/24 and the untrained model is near it.
// - aligned 0.5: half of all target words; a model whose attention ignored the sentence would
//   land on the right word with probability 1/S, about 0.17 for these sentences.
// - moved 0.5: half of the words the reordering moved; an attention that only ever followed the
//   diagonal would score 0 here, so this is the measure that the alignment bends.
// - gain 0.3: trained minus untrained aligned fraction, so that a lucky untrained model cannot pass.
constexpr double kMinAccuracy = 0.9, kMinAligned = 0.5, kMinMoved = 0.5, kMinGain = 0.3;

std::string num(std::size_t n) { return std::to_string(n); }
using report::f4;  // report/numbers.hpp
std::string f3(double v) { return report::fixed(v, 3); }

std::size_t argmax(const float* v, std::size_t n) {
  std::size_t best = 0;
  for (std::size_t k = 1; k < n; ++k)
    if (v[k] > v[best]) best = k;
  return best;
}

// What the decoder is fed: <s>, then the reference words 1..T-1 (teacher forcing).
std::vector<std::size_t> decoder_inputs(const AlignPair& p) {
  std::vector<std::size_t> in = {align_start_id()};
  in.insert(in.end(), p.tgt.begin(), p.tgt.end() - 1);
  return in;
}

// The held-out measures of one model.
struct Eval {
  double accuracy = 0.0;  // target words predicted right (teacher forcing)
  double aligned = 0.0;   // target words whose strongest alignment is their source word
  double moved = 0.0;     // the same, over the words the reordering moved
  double chance = 0.0;    // the aligned fraction of an argmax drawn uniformly: mean of 1/S
  std::map<std::string, std::pair<std::size_t, std::size_t>> by_kind;  // kind -> (aligned, words)
  std::map<std::string, std::map<long, std::size_t>> misses;           // kind -> offset -> count
};

Eval evaluate(const BahdanauModel& m, const std::vector<AlignPair>& set) {
  std::size_t words = 0, right = 0, hits = 0, moved = 0, moved_hits = 0;
  Eval e;
  for (const AlignPair& p : set) {
    const BahdanauPass pass = bahdanau_forward(m, p.src, decoder_inputs(p));
    const std::size_t S = p.src.size(), V = m.vocab_out();
    for (std::size_t i = 0; i < p.tgt.size(); ++i) {
      right += argmax(pass.logits.data() + i * V, V) == p.tgt[i];
      const std::size_t j = argmax(pass.steps[i].alpha.data(), S);
      const bool hit = j == p.origin[i];
      hits += hit;
      e.chance += 1.0 / static_cast<double>(S);
      if (p.origin[i] != i) moved += 1, moved_hits += hit;
      auto& k = e.by_kind[align_kind(p.src[p.origin[i]])];
      k.first += hit, k.second += 1;
      if (!hit) e.misses[align_kind(p.src[p.origin[i]])][static_cast<long>(j) - static_cast<long>(p.origin[i])] += 1;
      ++words;
    }
  }
  e.accuracy = static_cast<double>(right) / static_cast<double>(words);
  e.aligned = static_cast<double>(hits) / static_cast<double>(words);
  e.moved = moved ? static_cast<double>(moved_hits) / static_cast<double>(moved) : 0.0;
  e.chance /= static_cast<double>(words);
  return e;
}

// One batch: forward every sentence, the mean cross-entropy over all N target words, and (when
// grads is given) the backward pass of every sentence into grads.
struct BatchRun {
  float loss = 0.0f;
  Mat logits;    // (N, V_out) every target word of the batch, sentence after sentence
  Mat d_logits;  // (N, V_out)
};
BatchRun run_batch(const BahdanauModel& m, const std::vector<const AlignPair*>& batch, BahdanauModel* grads) {
  std::vector<BahdanauPass> passes;
  std::vector<std::size_t> targets;
  for (const AlignPair* p : batch) {
    passes.push_back(bahdanau_forward(m, p->src, decoder_inputs(*p)));
    targets.insert(targets.end(), p->tgt.begin(), p->tgt.end());
  }
  const std::size_t N = targets.size(), V = m.vocab_out();
  BatchRun r;
  r.logits = xt::empty<float>({N, V});  // (N, V_out)
  std::size_t row = 0;
  for (const BahdanauPass& pass : passes) {
    std::copy(pass.logits.begin(), pass.logits.end(), r.logits.data() + row * V);
    row += pass.logits.shape()[0];
  }
  r.loss = cross_entropy(r.logits, targets);
  if (!grads) return r;
  r.d_logits = grad::cross_entropy_backward(r.logits, targets);  // (N, V_out), already divided by N
  row = 0;
  for (std::size_t b = 0; b < batch.size(); ++b) {
    const std::size_t T = batch[b]->tgt.size();
    const Mat d = xt::view(r.d_logits, xt::range(row, row + T), xt::all());  // (T, V_out)
    bahdanau_backward(m, passes[b], batch[b]->src, decoder_inputs(*batch[b]), d, *grads);
    row += T;
  }
  return r;
}

std::vector<const AlignPair*> batch_at(const AlignData& data, std::size_t step) {  // step from 0
  std::vector<const AlignPair*> b;
  for (std::size_t k = 0; k < kBatchSize; ++k) b.push_back(&data.train[(step * kBatchSize + k) % data.train.size()]);
  return b;
}

std::vector<Param> adam_params(BahdanauModel& m, BahdanauModel& g) {
  std::vector<Param> out;
  const std::vector<NamedTensor> p = named_parameters(m), q = named_parameters(g);
  for (std::size_t k = 0; k < p.size(); ++k) out.push_back({p[k].name, p[k].data, q[k].data, p[k].size});
  return out;
}

// Every parameter in one vector, in named_parameters order: what
// torch.nn.utils.parameters_to_vector(model.parameters()) gives.
Vec flat_parameters(const BahdanauModel& m) {
  BahdanauModel copy = m;
  std::vector<float> all;
  for (const NamedTensor& t : named_parameters(copy)) all.insert(all.end(), t.data, t.data + t.size);
  Vec v = xt::empty<float>({all.size()});  // (P,)
  std::copy(all.begin(), all.end(), v.begin());
  return v;
}

double norm(const float* v, std::size_t n) {
  double s = 0.0;
  for (std::size_t i = 0; i < n; ++i) s += static_cast<double>(v[i]) * v[i];
  return std::sqrt(s);
}

// The reference alignment: 1 where target word i came from source word j.
Mat reference_alignment(const AlignPair& p) {
  Mat a = xt::zeros<float>({p.tgt.size(), p.src.size()});  // (T, S)
  for (std::size_t i = 0; i < p.tgt.size(); ++i) a(i, p.origin[i]) = 1.0f;
  return a;
}

// Snapshot steps: before training, four points in between, and the end.
std::vector<std::size_t> snapshot_steps(std::size_t steps) {
  std::vector<std::size_t> at;
  for (double frac : {0.0, 0.1, 0.25, 0.5, 1.0}) {
    const auto s = static_cast<std::size_t>(std::lround(frac * static_cast<double>(steps)));
    if (at.empty() || at.back() != s) at.push_back(s);
  }
  return at;
}

// The held-out sentence the lesson follows: --src, or the first held-out sentence with the most
// adjective-noun swaps (two, in almost every seed's 64).
AlignPair chosen_sentence(const LessonOptions& opts, const AlignData& data, std::string& origin) {
  if (opts.src) {
    std::vector<std::string> unknown;
    const auto ids = align_source_ids(*opts.src, unknown);
    if (!ids) {
      std::string list, vocab;
      for (const auto& w : unknown) list += (list.empty() ? "\"" : ", \"") + w + "\"";
      for (const auto& w : align_source_words()) vocab += (vocab.empty() ? "" : " ") + w;
      throw UsageError(std::string(unknown.size() == 1 ? "unknown word " : "unknown words ") + list +
                           ": the task's source vocabulary is " + vocab,
                       "--src", "words of that vocabulary", "\"" + [&] {
                         std::string s;
                         for (const auto& w : *opts.src) s += (s.empty() ? "" : " ") + w;
                         return s;
                       }() + "\"");
    }
    if (ids->size() > kMaxSentence)
      throw UsageError("--src is too long", "--src", "at most " + num(kMaxSentence) + " words", num(ids->size()) + " words");
    origin = "--src";
    return align_translate(*ids);
  }
  const AlignPair* best = &data.held_out.front();
  auto swaps = [](const AlignPair& p) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < p.origin.size(); ++i) n += p.origin[i] != i;
    return n;
  };
  for (const AlignPair& p : data.held_out)
    if (swaps(p) > swaps(*best)) best = &p;
  origin = "held-out sentence " + num(static_cast<std::size_t>(best - data.held_out.data()) + 1) + " of " + num(kHeldOut);
  return *best;
}

std::string joined(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

// "2 words before" / "1 word after"
std::string offset_words(long d) {
  const long a = d < 0 ? -d : d;
  return std::to_string(a) + (a == 1 ? " word " : " words ") + (d < 0 ? "before" : "after");
}

// What the stages and the training loop share: the data, the model as it trains, the followed
// sentence, and what each stage measured.
struct AlignLesson {
  const LessonOptions& opts;
  std::uint64_t seed = 0;
  std::size_t steps = 0;
  double lr = 0;
  AlignData data{};  // the held-out and training sentences
  BahdanauModel model{};  // as it trains
  std::string chosen_origin{};  // why the followed sentence was chosen
  AlignPair shown{};  // the sentence the lesson follows
  std::vector<std::string> src{};  // its source words
  std::vector<std::string> tgt{};  // its target words
  std::size_t S = 0;
  std::size_t T = 0;
  std::size_t V_src = 0;
  std::size_t V_out = 0;
  Eval before{};  // the held-out measures, untrained
  std::vector<Mat> snapshots{};  // K of (T, S): the followed sentence's alignment
  std::vector<std::size_t> snap_steps{};  // their steps
  BahdanauModel grads{};  // the first batch's gradients
  std::vector<const AlignPair*> first_batch{};  // step 1's sentences (pointers into data)
  BatchRun first{};  // step 1's forward and backward
  Adam adam{AdamSettings{}};
  Vec losses{};  // (steps,)
  std::vector<std::vector<std::string>> progress_rows{};  // the held-out measures at the snapshots
  Eval after{};  // the held-out measures, trained
};

// The data, then the model, from one generator (the PyTorch script's order); the followed
// sentence; the header; and the held-out measures before training.
AlignLesson setup(const LessonOptions& opts, report::Report& out) {
  const std::uint64_t seed = opts.seed.value_or(kDefaultSeed);
  const auto steps = static_cast<std::size_t>(opts.integer("--steps"));
  const double lr = opts.number("--lr");

  // The data first, then the model, from one generator: the order the PyTorch script follows.
  TorchGenerator gen(seed);
  const AlignData data = align_make_data(gen, kHeldOut, kTrain);
  BahdanauModel model = make_bahdanau_model(gen, align_source_words().size(), align_target_words().size(), kDe, kDh, kDa);
  std::string chosen_origin;
  const AlignPair shown = chosen_sentence(opts, data, chosen_origin);
  const std::vector<std::string> src = align_source_text(shown.src), tgt = align_target_text(shown.tgt);
  const std::size_t S = src.size(), T = tgt.size(), V_src = align_source_words().size(),
                    V_out = align_target_words().size();

  out.header = {"align", "Attention that learns to align",
                "Bahdanau, Cho, Bengio (2014), section 5.2.2 and figure 3; d2l.ai 11.4 (Bahdanau attention)",
                {"seed " + num(seed), "steps " + num(steps), "lr " + format_option_value(lr), "batch " + num(kBatchSize),
                 "d_e " + num(kDe), "d_h " + num(kDh), "d_a " + num(kDa), "train " + num(kTrain),
                 "held-out " + num(kHeldOut)},
                {"from align_torch import *  # docs/align_torch.py: make_data, Align, batch_loss",
                 "torch.manual_seed(" + num(seed) + ")",
                 "held_out, train = make_data(" + num(kHeldOut) + ", " + num(kTrain) + ")  # torch.rand(9) per sentence",
                 "model = Align(" + num(V_src) + ", " + num(V_out) + ", d_e=" + num(kDe) + ", d_h=" + num(kDh) +
                     ", d_a=" + num(kDa) + ")",
                 "opt = torch.optim.Adam(model.parameters(), lr=" + format_option_value(lr) + ")",
                 "for t in range(" + num(steps) + "):",
                 "    batch = [train[(" + num(kBatchSize) + " * t + k) % " + num(kTrain) + "] for k in range(" +
                     num(kBatchSize) + ")]",
                 "    loss = batch_loss(model, batch); opt.zero_grad(); loss.backward(); opt.step()"}};
  const Eval before = evaluate(model, data.held_out);

  AlignLesson r{opts};
  r.seed = seed;
  r.steps = steps;
  r.lr = lr;
  r.data = data;
  r.model = std::move(model);
  r.chosen_origin = chosen_origin;
  r.shown = shown;
  r.src = src;
  r.tgt = tgt;
  r.S = S;
  r.T = T;
  r.V_src = V_src;
  r.V_out = V_out;
  r.before = before;
  return r;
}

// [1] The task.
void stage_task(const AlignLesson& r, report::Report& out) {
  const LessonOptions& opts = r.opts;
  const std::size_t V_src = r.V_src;
  const AlignData& data = r.data;
  const std::string& chosen_origin = r.chosen_origin;
  const AlignPair& shown = r.shown;
  const std::vector<std::string>& src = r.src;
  const std::vector<std::string>& tgt = r.tgt;
  auto& s = out.stage("The task: translate, and move each colour after its noun",
                      "target = translate(source) word by word, with adj noun -> noun adj\n"
                      "sentence = det [adj] noun verb det [adj] noun");
  // The dictionary, a row per kind of word: the i-th target word translates the i-th source word.
  std::vector<std::vector<std::string>> vocab;
  for (std::size_t id = 0; id < V_src; ++id) {
    if (vocab.empty() || vocab.back()[0] != align_kind(id)) vocab.push_back({align_kind(id), "", ""});
    vocab.back()[1] += (vocab.back()[1].empty() ? "" : " ") + align_source_words()[id];
    vocab.back()[2] += (vocab.back()[2].empty() ? "" : " ") + align_target_words()[id];
  }
  s.table({"kind", "source words", "target words, in the same order"}, vocab);
  std::vector<std::vector<std::string>> examples;
  for (std::size_t k = 0; k < 4; ++k) {
    const AlignPair& p = data.train[k];
    examples.push_back({joined(align_source_text(p.src)), joined(align_target_text(p.tgt))});
  }
  s.table({"training sentence", "its translation"}, examples);
  std::size_t moved_total = 0, words_total = 0;
  for (const AlignPair& p : data.train) {
    words_total += p.tgt.size();
    for (std::size_t i = 0; i < p.origin.size(); ++i) moved_total += p.origin[i] != i;
  }
  s.note("Every sentence is drawn from the seed: torch.rand(9) per sentence picks the determiner, "
         "whether an adjective comes (u < 0.5), the adjective, the noun, the verb and the second noun "
         "phrase, each word as floor(u * 6). " + num(kHeldOut) + " distinct held-out sentences come "
         "first, then " + num(kTrain) + " training sentences, none of them held out. In the training "
         "set " + num(moved_total) + " of " + num(words_total) + " target words (" +
         f3(static_cast<double>(moved_total) / static_cast<double>(words_total)) +
         ") stand at another position than their source word: those are what the alignment has to bend for.");
  s.note("The lesson follows one sentence throughout (" + chosen_origin + "): \"" + joined(src) + "\" -> \"" +
         joined(tgt) + "\".");
  if (opts.src) {
    const bool trained_on = std::any_of(data.train.begin(), data.train.end(),
                                        [&](const AlignPair& p) { return p.src == shown.src; });
    s.note(std::string(trained_on ? "It is one of the training sentences, so the model has seen it: the "
                                    "held-out checks below are still measured on the 64 unseen ones."
                                  : "It is not among the training sentences.") +
           (align_grammatical(shown.src) ? ""
                                         : " It does not follow the grammar the model is trained on, so "
                                           "whatever it does with it is extrapolation."));
  }
  s.show("reference alignment", reference_alignment(shown), tgt, src);
  s.attention_weights({}, "target words (decoder steps)", "source words (encoder states)",
                      "reference alignment (1: aligned)");
  s.note("Row i marks the source word that target word i translates: the diagonal, except where an "
         "adjective and its noun trade places. This is what the attention should discover by itself; "
         "it is never shown to the model.");
}

// [2] The model.
void stage_model(const AlignLesson& r, report::Report& out) {
  const std::size_t V_src = r.V_src, V_out = r.V_out;
  const BahdanauModel& model = r.model;
  auto& s = out.stage("The model: the bahdanau lesson's, with a vocabulary at both ends",
                      "h_j = [enc_fwd ; enc_bwd](src_emb[x_j]);  s_0 = tanh(W_s h_bwd_1 + b_s)\n"
                      "alpha_i = softmax_j(v_a . tanh(W_a s_{i-1} + U_a h_j));  c_i = alpha_i @ H\n"
                      "s_i = decoder([tgt_emb[y_{i-1}] ; c_i], s_{i-1})\n"
                      "logits_i = out([s_i ; c_i])");
  BahdanauModel copy = model;
  std::vector<std::vector<std::string>> rows;
  // A row per module: its parameters and their shapes (enc_fwd and enc_bwd are alike).
  std::size_t in_module = 0;
  for (const NamedTensor& t : named_parameters(copy)) {
    const std::size_t dot = t.name.find('.');
    const std::string module = t.name.substr(0, dot), param = t.name.substr(dot + 1);
    if (rows.empty() || rows.back()[0] != module) rows.push_back({module, "", ""}), in_module = 0;
    in_module += t.size;
    rows.back()[1] += (rows.back()[1].empty() ? "" : ", ") + param + " " + shape_str(t.shape);
    rows.back()[2] = num(in_module);
  }
  rows.push_back({"total", "", num(parameter_count(model))});
  s.table({"module", "parameters", "values"}, rows);
  s.show("parameters", flat_parameters(model));
  s.note("Drawn after the data from the same generator, in the order PyTorch builds the modules: "
         "nn.Embedding (N(0, 1)) for the " + num(V_src) + " source words and the " + num(V_out) +
         " target words plus <s>, then nn.RNNCell and nn.Linear (U(-1/sqrt(in), 1/sqrt(in))). "
         "\"parameters\" is all of them in that order, torch.nn.utils.parameters_to_vector(model.parameters()); "
         "--dump writes it whole.");
}

// [3] One forward pass, on the sentence the lesson follows (its alignment is the first snapshot).
void stage_forward(AlignLesson& r, report::Report& out) {
  const std::size_t S = r.S, T = r.T, V_out = r.V_out;
  const BahdanauModel& model = r.model;
  const AlignPair& shown = r.shown;
  const std::vector<std::string>& src = r.src;
  const std::vector<std::string>& tgt = r.tgt;
  std::vector<Mat>& snapshots = r.snapshots;
  std::vector<std::size_t>& snap_steps = r.snap_steps;
  auto& s = out.stage("One forward pass before training",
                      "x = src_emb[source ids];  H = encoder(x);  U_a H once\n"
                      "step i = 1..T: alpha_i, c_i, s_i, logits_i");
  const BahdanauPass pass = bahdanau_forward(model, shown.src, decoder_inputs(shown));
  const std::string Ss = num(S), Ts = num(T);
  s.table({"tensor", "shape", "what it holds"},
          {{"x", shape_str({S, kDe}), "one src_emb row per source word"},
           {"h_fwd, h_bwd", shape_str({S, kDh}), "the two encoder passes, from zeros"},
           {"H", shape_str({S, 2 * kDh}), "[h_fwd ; h_bwd]: one state per source word"},
           {"U_a H", shape_str({S, kDa}), "the keys' half of every score, once per sentence"},
           {"s_0", shape_str({kDh}), "tanh(W_s h_bwd_1 + b_s)"},
           {"alpha_i", shape_str({S}), "softmax of the " + Ss + " scores of step i"},
           {"c_i", shape_str({2 * kDh}), "alpha_i @ H"},
           {"[y_{i-1} ; c_i]", shape_str({kDe + 2 * kDh}), "the decoder cell's input"},
           {"s_i", shape_str({kDh}), "the decoder's state after step i"},
           {"logits_i", shape_str({V_out}), "out([s_i ; c_i]): a score per target word"}});
  const Mat alignment = pass.alignment();  // (T, S)
  s.show("alignment", alignment, tgt, src);
  s.attention_weights(report::Training::untrained(),
                      "target words (decoder steps)", "source words (encoder states)", "alpha (attention weight)");
  check_rows_sum_to_one(s, "alignment", alignment);
  snapshots.push_back(alignment);
  snap_steps.push_back(0);
  s.show("logits", pass.logits, tgt).detail();  // 7 x 24 scores: the note says what they guess
  std::vector<std::string> guess;
  for (std::size_t i = 0; i < T; ++i) guess.push_back(align_target_words()[argmax(pass.logits.data() + i * V_out, V_out)]);
  float widest = 0.0f;  // how far the weights stray from uniform
  for (float a : alignment) widest = std::max(widest, std::fabs(a - 1.0f / static_cast<float>(S)));
  const std::string fed = T > 1 ? "<s>, then \"" + joined(std::vector<std::string>(tgt.begin(), tgt.end() - 1)) + "\""
                                : std::string("<s> only");
  s.note("Fed the reference words (teacher forcing: " + fed + "), the untrained decoder's best guesses are \"" + joined(guess) + "\". Every alignment weight is within " +
         f4(widest) + " of 1/S = " + f4(1.0 / static_cast<double>(S)) +
         ": with random weights the scores barely differ, as in the bahdanau lesson.");
}

// [4] The loss of the first batch.
void stage_loss(AlignLesson& r, report::Report& out) {
  r.grads = zeros_like(r.model);                         // every parameter's shape, zeros
  r.first_batch = batch_at(r.data, 0);
  r.first = run_batch(r.model, r.first_batch, &r.grads);  // logits, d_logits (N, V_out)
  const std::size_t V_out = r.V_out;
  const BatchRun& first = r.first;
  auto& s = out.stage("The loss of the first batch",
                      "loss = mean over the N target words of -log softmax(logits_n)[target_n]");
  s.in("logits", first.logits);
  const std::size_t N = first.logits.shape()[0];
  s.show("loss", Vec({first.loss}));  // (1,)
  const double uniform = std::log(static_cast<double>(V_out));
  s.note("The batch is training sentences 1.." + num(kBatchSize) + ", " + num(N) +
         " target words; each row of logits is one word's " + num(V_out) + " scores. A model that "
         "knows nothing puts 1/" + num(V_out) + " on every word and scores log " + num(V_out) + " = " +
         f4(uniform) + "; this one scores " + f4(first.loss) + ".");
}

// [5] Its backward pass.
void stage_backward(AlignLesson& r, report::Report& out) {
  const std::size_t V_out = r.V_out;
  BahdanauModel& grads = r.grads;
  const std::vector<const AlignPair*>& first_batch = r.first_batch;
  const BatchRun& first = r.first;
  auto& s = out.stage("One backward pass: every parameter's gradient",
                      "dL/dlogits = (softmax(logits) - onehot(targets)) / N\n"
                      "then back through out, the decoder, the attention (softmax, tanh), U_a H,\n"
                      "s_0, both encoder passes through time, and the embedding rows");
  s.in("logits", first.logits);
  s.show("dL/dlogits", Mat(xt::view(first.d_logits, xt::range(0, first_batch[0]->tgt.size()), xt::all())),
         std::vector<std::string>(align_target_text(first_batch[0]->tgt)));
  s.detail();  // 5 x 24 numbers; the equation and the check say what they are
  // A row per module, as in stage 2: the norm of each of its parameters' gradients.
  std::vector<std::vector<std::string>> rows;
  for (const NamedTensor& t : named_parameters(grads)) {
    const std::size_t dot = t.name.find('.');
    const std::string module = t.name.substr(0, dot), param = t.name.substr(dot + 1);
    if (rows.empty() || rows.back()[0] != module) rows.push_back({module, ""});
    rows.back()[1] += (rows.back()[1].empty() ? "" : ", ") + param + " " + report::scientific(norm(t.data, t.size), 3);
  }
  s.table({"gradient of", "the norm of each parameter's gradient"}, rows);
  // Each row of dL/dlogits sums to 0: the probabilities sum to 1, the one-hot target too.
  double worst = 0.0;
  const std::size_t N = first.d_logits.shape()[0];
  for (std::size_t n = 0; n < N; ++n) {
    double sum = 0.0;
    for (std::size_t v = 0; v < V_out; ++v) sum += first.d_logits(n, v);
    worst = std::max(worst, std::fabs(sum));
  }
  s.check("every row of dL/dlogits sums to 0", "max |row sum|", worst, Relation::AtMost,
          sum_tolerance(V_out) / static_cast<double>(N));
  s.note("dL/dlogits holds the first sentence's rows (--full prints them: -(1 - p) in the target's column, "
         "p elsewhere, divided by N); each gradient has its parameter's shape. "
         "The tests hold these backward passes to central finite differences in double precision, and to "
         "PyTorch's autograd on the first training steps.");
}

// [6] The first Adam step.
void stage_update(AlignLesson& r, report::Report& out) {
  r.adam = Adam(AdamSettings{r.lr});
  const std::size_t V_src = r.V_src, V_out = r.V_out;
  const double lr = r.lr;
  BahdanauModel& model = r.model;
  BahdanauModel& grads = r.grads;
  const std::vector<const AlignPair*>& first_batch = r.first_batch;
  const BatchRun& first = r.first;
  Adam& adam = r.adam;
  auto& s = out.stage("The update: one Adam step",
                      "m = 0.9 m + 0.1 g;  v = 0.999 v + 0.001 g^2\n"
                      "p = p - lr * (m / (1 - 0.9^t)) / (sqrt(v / (1 - 0.999^t)) + 1e-8)");
  const Vec p_before = flat_parameters(model);  // (P,)
  adam.step(adam_params(model, grads));
  const Vec p_after = flat_parameters(model);  // (P,)
  double largest = 0.0, moved_near_lr = 0.0;
  std::size_t nonzero = 0;
  for (std::size_t k = 0; k < p_before.size(); ++k) {
    const double d = std::fabs(static_cast<double>(p_after(k)) - p_before(k));
    largest = std::max(largest, d);
    if (d > 0.0) ++nonzero, moved_near_lr += d >= 0.5 * lr;
  }
  s.show("parameters", p_after);
  // At t = 1, m / (1 - 0.9) = g and sqrt(v / (1 - 0.999)) = |g|, so each weight moves by
  // lr * |g| / (|g| + 1e-8) < lr. The float32 subtraction may round that up by half a unit of
  // the largest parameter; 1e-6 is far above it and far below any real overshoot.
  s.check("no parameter moves by more than lr in Adam's first step", "max |change|", largest, Relation::AtMost,
          lr + 1e-6);
  const float after = run_batch(model, first_batch, nullptr).loss;
  // Embedding rows of words the batch never reads get a gradient of exactly 0 and stay put.
  std::vector<bool> src_used(V_src, false), tgt_used(V_out + 1, false);
  for (const AlignPair* p : first_batch) {
    for (std::size_t id : p->src) src_used[id] = true;
    for (std::size_t id : decoder_inputs(*p)) tgt_used[id] = true;
  }
  const std::size_t unused_rows = static_cast<std::size_t>(std::count(src_used.begin(), src_used.end(), false) +
                                                           std::count(tgt_used.begin(), tgt_used.end(), false));
  const std::size_t still = p_before.size() - nonzero, near = static_cast<std::size_t>(moved_near_lr);
  // At t = 1 a parameter moves by lr |g| / (|g| + 1e-8): less than lr / 2 exactly when |g| < 1e-8.
  s.note("At t = 1 the bias corrections make m / (1 - 0.9) = g and v / (1 - 0.999) = g^2, so every "
         "parameter moves by lr * g / (|g| + 1e-8): nearly lr, whatever the size of its gradient. " +
         num(near) + " of the " + num(p_before.size()) + " parameters moved by more than lr / 2" +
         (nonzero > near ? ", " + num(nonzero - near) + " by less (a gradient below 1e-8)" : std::string()) +
         (still ? ", and " + num(still) + " did not move: their gradient is exactly 0" +
                      (still == unused_rows * kDe ? " (the " + num(unused_rows) +
                                                        " embedding rows of words no sentence of the batch uses)"
                                                  : std::string())
                : std::string()) +
         ". The same batch now scores " + f4(after) + " instead of " + f4(first.loss) + ".");
}

// [7] The training run: steps 2..steps, each forward, loss, backward, Adam, with snapshots of the
// followed sentence and the held-out measures on the way.
void train(AlignLesson& r) {
  const LessonOptions& opts = r.opts;
  const std::size_t steps = r.steps;
  const double lr = r.lr;
  const AlignData& data = r.data;
  const AlignPair& shown = r.shown;
  const Eval& before = r.before;
  const BatchRun& first = r.first;
  BahdanauModel& model = r.model;
  BahdanauModel& grads = r.grads;
  Adam& adam = r.adam;
  std::vector<Mat>& snapshots = r.snapshots;
  std::vector<std::size_t>& snap_steps = r.snap_steps;
  const std::vector<std::size_t> wanted = snapshot_steps(steps);
  Vec& losses = r.losses = xt::empty<float>({steps});  // (steps,)
  losses(0) = first.loss;
  std::vector<std::vector<std::string>>& progress_rows = r.progress_rows;
  progress_rows.push_back({"0", "", f3(before.accuracy), f3(before.aligned)});
  check_finite_loss(first.loss, 1, steps, lr);
  report_progress(opts, 1, steps);
  auto snapshot = [&](std::size_t step) {
    const BahdanauPass pass = bahdanau_forward(model, shown.src, decoder_inputs(shown));
    snapshots.push_back(pass.alignment());
    snap_steps.push_back(step);
    const Eval e = evaluate(model, data.held_out);
    progress_rows.push_back({num(step), f4(losses(step - 1)), f3(e.accuracy), f3(e.aligned)});
  };
  if (std::find(wanted.begin(), wanted.end(), std::size_t{1}) != wanted.end()) snapshot(1);
  for (std::size_t t = 1; t < steps; ++t) {
    grads = zeros_like(model);
    const BatchRun run = run_batch(model, batch_at(data, t), &grads);
    check_finite_loss(run.loss, t + 1, steps, lr);
    losses(t) = run.loss;
    adam.step(adam_params(model, grads));
    report_progress(opts, t + 1, steps);
    if (std::find(wanted.begin(), wanted.end(), t + 1) != wanted.end()) snapshot(t + 1);
  }
  r.after = evaluate(model, data.held_out);
}

// [7] The training run, as it went.
void stage_training(const AlignLesson& r, report::Report& out) {
  const std::size_t steps = r.steps;
  const Vec& losses = r.losses;
  const std::vector<std::vector<std::string>>& progress_rows = r.progress_rows;
  auto& s = out.stage("Training: " + num(steps) + " steps of " + num(kBatchSize) + " sentences",
                      "step t = 1..steps: forward, loss, backward, Adam\n"
                      "on training sentences 16 (t - 1) + 1 .. 16 t (wrapping around)");
  s.curve("losses", losses, "step");
  s.table({"step", "batch loss", "held-out accuracy", "aligned"}, progress_rows);
  float low = losses(0);
  std::size_t low_at = 0;
  for (std::size_t t = 0; t < steps; ++t)
    if (losses(t) < low) low = losses(t), low_at = t;
  s.note("The loss is each step's batch, before its update: " + f4(losses(0)) + " at step 1, " +
         f4(losses(steps - 1)) + " at step " + num(steps) + ", lowest " + f4(low) + " at step " +
         num(low_at + 1) + ". \"held-out accuracy\" and \"aligned\" are measured on the " + num(kHeldOut) +
         " held-out sentences after the step: the words predicted right, and the words whose strongest "
         "alignment is their own source word. The training run visits the " + num(kTrain) +
         " sentences " + f3(static_cast<double>(steps * kBatchSize) / static_cast<double>(kTrain)) + " times.");
}

// [8] The alignment of the followed sentence, snapshot by snapshot.
void stage_snapshots(const AlignLesson& r, report::Report& out) {
  const std::size_t S = r.S, T = r.T;
  const AlignPair& shown = r.shown;
  const std::vector<std::string>& src = r.src;
  const std::vector<std::string>& tgt = r.tgt;
  const std::vector<Mat>& snapshots = r.snapshots;
  const std::vector<std::size_t>& snap_steps = r.snap_steps;
  auto& s = out.stage("The followed sentence's alignment as training goes",
                      "alignment[i, j] = alpha_ij of \"" + joined(src) + "\", after step k");
  for (std::size_t k = 0; k < snapshots.size(); ++k) {
    s.show("alignment after step " + num(snap_steps[k]), snapshots[k], tgt, src);
    const report::Training weights =
        snap_steps[k] == 0 ? report::Training::untrained() : report::Training::trained(snap_steps[k]);
    s.attention_weights(weights, "target words (decoder steps)", "source words (encoder states)",
                        "alpha (attention weight)");
    // Step 0 is stage 3's alignment again (--full prints it); the others are drawn, their values
    // printed by --full: the pictures show the alignment forming.
    if (snap_steps[k] == 0) s.detail();
    else s.picture_only();
  }
  const Mat& last = snapshots.back();
  std::size_t on_source = 0;
  std::vector<std::string> where;
  for (std::size_t i = 0; i < T; ++i) {
    const std::size_t j = argmax(last.data() + i * S, S);
    on_source += j == shown.origin[i];
    if (shown.origin[i] != i)
      where.push_back("\"" + tgt[i] + "\" looks hardest at \"" + src[j] + "\" (" + f3(last(i, j)) + ")");
  }
  s.note("After step " + num(snap_steps.back()) + ", " + num(on_source) + " of the " + num(T) +
         " target words look hardest at the source word they translate" +
         (where.empty() ? std::string(". This sentence has no adjective to move.")
                        : ". Where the order changes: " + [&] {
                            std::string w;
                            for (const auto& x : where) w += (w.empty() ? "" : "; ") + x;
                            return w;
                          }() + ".") +
         " Compare the reference alignment of stage 1.");
}

// [9] The measured result.
void stage_result(const AlignLesson& r, report::Report& out) {
  const std::size_t T = r.T, V_out = r.V_out;
  const BahdanauModel& model = r.model;
  const AlignPair& shown = r.shown;
  const std::vector<std::string>& src = r.src;
  const std::vector<std::string>& tgt = r.tgt;
  const Eval& before = r.before;
  const std::vector<std::size_t>& snap_steps = r.snap_steps;
  const Eval& after = r.after;
  auto& s = out.stage("What training achieved, measured on " + num(kHeldOut) + " held-out sentences",
                      "accuracy = words predicted right (teacher forcing)\n"
                      "aligned = words whose argmax_j alpha_ij is their source word");
  BahdanauPass greedy_pass;
  const std::vector<std::size_t> greedy =
      bahdanau_greedy(model, shown.src, T, align_start_id(), greedy_pass);
  const std::vector<std::string> said = align_target_text(greedy);
  std::size_t right = 0;
  for (std::size_t i = 0; i < T; ++i) right += greedy[i] == shown.tgt[i];
  if (right == T) {
    s.note("Left to itself (each word it chose fed back, no reference), the model translates \"" + joined(src) +
           "\" as \"" + joined(said) + "\", every word as the rule says; so it fed itself the reference, and its "
           "alignment is the last one above.");
  } else {
    s.show("alignment of the model's own translation", greedy_pass.alignment(), said, src);
    s.attention_weights(report::Training::trained(snap_steps.back()),
                        "target words (decoder steps)", "source words (encoder states)", "alpha (attention weight)");
    s.note("Left to itself (each word it chose fed back, no reference), the model translates \"" + joined(src) +
           "\" as \"" + joined(said) + "\": " + num(right) + " of " + num(T) +
           " words as the rule says (the reference is \"" + joined(tgt) + "\"). Above: where it looked while saying it.");
  }
  std::vector<std::vector<std::string>> rows;
  for (const char* kind : {"det", "adj", "noun", "verb"}) {
    if (!after.by_kind.count(kind)) continue;  // --src cannot change the held-out set, but stay safe
    const auto& counts = after.by_kind.at(kind);
    const auto& b = before.by_kind.at(kind);
    rows.push_back({kind, num(counts.second), f3(static_cast<double>(b.first) / static_cast<double>(b.second)),
                    f3(static_cast<double>(counts.first) / static_cast<double>(counts.second))});
  }
  rows.push_back({"all", "", f3(before.aligned), f3(after.aligned)});
  s.table({"source word", "target words", "aligned before", "aligned after"}, rows);
  s.note("\"aligned before\" is the untrained model (" + f3(before.aligned) + " in all): where its argmax "
         "lands is decided by the random weights, not by anything learned; a uniformly random column "
         "would score " + f3(before.chance) + ".");
  s.check("held-out token accuracy is at least " + format_option_value(kMinAccuracy) +
              " (chance is 1/" + num(V_out) + ")",
          "accuracy", after.accuracy, Relation::AtLeast, kMinAccuracy);
  s.check("at least half of the held-out target words look hardest at the word they came from "
          "(chance is " + f3(after.chance) + ")",
          "aligned", after.aligned, Relation::AtLeast, kMinAligned);
  s.check("at least half of the words the reordering moved look hardest at the word they came from "
          "(a diagonal would score 0)",
          "moved aligned", after.moved, Relation::AtLeast, kMinMoved);
  s.check("training raised the aligned fraction by at least " + format_option_value(kMinGain) +
              " over the untrained model's " + f3(before.aligned),
          "gain", after.aligned - before.aligned, Relation::AtLeast, kMinGain);
  // Where the misses go, computed: for each kind, how many missed and the most common offset.
  std::string miss_note;
  for (const char* kind : {"det", "adj", "noun", "verb"}) {
    if (!after.misses.count(kind)) continue;
    std::size_t total = 0, top = 0;
    long top_at = 0;
    for (const auto& [d, n] : after.misses.at(kind)) {
      total += n;
      if (n > top) top = n, top_at = d;
    }
    miss_note += (miss_note.empty() ? "" : "; ") + std::string(kind) + " " + num(total) + " (" + num(top) +
                 " of them on the word " + offset_words(top_at) + ")";
  }
  s.note("Chance is the mean of 1/S over the held-out words: an attention that ignored the sentence would "
         "land on the right word that often. The bounds are fixed, not fitted: accuracy " +
         format_option_value(kMinAccuracy) + " (nine words in ten), aligned " + format_option_value(kMinAligned) +
         " (about three times chance), moved " + format_option_value(kMinMoved) +
         " (a plain diagonal scores 0), gain " + format_option_value(kMinGain) + "." +
         (miss_note.empty() ? std::string(" Every held-out word looks hardest at its own source word.")
                            : " The held-out words that look hardest elsewhere, by the kind of their source word: " +
                                  miss_note +
                                  ". A bidirectional state carries its neighbours too, so the decoder can read a "
                                  "word off the state next to it."));
  s.show("parameters", flat_parameters(model));
}

}  // namespace

// The lesson as its table of contents: one step of training taken apart, then the whole run.
void lesson_align(const LessonOptions& opts, report::Report& out) {
  AlignLesson r = setup(opts, out);
  stage_task(r, out);
  stage_model(r, out);
  stage_forward(r, out);
  stage_loss(r, out);
  stage_backward(r, out);
  stage_update(r, out);
  train(r);
  stage_training(r, out);
  stage_snapshots(r, out);
  stage_result(r, out);
}

// Teaching order 250: after bahdanau (200), whose model it trains, and before luong (300).
ATTN_REGISTER_LESSON({250, "align", "Attention that learns to align",
                      "train the bahdanau model with Adam on a reordering task; watch the alignment bend",
                      "Bahdanau, Cho, Bengio (2014), section 5.2.2 and figure 3; d2l.ai 11.4 (Bahdanau attention)",
                      kSeed | kSrc, lesson_align,
                      {steps_option(300, 5000), lr_option(0.01, 1)}});

}  // namespace attn
