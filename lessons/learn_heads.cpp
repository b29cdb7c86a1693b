// Lesson: attention that learns. A two-layer causal transformer made only of the pieces the
// earlier lessons show (token and position embeddings, multi-head causal attention, a residual,
// an unembedding; core/tiny_lm.*) is trained with Adam on an induction task: every sequence ends
// with a random stretch of letters written twice, and on the second copy the model must predict
// the next letter by finding where the current letter occurred before and reading what followed
// it. Heads in the first layer learn to look at the previous token, heads in the second layer
// learn to look at the token after the earlier occurrence: the induction circuit of Olsson et al.
// 2022 ("In-context learning and induction heads"; Elhage et al. 2021, "A mathematical framework
// for transformer circuits"). The lesson shows the data, one forward pass, the loss, one backward
// pass, one Adam step, then the run, and measures which head took which job.
//
// Legend: N sequences, B batch, T tokens a sequence is read (T + 1 with its last target),
// V vocabulary (letters), d model width, h heads, d_k = d / h, L repeated stretch length.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/adam.hpp"
#include "core/cross_entropy.hpp"
#include "core/tiny_lm.hpp"
#include "lesson_kit/checks.hpp"
#include "lesson_kit/induction.hpp"
#include "lesson_kit/registry.hpp"
#include "lesson_kit/training.hpp"

namespace attn {
namespace {

// The model and the task: small enough that 300 steps take about a second (docs/learn-heads.md).
const InductionTask kTask;                 // V = 32 letters, T = 24 read, stretches of 6..11 (induction.hpp)
constexpr std::size_t kWidth = 32;         // d
constexpr std::size_t kHeadsPerLayer = 2;  // h per layer
constexpr std::size_t kLayers = 2;
constexpr std::size_t kBatchSize = 32;     // B sequences per step
constexpr std::size_t kHeldOut = 64;       // sequences the heads are measured on, never trained on
constexpr std::uint64_t kDefaultSeed = 1;
constexpr double kDefaultLr = 0.01;
constexpr std::size_t kDefaultSteps = 300;

// The bounds of the checks, and why (docs/learn-heads.md repeats them):
//  - an induction head puts at least half its weight on the one key (of 13 to 24) its job names;
//    attending evenly would give 0.05, untrained heads give about 0.05, and the best trained
//    layer-2 head gave 0.87 to 0.97 over seeds 0..49;
//  - a previous-token head puts at least 0.4 on the token before (evenly: 0.12; trained: 0.63 to 0.70);
//  - the held-out second copies are predicted at least half right (guessing: 1/32; trained: 0.87 to 0.94).
constexpr double kInductionBound = 0.5;
constexpr double kPreviousBound = 0.4;
constexpr double kAccuracyBound = 0.5;
// The loss at the end is at most half that of guessing uniformly (log V / 2 = 1.73).
constexpr double kLossFraction = 0.5;
// What the marks on the heatmaps of layer 2 are (the cells head_scores' induction score reads).
const char* const kMarkedWhat =
    "the induction cells, where query t attends to the letter after the earlier occurrence of letter t";

std::string text_of(const Ids& ids, std::size_t n, std::size_t from, std::size_t to) {
  std::string s;
  for (std::size_t t = from; t < to; ++t) s += induction_letter(ids(n, t));
  return s;
}

// One sequence's attention weights in one layer: (N, h, T, T) -> (1, h, T, T).
xt::xtensor<double, 4> first_sequence(const xt::xtensor<double, 4>& w) {
  const std::size_t h = w.shape()[1], T = w.shape()[2];
  xt::xtensor<double, 4> one = xt::empty<double>({std::size_t{1}, h, T, T});  // (1, h, T, T)
  std::copy(w.data(), w.data() + h * T * T, one.data());
  return one;
}

double norm(const double* v, std::size_t n) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i) s += v[i] * v[i];
  return std::sqrt(s);
}

// Every head's previous-token and induction scores on the held-out sequences: "prev ind" per head,
// layer by layer, head by head.
std::vector<HeadScores> all_head_scores(const TinyLmForward<double>& f, const InductionBatch& held) {
  std::vector<HeadScores> scores;
  for (std::size_t l = 0; l < kLayers; ++l)
    for (std::size_t i = 0; i < kHeadsPerLayer; ++i) scores.push_back(head_scores(f.blocks[l].attn_weights, i, held));
  return scores;
}

// How often the heads are scored during training: every 25 steps, or at most about 12 rows for a
// longer run (a multiple of 25).
std::size_t score_interval(std::size_t steps) {
  const std::size_t every = 25;
  return std::max(every, (steps / 12 + every - 1) / every * every);
}

using report::f4;  // report/numbers.hpp
std::string f2(double v) { return report::fixed(v, 2); }

// The job a head's scores name: the larger of its two job scores when it clears that job's bound.
std::string job_of(const HeadScores& s) {
  const bool ind = s.induction >= kInductionBound, prev = s.previous >= kPreviousBound;
  if (ind && (!prev || s.induction >= s.previous)) return "induction";
  if (prev) return "previous token";
  return "no single job";
}

// What the stages and the training loop share: the settings, the model as it trains, the data,
// and what each stage measured.
struct LearnHeadsLesson {
  const LessonOptions& opts;
  std::uint64_t seed = 0;
  std::size_t steps = 0;
  double lr = 0;
  std::size_t B = 0;
  std::size_t T = 0;
  std::size_t V = 0;
  std::size_t d = 0;
  std::size_t h = 0;
  std::string S{};  // the seed, as text
  std::string Ss{};  // the steps, as text
  std::string lr_text{};
  TinyLmT<double> model{};  // drawn in float32, trained in float64
  TorchGenerator data_gen{0};  // the training batches: step 1's, then one per step
  InductionBatch held{};  // (64, T + 1): the held-out sequences the heads are measured on
  InductionBatch first{};  // (B, T + 1): step 1's batch
  report::Labels letters{};  // the first held-out sequence, for the pictures
  TinyLmForward<double> f0{};  // every activation of the first batch, untrained
  TinyLmForward<double> held0{};  // the held-out sequences, untrained
  report::Stage* stage2 = nullptr;  // the model's stage: its note is written after training
  std::size_t untrained_l2 = 0;  // the item of layer 2's untrained picture in stage 2
  double loss0 = 0;  // the untrained loss on the first batch
  TinyLmGrads<double> g0{};  // the first batch's gradients
  AdamT<double> adam{AdamSettings{}};
  xt::xtensor<double, 1> bias_before{};  // (d,): layer 2's out_proj.bias before the first update
  xt::xtensor<double, 1> losses{};  // (steps,)
  std::vector<std::size_t> snap_steps{};  // two moments on the way, for --dump
  std::vector<xt::xtensor<double, 4>> snapshots{};  // held-out 0, layer 2, at those steps
  std::size_t every = 0;  // score_interval(steps)
  std::vector<std::size_t> scored_at{};  // the steps the heads were scored at
  std::vector<std::vector<HeadScores>> scored{};  // the heads' held-out scores at those steps
  TinyLmForward<double> held1{};  // the held-out sequences, trained
};

// The header, the model (drawn in float32, redrawn embeddings, then float64), the data, and the
// untrained forward passes.
LearnHeadsLesson setup(const LessonOptions& opts, report::Report& out) {
  const std::uint64_t seed = opts.seed.value_or(kDefaultSeed);
  const std::size_t steps = static_cast<std::size_t>(opts.integer("--steps"));
  const double lr = opts.number("--lr");
  const std::size_t B = kBatchSize, T = kTask.context, V = kTask.vocab, d = kWidth, h = kHeadsPerLayer;
  const std::string S = std::to_string(seed), Ss = std::to_string(steps), lr_text = format_option_value(lr);

  out.header = {"learn-heads", "Attention that learns: induction heads",
                "Olsson et al. 2022, In-context learning and induction heads; Elhage et al. 2021, A mathematical "
                "framework for transformer circuits",
                {"seed " + S, "steps " + Ss, "lr " + lr_text, "batch " + std::to_string(B), "tokens " + std::to_string(T),
                 "vocab " + std::to_string(V), "d " + std::to_string(d), "heads " + std::to_string(h),
                 "layers " + std::to_string(kLayers)},
                {"from learn_heads_torch import *  # docs/learn_heads_torch.py: TinyLm, make_batch, train",
                 "torch.manual_seed(" + S + ")",
                 "model = TinyLm(vocab=32, context=24, d=32, heads=2, layers=2)",
                 "nn.init.uniform_(model.tok.weight, -math.sqrt(3), math.sqrt(3))",
                 "nn.init.uniform_(model.pos.weight, -math.sqrt(3), math.sqrt(3))",
                 "model = model.double()",
                 "held_out = make_batch(torch.Generator().manual_seed(" + std::to_string(seed + 2) + "), 64)",
                 "losses = train(model, torch.Generator().manual_seed(" + std::to_string(seed + 1) + "), steps=" + Ss +
                     ", lr=" + lr_text + ")",
                 "print(losses[0], losses[-1])  # stage 6's loss at step 1 and at step " + Ss}};

  // The model first (torch.manual_seed(seed) then the modules in order), then the data from
  // generators of their own, so that --steps changes neither the model nor the first batches.
  // Drawn in float32 as PyTorch draws it, trained in float64 (model.double() in the script): over
  // hundreds of steps training amplifies last-bit differences, and float32's differ between
  // OpenBLAS kernels, thread counts and libm variants (docs/architecture.md, trap 11) by enough
  // to change printed digits, while float64's stay far below them (core/tiny_lm.hpp).
  TorchGenerator model_gen(seed);
  TinyLm drawn = make_tiny_lm(model_gen, V, T, d, h, kLayers);
  // nn.Embedding draws with normal_, whose float32 values PyTorch computes with approximate
  // vector log/sin/cos on AVX2 CPUs and with libm elsewhere: a last-bit difference that training
  // would amplify. uniform_ is the same everywhere, so both embeddings are redrawn from it, with
  // the variance of N(0, 1): U(-sqrt(3), sqrt(3)), continuing the same generator.
  const float bound = static_cast<float>(std::sqrt(3.0));
  model_gen.uniform_(drawn.tok.data(), drawn.tok.size(), -bound, bound);  // (V, d)
  model_gen.uniform_(drawn.pos.data(), drawn.pos.size(), -bound, bound);  // (T, d)
  TinyLmT<double> model = to_double(drawn);
  TorchGenerator data_gen(seed + 1), held_gen(seed + 2);
  const InductionBatch held = make_induction_batch(held_gen, kHeldOut, kTask);  // (64, T + 1)
  const InductionBatch first = make_induction_batch(data_gen, B, kTask);  // (B, T + 1): step 1's; each step draws its own
  const Ids& held_in = held.inputs;                                       // (64, T)
  report::Labels letters;                                // the first held-out sequence, for the pictures
  for (std::size_t t = 0; t < T; ++t) letters.push_back(std::string(1, induction_letter(held_in(0, t))));
  const TinyLmForward<double> f0 = tiny_lm_forward(model, first.inputs);  // every activation of the first batch
  const TinyLmForward<double> held0 = tiny_lm_forward(model, held_in);

  LearnHeadsLesson r{opts};
  r.seed = seed;
  r.steps = steps;
  r.lr = lr;
  r.B = B;
  r.T = T;
  r.V = V;
  r.d = d;
  r.h = h;
  r.S = S;
  r.Ss = Ss;
  r.lr_text = lr_text;
  r.model = std::move(model);
  r.data_gen = data_gen;
  r.held = held;
  r.first = first;
  r.letters = letters;
  r.f0 = f0;
  r.held0 = held0;
  return r;
}

// ---- 1. the data
void stage_data(const LearnHeadsLesson& r, report::Report& out) {
  const std::size_t steps = r.steps, B = r.B, T = r.T;
  const std::string& Ss = r.Ss;
  const InductionBatch& held = r.held;
  const InductionBatch& first = r.first;
  const Ids& y0 = r.first.targets;  // (B, T)
  auto& s = out.stage("The task: finish a stretch of letters the sequence has already written",
                      "ids = torch.randint(0, 32, (N, T + 1)); L = torch.randint(6, 12, (N,))\n"
                      "ids[n, T + 1 - L:] = ids[n, T + 1 - 2L : T + 1 - L]   # the last 2L letters: a stretch, twice\n"
                      "inputs = ids[:, :T]; targets = ids[:, 1:], graded only on the second copy (else -100)");
  std::vector<std::vector<std::string>> rows;
  auto row = [&](const InductionBatch& b, std::size_t n, const std::string& name) {
    const std::size_t L = b.lens[n], start = T + 1 - 2 * L;
    rows.push_back({name, std::to_string(L), text_of(b.ids, n, 0, start) + " " + text_of(b.ids, n, start, start + L) +
                                                 " " + text_of(b.ids, n, start + L, T + 1)});
  };
  for (std::size_t n = 0; n < 3; ++n) row(first, n, "train " + std::to_string(n));
  row(held, 0, "held-out 0");
  s.table({"sequence", "L", "letters (random | stretch | stretch again)"}, rows);
  std::size_t graded = 0;
  for (std::size_t t : y0) graded += t != kIgnoreTarget;
  s.note("Each step trains on " + std::to_string(B) + " fresh sequences of " + std::to_string(T + 1) +
         " letters (" + Ss + " * " + std::to_string(B) + " = " + std::to_string(steps * B) +
         " in all; none is seen twice) and reads the first " + std::to_string(T) +
         ". Before the second copy the next letter is pure chance, so only the second copy is graded: " +
         std::to_string(graded) + " of the first batch's " + std::to_string(B * T) +
         " positions. There the next letter is always the one that followed the current letter in the first "
         "copy: find where the current letter occurred before and read what came after it. The heads are "
         "measured on " + std::to_string(kHeldOut) +
         " held-out sequences drawn from another seed; held-out 0 is the one in the pictures.");
}

// ---- 2. the model and one forward pass (the stage is kept: its note comes after training)
void stage_forward(LearnHeadsLesson& r, report::Report& out) {
  TinyLmT<double>& model = r.model;
  const InductionBatch& held = r.held;
  const report::Labels& letters = r.letters;
  const TinyLmForward<double>& f0 = r.f0;
  const TinyLmForward<double>& held0 = r.held0;
  const Ids& x0 = r.first.inputs;  // (B, T)
  report::Stage& stage2 = out.stage("The model, and one forward pass with its shapes");  // its note after training
  r.stage2 = &stage2;
  {
    auto& s = stage2;
    s.equation = ("x = tok[inputs] + pos[0..T-1]\n"
                        "per layer: x = x + out_proj(merge(softmax(causal(Q K^T) / sqrt(d_k)) V)),  Q, K, V = split(x W^T)\n"
                        "logits = x @ unembed^T");
    s.in("inputs", x0);
    std::vector<std::vector<std::string>> params;
    for (const auto& p : tiny_lm_params(model, zeros_like(model))) params.push_back({p.name, std::to_string(p.size)});
    s.table({"parameter", "numbers"}, params);
    const auto& b0 = f0.blocks[0];
    s.table({"step", "tensor", "shape"},
            {{"embed", "x = tok[inputs] + pos", shape_str(to_shape(f0.x.shape()))},
             {"project, split", "queries, keys, values", shape_str(to_shape(b0.queries.shape()))},
             {"attend", "attn_weights", shape_str(to_shape(b0.attn_weights.shape()))},
             {"attend", "context", shape_str(to_shape(b0.context.shape()))},
             {"merge, project, add", "x + out_proj(merged)", shape_str(to_shape(b0.projected.shape()))},
             {"unembed", "logits", shape_str(to_shape(f0.logits.shape()))}});
    for (std::size_t l = 0; l < kLayers; ++l) {
      s.show("attn_weights layer " + std::to_string(l + 1) + " (untrained)",
             first_sequence(held0.blocks[l].attn_weights), letters, letters)
          .attention_weights(report::Training::untrained());
      // Layer 1's picture is one more of the same (--full draws it); layer 2's shows, marked, the
      // cells its induction head will learn to read, and its head is chosen after training.
      if (l == 0) {
        s.detail();
      } else {
        s.picture_only().mark(induction_cells(held, 0), kMarkedWhat);
        r.untrained_l2 = s.items.size() - 1;
      }
      check_rows_sum_to_one(s, "attn_weights", xt::xtensor<float, 4>(xt::cast<float>(held0.blocks[l].attn_weights)));
    }
  }
}

// ---- 3. the loss
void stage_loss(LearnHeadsLesson& r, report::Report& out) {
  r.loss0 = tiny_lm_loss(r.f0, r.first.targets);
  const std::size_t steps = r.steps, V = r.V;
  const double lr = r.lr;
  const TinyLmForward<double>& f0 = r.f0;
  const double loss0 = r.loss0;
  const Ids& y0 = r.first.targets;  // (B, T)
  auto& s = out.stage("The loss: mean cross-entropy over the graded positions",
                      "loss = F.cross_entropy(logits.view(-1, V), targets.view(-1), ignore_index=-100)\n"
                      "      = mean over graded (b, t) of  logsumexp(logits[b, t]) - logits[b, t, target]");
  s.in("logits", f0.logits).in("targets", y0);
  xt::xtensor<double, 1> loss_vec = xt::empty<double>({std::size_t{1}});  // (1,)
  loss_vec(0) = loss0;
  s.show("loss", loss_vec);
  check_finite_loss(loss0, 1, steps, lr);
  s.note("Guessing uniformly among " + std::to_string(V) + " letters costs log " + std::to_string(V) + " = " +
         f4(std::log(static_cast<double>(V))) + " per position; the untrained model's loss on the first batch is " +
         f4(loss0) + ".");
}

// ---- 4. one backward pass (the check moves the parameters along the gradient and back)
void stage_backward(LearnHeadsLesson& r, report::Report& out) {
  r.g0 = tiny_lm_backward(r.model, r.f0, r.first.targets);  // a gradient per parameter, its shape
  TinyLmT<double>& model = r.model;
  const TinyLmForward<double>& f0 = r.f0;
  const TinyLmGrads<double>& g0 = r.g0;
  const Ids& x0 = r.first.inputs;  // (B, T)
  const Ids& y0 = r.first.targets;  // (B, T)
  auto& s = out.stage("One backward pass: a gradient for every parameter",
                      "d logits = (softmax(logits) - onehot(targets)) / graded, 0 on ungraded rows\n"
                      "then each forward step in reverse: unembed, out_proj, merge, attention, split, W_query/W_key/W_value,\n"
                      "the residual (gradients add), the embeddings (scatter-add into the rows used)");
  s.in("logits", f0.logits);
  std::vector<std::vector<std::string>> rows;
  std::vector<ParamT<double>> ps = tiny_lm_params(model, g0.params);
  double total_sq = 0;
  for (const auto& p : ps) {
    const double n = norm(p.grad, p.size);
    total_sq += n * n;
    rows.push_back({p.name, std::to_string(p.size), report::scientific(n, 2)});
  }
  s.table({"gradient of", "numbers", "norm"}, rows);
  // The loss along the gradient's own direction changes at the rate |g|, if g is the gradient.
  const double gnorm = std::sqrt(total_sq), step = 1e-4;
  std::vector<std::vector<double>> start;
  for (const auto& p : ps) start.emplace_back(p.value, p.value + p.size);
  auto loss_at = [&](double t) {
    for (std::size_t k = 0; k < ps.size(); ++k)
      for (std::size_t i = 0; i < ps[k].size; ++i)
        ps[k].value[i] = start[k][i] + t * ps[k].grad[i] / gnorm;
    return tiny_lm_loss(tiny_lm_forward(model, x0), y0);
  };
  const double rate = (loss_at(step) - loss_at(-step)) / (2 * step);
  loss_at(0.0);  // the parameters back as they were
  for (std::size_t k = 0; k < ps.size(); ++k) std::copy(start[k].begin(), start[k].end(), ps[k].value);
  // In float64 the quotient is good to about h^2 |third derivative| / |g| + 1e-16 L / h, far below 1e-4.
  s.check("the loss rises at rate |g| along the gradient (central difference, step 1e-4): the backward pass is "
          "the loss's derivative",
          "|rate / |g| - 1|", std::fabs(rate / gnorm - 1.0), Relation::AtMost, 1e-4);
  s.note("|g| = " + report::scientific(gnorm, 3) + "; the float32 difference quotient gives " +
         report::scientific(rate, 3) + ". Every gradient is written out by hand, not taken from an autograd library, and tested "
         "against finite differences in double and against PyTorch's autograd (docs/architecture.md says where).");
}

// ---- 5. one update
void stage_update(LearnHeadsLesson& r, report::Report& out) {
  AdamSettings settings;
  settings.lr = r.lr;
  r.adam = AdamT<double>(settings);
  r.bias_before = r.model.blocks[1].out_proj.bias;  // (d,)
  r.adam.step(tiny_lm_params(r.model, r.g0.params));
  const double lr = r.lr;
  const std::string& lr_text = r.lr_text;
  const TinyLmT<double>& model = r.model;
  const double loss0 = r.loss0;
  const xt::xtensor<double, 1>& bias_before = r.bias_before;
  const Ids& x0 = r.first.inputs;  // (B, T)
  const Ids& y0 = r.first.targets;  // (B, T)
  auto& s = out.stage("The update: one Adam step",
                      "m = 0.9 m + 0.1 g;  v = 0.999 v + 0.001 g^2                (both start at 0)\n"
                      "p = p - lr * (m / (1 - 0.9^t)) / (sqrt(v / (1 - 0.999^t)) + 1e-8)");
  s.in("out_proj.bias (layer 2)", bias_before);
  const xt::xtensor<double, 1> after = model.blocks[1].out_proj.bias;  // (d,)
  s.show("out_proj.bias (layer 2) before", bias_before).show("out_proj.bias (layer 2) after", after);
  double largest = 0;
  std::size_t full = 0;  // values that moved by (almost exactly) lr
  for (std::size_t i = 0; i < after.size(); ++i) {
    const double change = std::fabs(after(i) - bias_before(i));
    largest = std::max(largest, change);
    full += change >= 0.99 * lr;
  }
  s.check("after one step no value moved by more than lr (Adam's first step is lr * g / (|g| + eps))",
          "max |change| / lr", largest / lr, Relation::AtMost, 1.0 + 1e-5);
  const double loss1 = tiny_lm_loss(tiny_lm_forward(model, x0), y0);
  s.question("does this one step lower the loss on the same batch?", "loss after - loss before",
             loss1 - loss0, Relation::AtMost, 0.0,
             "one step of size lr = " + lr_text + " overshot here: the loss went from " + f4(loss0) + " to " +
                 f4(loss1));
  s.note("Adam divides each gradient by its own running size, so on the first step a number moves by almost "
         "exactly lr = " + lr_text + " unless its gradient is tiny next to eps, however large or small the "
         "gradient: here " + std::to_string(full) + " of the " + std::to_string(after.size()) +
         " values of this bias moved by at least 0.99 lr, the largest by " + f4(largest) +
         ". The loss on the same batch goes from " + f4(loss0) + " to " + f4(loss1) + ".");
}

// ---- 6. the training run: steps 2..steps, each forward, loss, backward, update, on fresh sequences;
// the heads scored on the held-out sequences as it goes.
void train(LearnHeadsLesson& r) {
  const LessonOptions& opts = r.opts;
  const std::size_t steps = r.steps, B = r.B;
  const double lr = r.lr;
  TinyLmT<double>& model = r.model;
  TorchGenerator& data_gen = r.data_gen;
  AdamT<double>& adam = r.adam;
  const InductionBatch& held = r.held;
  const Ids& held_in = r.held.inputs;  // (64, T)
  r.losses = xt::empty<double>({steps});  // (steps,)
  r.losses(0) = r.loss0;
  std::vector<std::size_t>& snap_steps = r.snap_steps;  // two moments on the way, for --dump
  for (std::size_t k : {steps / 3, 2 * steps / 3})
    if (k >= 2 && (snap_steps.empty() || snap_steps.back() != k)) snap_steps.push_back(k);
  std::vector<xt::xtensor<double, 4>>& snapshots = r.snapshots;  // held-out 0, layer 2, at those steps
  // The heads' scores on the held-out sequences as training goes: untrained, then every
  // score_interval steps and at the end (the phase change, stage 6).
  const std::size_t every = r.every = score_interval(steps);
  std::vector<std::size_t>& scored_at = r.scored_at = {0};
  std::vector<std::vector<HeadScores>>& scored = r.scored = {all_head_scores(r.held0, held)};
  report_progress(opts, 1, steps);
  TinyLmForward<double> f;  // every step's activations and gradients, in the same memory each step
  TinyLmGrads<double> g;
  for (std::size_t step = 2; step <= steps; ++step) {
    const InductionBatch batch = make_induction_batch(data_gen, B, kTask);  // this step's fresh sequences
    const Ids &x = batch.inputs, &y = batch.targets;                       // (B, T) each
    tiny_lm_forward(model, x, f);                 // forward
    const double loss = tiny_lm_loss(f, y);       // loss
    check_finite_loss(loss, step, steps, lr);
    tiny_lm_backward(model, f, y, g);             // backward
    adam.step(tiny_lm_params(model, g.params));   // update
    r.losses(step - 1) = loss;
    report_progress(opts, step, steps);
    for (std::size_t k = 0; k < snap_steps.size(); ++k)
      if (step == snap_steps[k])
        snapshots.push_back(first_sequence(tiny_lm_forward(model, held_in).blocks[1].attn_weights));
    if (step % every == 0 || step == steps) {
      scored_at.push_back(step);
      scored.push_back(all_head_scores(tiny_lm_forward(model, held_in), held));
    }
  }
  r.held1 = tiny_lm_forward(model, held_in);  // every activation of the held-out sequences, trained
}

// ---- 6. the training run, as it went
void stage_training(LearnHeadsLesson& r, report::Report& out) {
  const std::size_t steps = r.steps, V = r.V, every = r.every;
  const std::string& Ss = r.Ss;
  TinyLmT<double>& model = r.model;
  const xt::xtensor<double, 1>& losses = r.losses;
  const std::vector<std::size_t>& snap_steps = r.snap_steps;
  const std::vector<xt::xtensor<double, 4>>& snapshots = r.snapshots;
  const std::vector<std::size_t>& scored_at = r.scored_at;
  const std::vector<std::vector<HeadScores>>& scored = r.scored;
  auto& s = out.stage("Training: " + Ss + " steps of forward, loss, backward, update",
                      "for step in 1.." + Ss + ": loss = F.cross_entropy(model(x), y, ignore_index=-100); "
                      "loss.backward(); opt.step()");
  s.curve("loss", losses, "step");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t k : {std::size_t{1}, steps / 10, steps / 4, steps / 2, 3 * steps / 4, steps})
    if (k >= 1 && (rows.empty() || rows.back()[0] != std::to_string(k)))
      rows.push_back({std::to_string(k), f4(losses(k - 1))});
  s.table({"step", "loss"}, rows);
  const std::size_t tail = std::min<std::size_t>(20, steps);
  double end_loss = 0;
  for (std::size_t k = steps - tail; k < steps; ++k) end_loss += losses(k);
  end_loss /= static_cast<double>(tail);
  const double guess = std::log(static_cast<double>(V));
  s.check("the loss of the last " + std::to_string(tail) + " steps is at most half that of guessing (log " +
              std::to_string(V) + " / 2)",
          "mean loss", end_loss, Relation::AtMost, kLossFraction * guess);
  s.note("Each step draws a new batch, so the curve is noisy; the last " + std::to_string(tail) +
         " steps average " + f4(end_loss) + " against " + f4(guess) + " for guessing.");
  // The phase change: each head's two scores on the held-out sequences as training goes.
  std::vector<std::string> header{"step"};
  for (std::size_t l = 0; l < kLayers; ++l)
    for (std::size_t i = 0; i < kHeadsPerLayer; ++i) {
      const std::string head = std::to_string(l + 1) + "." + std::to_string(i);
      header.push_back(head + " prev");
      header.push_back(head + " ind");
    }
  std::vector<std::vector<std::string>> phase;
  // The intervals in which layer 2's best induction score and layer 1's best previous-token
  // score rose most.
  std::size_t rise_at = 1, prev_rise_at = 1;
  double rise = -1, prev_rise = -1;
  auto best_l2_ind = [](const std::vector<HeadScores>& sc) {
    double best = 0;
    for (std::size_t i = 0; i < kHeadsPerLayer; ++i) best = std::max(best, sc[kHeadsPerLayer + i].induction);
    return best;
  };
  auto best_l1_prev = [](const std::vector<HeadScores>& sc) {
    double best = 0;
    for (std::size_t i = 0; i < kHeadsPerLayer; ++i) best = std::max(best, sc[i].previous);
    return best;
  };
  for (std::size_t r = 0; r < scored.size(); ++r) {
    std::vector<std::string> row{std::to_string(scored_at[r])};
    for (const HeadScores& sc : scored[r]) {
      row.push_back(f2(sc.previous));
      row.push_back(f2(sc.induction));
    }
    phase.push_back(row);
    if (r > 0 && best_l2_ind(scored[r]) - best_l2_ind(scored[r - 1]) > rise)
      rise = best_l2_ind(scored[r]) - best_l2_ind(scored[r - 1]), rise_at = r;
    if (r > 0 && best_l1_prev(scored[r]) - best_l1_prev(scored[r - 1]) > prev_rise)
      prev_rise = best_l1_prev(scored[r]) - best_l1_prev(scored[r - 1]), prev_rise_at = r;
  }
  s.table(header, phase);
  s.note("Every " + std::to_string(every) + " steps, each head's scores on the " + std::to_string(kHeldOut) +
         " held-out sequences (\"1.0\" is layer 1 head 0; prev: weight on the previous letter, ind: on the "
         "letter after the earlier occurrence; stage 7 defines both). The best layer-2 induction score rose most "
         "between steps " + std::to_string(scored_at[rise_at - 1]) + " and " + std::to_string(scored_at[rise_at]) +
         ", from " + f2(best_l2_ind(scored[rise_at - 1])) + " to " + f2(best_l2_ind(scored[rise_at])) +
         "; layer 1's best previous-token score, which the induction head reads, rose most between steps " +
         std::to_string(scored_at[prev_rise_at - 1]) + " and " + std::to_string(scored_at[prev_rise_at]) + " (" +
         f2(best_l1_prev(scored[prev_rise_at - 1])) + " to " + f2(best_l1_prev(scored[prev_rise_at])) +
         "). Induction heads tend to form in a short stretch of training like this, a phase change rather than "
         "a slow drift.");
  for (std::size_t k = 0; k < snapshots.size(); ++k)
    s.keep("attn_weights layer 2 at step " + std::to_string(snap_steps[k]), snapshots[k]);
  for (const auto& p : tiny_lm_params(model, zeros_like(model))) {
    xt::xtensor<double, 1> flat = xt::empty<double>({p.size});  // the trained values, flattened for --dump
    std::copy(p.value, p.value + p.size, flat.begin());
    s.keep(p.name, flat);
  }
}

// ---- 7. what each head learned (and stage 2's note, now that it is known)
void stage_heads(LearnHeadsLesson& r, report::Report& out) {
  const std::size_t steps = r.steps, T = r.T, V = r.V, h = r.h, untrained_l2 = r.untrained_l2;
  TinyLmT<double>& model = r.model;
  const InductionBatch& held = r.held;
  const report::Labels& letters = r.letters;
  const TinyLmForward<double>& held0 = r.held0;
  report::Stage& stage2 = *r.stage2;
  const TinyLmForward<double>& held1 = r.held1;
  auto& s = out.stage("After training: which head learned which job",
                      "previous-token score = mean attn_weights[t, t-1];  induction score = mean attn_weights[t, j+1]\n"
                      "where j < t is the one earlier position holding the same letter as t (held-out second copies)");
  std::vector<std::vector<std::string>> rows;
  double best_ind = 0, best_prev = 0, untrained_ind = 0;
  std::string ind_heads, prev_heads;
  std::size_t best_ind_head = 0, best_prev_head = 0;
  for (std::size_t l = 0; l < kLayers; ++l)
    for (std::size_t i = 0; i < h; ++i) {
      const HeadScores before = head_scores(held0.blocks[l].attn_weights, i, held);
      const HeadScores sc = head_scores(held1.blocks[l].attn_weights, i, held);
      const std::string job = job_of(sc);
      const std::string name = "layer " + std::to_string(l + 1) + " head " + std::to_string(i);
      rows.push_back({name, f2(sc.previous), f2(sc.induction), f2(sc.self), f2(before.induction), job});
      if (job == "induction") ind_heads += (ind_heads.empty() ? "" : ", ") + name;
      if (job == "previous token") prev_heads += (prev_heads.empty() ? "" : ", ") + name;
      if (l == 1 && sc.induction >= best_ind) best_ind = sc.induction, best_ind_head = i;
      if (l == 1) untrained_ind = std::max(untrained_ind, before.induction);
      if (l == 0 && sc.previous >= best_prev) best_prev = sc.previous, best_prev_head = i;
    }
  // The trained pictures: of each layer the head with its job's best score (--full draws both),
  // the induction cells marked in layer 2's.
  for (std::size_t l = 0; l < kLayers; ++l) {
    s.show("attn_weights layer " + std::to_string(l + 1) + " (trained)",
           first_sequence(held1.blocks[l].attn_weights), letters, letters)
        .attention_weights(report::Training::trained(steps))
        .picture_only()
        .draw_head(l == 0 ? best_prev_head : best_ind_head);
    if (l == 1) s.mark(induction_cells(held, 0), kMarkedWhat);
  }
  std::get<report::TensorItem>(stage2.items[untrained_l2]).text_head = best_ind_head;
  stage2.note("Two layers of " + std::to_string(h) + " heads, " + std::to_string(model.parameters()) +
              " numbers, no MLP and no layer norm: attention is the only thing that moves information between "
              "positions. Untrained, layer 2 head " + std::to_string(best_ind_head) +
              " above (held-out 0) spreads its weight with no plan; the marked cells are where it will look once "
              "trained (stage 7).");
  s.table({"head", "previous", "induction", "self", "induction untrained", "job"}, rows);
  // The same scores as layer x head maps, named as attn model names a checkpoint's head roles.
  Mat prev_map = xt::empty<float>({kLayers, h}), ind_map = xt::empty<float>({kLayers, h});  // (layers, h)
  for (std::size_t l = 0; l < kLayers; ++l)
    for (std::size_t i = 0; i < h; ++i) {
      const HeadScores sc = head_scores(held1.blocks[l].attn_weights, i, held);
      prev_map(l, i) = static_cast<float>(sc.previous);
      ind_map(l, i) = static_cast<float>(sc.induction);
    }
  s.layer_head_map("roles.previous_token", prev_map, {"layer 1", "layer 2"}, "previous-token score",
                   report::Training::trained(steps));
  s.layer_head_map("roles.induction", ind_map, {"layer 1", "layer 2"}, "induction score", report::Training::trained(steps));
  const HeadScores chance = uniform_head_scores(held);
  const double chance_ind = chance.induction, chance_prev = chance.previous;
  s.check("a layer-2 head is an induction head: it puts at least half its weight on the letter after the earlier "
          "occurrence",
          "best layer-2 induction score", best_ind, Relation::AtLeast, kInductionBound);
  s.check("a layer-1 head looks at the previous letter", "best layer-1 previous-token score", best_prev,
          Relation::AtLeast, kPreviousBound);
  const double acc = next_letter_accuracy(held1.logits, held.targets);
  const double acc0 = next_letter_accuracy(held0.logits, held.targets);
  s.check("the held-out second copies are predicted at least half right", "accuracy", acc, Relation::AtLeast,
          kAccuracyBound);
  s.note("Spreading its weight evenly over the keys it may see, a head would score " + f2(chance_prev) +
         " as a previous-token head and " + f2(chance_ind) + " as an induction head; untrained, the best "
         "layer-2 head scored " + f2(untrained_ind) + ". Trained: " +
         (prev_heads.empty() ? std::string("no head clears ") + f2(kPreviousBound) + " as a previous-token head"
                             : prev_heads + (prev_heads.find(',') != std::string::npos ? " look" : " looks") +
                                   " at the previous letter") +
         "; " +
         (ind_heads.empty() ? std::string("no head clears ") + f2(kInductionBound) + " as an induction head"
                            : ind_heads + (ind_heads.find(',') != std::string::npos ? " look" : " looks") +
                                  " at the letter after the earlier occurrence (layer 2 head " +
                                  std::to_string(best_ind_head) + ": " + f2(best_ind) + ")") +
         ". Held-out accuracy on the second copies: " + f2(acc) + " (untrained " + f2(acc0) + ", guessing " +
         f2(1.0 / static_cast<double>(V)) + ").");
  if (!prev_heads.empty() && !ind_heads.empty()) {
    // Held-out 0 in the picture: the best induction head's weight on the stripe its job names.
    const std::size_t L = held.lens[0], copy = T + 1 - L;
    double stripe = 0;
    for (std::size_t t = copy; t < T; ++t)
      stripe += held1.blocks[1].attn_weights(0, best_ind_head, t, t - L + 1);
    stripe /= static_cast<double>(T - copy);
    double below = 0;  // the best previous-token head's weight just below the diagonal, rows 1..T-1
    for (std::size_t t = 1; t < T; ++t) below += held1.blocks[0].attn_weights(0, best_prev_head, t, t - 1);
    below /= static_cast<double>(T - 1);
    s.note("Together they are the induction circuit: a layer-1 head writes the previous letter into each "
           "position, so a layer-2 query for the current letter can match the key of the position that came "
           "right after it earlier, and copy that position's letter out. In the pictures of held-out 0 (L = " +
           std::to_string(L) + "), the rows of the second copy in layer 2 head " + std::to_string(best_ind_head) +
           " put " + f2(stripe) + " of their weight on average on a diagonal stripe " + std::to_string(L - 1) +
           " columns to the left of the diagonal; layer 1 head " + std::to_string(best_prev_head) + " puts " +
           f2(below) + " of each row's weight on average on the stripe just below the diagonal. In the terminal "
           "a cell is one character of 9 shades; `--svg DIR` draws each weight as a square with its value, "
           "where the stripes are easiest to see.");
  }
}

}  // namespace

// The lesson as its table of contents: one step of training taken apart, then the whole run.
void lesson_learn_heads(const LessonOptions& opts, report::Report& out) {
  LearnHeadsLesson r = setup(opts, out);
  stage_data(r, out);
  stage_forward(r, out);
  stage_loss(r, out);
  stage_backward(r, out);
  stage_update(r, out);
  train(r);
  stage_training(r, out);
  stage_heads(r, out);
}

// Teaching order 780: after heads (600) and scaling (700), whose pieces it trains; docs/learn-heads.md.
ATTN_REGISTER_LESSON({780, "learn-heads", "Attention that learns: induction heads",
                      "a two-layer causal transformer trained with Adam; a previous-token head and an induction head appear, "
                      "measured on held-out sequences",
                      "Olsson et al. 2022, In-context learning and induction heads; Elhage et al. 2021",
                      kSeed, lesson_learn_heads,
                      {steps_option(kDefaultSteps, 5000), lr_option(kDefaultLr, 1)}});

}  // namespace attn
