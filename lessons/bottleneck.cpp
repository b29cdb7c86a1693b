// Lesson: the encoder-decoder bottleneck (the RNN translation models attention was invented for).
//
// A tanh RNN reads the source sentence one word at a time and keeps only its last state,
// c = h_S, as the summary of the whole sentence. The decoder receives that same c at every
// step. The lesson runs the encoder step by step, then measures what the squeeze costs: how
// strongly c still depends on each source position, for sentences of 4 to 64 words.
//
// Legend: S source words, T_tgt target words, d_in embedding width, d_h hidden width.
#include <algorithm>
#include <cmath>

#include <xtensor/xview.hpp>

#include "core/embedding.hpp"
#include "core/rnn.hpp"
#include "lesson_kit/recipe.hpp"
#include "lesson_kit/checks.hpp"
#include "lesson_kit/registry.hpp"
#include "lesson_kit/rnn_external.hpp"
#include "lesson_kit/seq2seq.hpp"

namespace attn {
namespace {

constexpr std::size_t kLengths[] = {4, 8, 16, 32, 64};

// b_h of the papers: PyTorch keeps the bias as bias_ih + bias_hh.
Vec combined_bias(const RnnCell& cell) { return cell.bias_ih + cell.bias_hh; }  // (d_h,)

// "w1 w2 ... wS": a sentence of S distinct made-up words for the length sweep.
TokenInput numbered_sentence(std::size_t S, std::size_t d_in) {
  std::vector<std::string> words;
  for (std::size_t j = 1; j <= S; ++j) words.push_back("w" + std::to_string(j));
  return embed_tokens(std::move(words), d_in, false);
}

// One character per position on a log scale, one step of the ramp per power of ten:
// '@' is within a factor sqrt(10) of the row's largest value, '%' about 10x less, and so on;
// ' ' is about 1e-9 of it or less.
std::string log_ramp(const Vec& v) {
  static const std::string ramp = " .:-=+*#%@";
  const float top = xt::amax(v)();
  std::string out;
  for (float x : v) {
    const double decades = (x > 0.0f && top > 0.0f) ? std::log10(static_cast<double>(x) / top) : -99.0;
    const double level = std::clamp(9.0 + decades, 0.0, 9.0);  // 0 .. -9 decades -> 9 .. 0
    out += ramp[static_cast<std::size_t>(std::lround(level))];
  }
  return out;
}

// A linear bar of up to `width` '#', scaled to the row's maximum.
std::string bar(float x, float top, std::size_t width) {
  const std::size_t n = top > 0.0f ? static_cast<std::size_t>(std::lround(width * x / top)) : 0;
  return std::string(n, '#');
}

std::string sci(double v) { return report::scientific(v, 2); }

// What the numbers of one sensitivity row do, read off them: "The gradient falls steadily from
// the last word to the first." or where it does not.
std::string trend(const std::string& what, const Vec& v, const std::vector<std::string>& words) {
  const std::size_t S = v.size();
  if (S == 1) return what + " has one word to measure.";
  for (std::size_t j = 0; j + 1 < S; ++j)
    if (!(v(j) < v(j + 1)))
      return what + " does not fall steadily towards the first word: " + words[j] + " (" + std::to_string(j + 1) +
             ") " + sci(v(j)) + " >= " + words[j + 1] + " (" + std::to_string(j + 2) + ") " + sci(v(j + 1)) + ".";
  return what + " falls steadily from the last word to the first.";
}

// What the stages share: the sentences, both cells, and the encoder's states.
struct BottleneckLesson {
  Seq2SeqSetup set;
  std::size_t S, T_tgt, d_in, d_h;
  RnnCell encoder;  // weight_ih (d_h, d_in)
  RnnCell decoder;  // weight_ih (d_h, d_in + d_h)
  Mat H;            // (S, d_h): every encoder state
  Vec c;            // (d_h,): h_S, all the decoder gets
};

// The sentences, the header, both cells drawn after the seed, and the encoder run once.
BottleneckLesson setup(const LessonOptions& opts, report::Report& out) {
  BottleneckLesson r{seq2seq_setup(opts, 1), 0, 0, 0, 0, {}, {}, {}, {}};
  const Seq2SeqSetup& set = r.set;
  r.S = set.src.tokens.size();
  r.T_tgt = set.tgt.tokens.size();
  r.d_in = set.d_in;
  r.d_h = set.d_h;
  const std::string din = std::to_string(r.d_in), dh = std::to_string(r.d_h);
  out.header = {"bottleneck", "The encoder-decoder bottleneck",
                "Evolution of Attention Mechanism (the RNN encoder-decoder); Rakesh, Transformer "
                "Block - Multihead Attention (the drawbacks of the bottleneck)",
                set.setting(),
                recipe::with_imports({"torch.manual_seed(" + std::to_string(set.seed) + ")",
                 "encoder = nn.RNNCell(" + din + ", " + dh + ")",
                 "decoder = nn.RNNCell(" + din + " + " + dh + ", " + dh + ")",
                 opts.input ? py_input_line(*opts.input)
                            : "# x: each word's torch.manual_seed(fnv1a32(w.lower())); torch.rand(" + din + ")"})};
  TorchGenerator gen(set.seed);
  r.encoder = make_rnn_cell(gen, r.d_in, r.d_h);         // weight_ih (d_h, d_in)
  r.decoder = make_rnn_cell(gen, r.d_in + r.d_h, r.d_h);  // weight_ih (d_h, d_in + d_h)
  r.H = rnn_forward(r.encoder, set.src.x);              // (S, d_in) -> (S, d_h)
  r.c = xt::view(r.H, r.S - 1, xt::all());              // (d_h,)
  return r;
}

void stage_inputs(const BottleneckLesson& r, report::Report& out) {
  auto& s = out.stage("A sentence and its translation, as vectors", "x_j = embed(source word j);  y_i = embed(target word i)");
  s.show("x", r.set.src.x, r.set.src.tokens).show("y", r.set.tgt.x, r.set.tgt.tokens);
  s.note(r.set.src.origin);
  s.note("Target words: " + r.set.tgt.origin);
  s.note(kUntrainedNote);
}

void stage_encoder_cell(const BottleneckLesson& r, report::Report& out) {
  auto& s = out.stage("The encoder cell", "h_t = tanh(W_xh x_t + W_hh h_{t-1} + b_h)");
  s.show("W_xh", r.encoder.weight_ih).show("W_hh", r.encoder.weight_hh).show("b_h", combined_bias(r.encoder));
  s.note("nn.RNNCell stores W_xh as weight_ih and W_hh as weight_hh, and keeps the bias as two "
         "vectors: b_h = bias_ih + bias_hh. The same three tensors are used at every step, "
         "whatever the sentence's length.");
}

// The encoder, one stage per word: each state can only be a function of the words read so far.
void stage_encoder_step(const BottleneckLesson& r, std::size_t t, report::Report& out) {
  const auto& src = r.set.src.tokens;
  auto& s = out.stage("Encoder step " + std::to_string(t + 1) + ": reads \"" + src[t] + "\"",
                      "h_" + std::to_string(t + 1) + " = tanh(W_xh x_" + std::to_string(t + 1) + " + W_hh h_" +
                          std::to_string(t) + " + b_h)");
  const Vec x_t = xt::view(r.set.src.x, t, xt::all());                                          // (d_in,)
  const Vec h_prev = t ? Vec(xt::view(r.H, t - 1, xt::all())) : Vec(xt::zeros<float>({r.d_h}));  // (d_h,)
  s.in("x_" + std::to_string(t + 1), x_t).in("h_" + std::to_string(t), h_prev);
  s.show("h_" + std::to_string(t + 1), Vec(xt::view(r.H, t, xt::all())));  // (d_h,)
  if (t == 0) s.note("h_0 is all zeros: before the first word there is nothing to remember.");
}

void stage_summary(const BottleneckLesson& r, report::Report& out) {
  const std::string din = std::to_string(r.d_in), dh = std::to_string(r.d_h);
  auto& s = out.stage("All the encoder states, and the one the decoder gets", "H = [h_1; ...; h_S];  c = h_S");
  s.show("H", r.H, r.set.src.tokens).show("c", r.c);
  s.table({"what", "numbers"},
          {{"in: S x d_in = " + std::to_string(r.S) + " x " + din, std::to_string(r.S * r.d_in)},
           {"out: c, d_h", dh}});
  s.note("The decoder sees c and nothing else of the source: " + std::to_string(r.S * r.d_in) +
         " numbers squeezed into " + dh + ". A longer sentence brings more numbers in, but c "
         "stays " + dh + " wide: that fixed width is the bottleneck.");
}

// The decoder: input [y_{i-1} ; c] at every step, starting from s_0 = c and y_0 = <s>.
void stage_decoder(const BottleneckLesson& r, report::Report& out) {
  const std::size_t T_tgt = r.T_tgt, d_in = r.d_in, d_h = r.d_h;
  const Vec& c = r.c;  // (d_h,)
  Mat dec_in = xt::zeros<float>({T_tgt, d_in + d_h});  // (T_tgt, d_in + d_h)
  Mat states = xt::zeros<float>({T_tgt, d_h});         // (T_tgt, d_h)
  Vec s_prev = c;                                       // (d_h,)
  for (std::size_t i = 0; i < T_tgt; ++i) {
    const Vec y_prev = i ? Vec(xt::view(r.set.tgt.x, i - 1, xt::all())) : Vec(xt::view(r.set.start.x, 0, xt::all()));  // (d_in,)
    xt::view(dec_in, i, xt::range(0, d_in)) = y_prev;
    xt::view(dec_in, i, xt::range(d_in, d_in + d_h)) = c;
    s_prev = rnn_step(r.decoder, Vec(xt::view(dec_in, i, xt::all())), s_prev);  // (d_h,)
    xt::view(states, i, xt::all()) = s_prev;
  }
  const std::string dh = std::to_string(d_h);
  auto& s = out.stage("The decoder gets the same c at every step",
                      "s_i = tanh(W_xh' [y_{i-1} ; c] + W_hh' s_{i-1} + b_h'),  s_0 = c,  y_0 = <s>");
  std::vector<std::string> fed = {"<s>"};
  for (std::size_t i = 0; i + 1 < T_tgt; ++i) fed.push_back(r.set.tgt.tokens[i]);
  s.in("c", c);
  s.show("[y_{i-1} ; c]", dec_in, fed).show("s", states, r.set.tgt.tokens);
  const Mat c_parts = xt::view(dec_in, xt::all(), xt::range(d_in, d_in + d_h));  // (T_tgt, d_h)
  Mat c_rows = xt::zeros<float>({T_tgt, d_h});                                   // (T_tgt, d_h)
  for (std::size_t i = 0; i < T_tgt; ++i) xt::view(c_rows, i, xt::all()) = c;
  check_identical(s, "the last " + dh + " columns of every decoder input are c", c_parts, c_rows);
  s.note("Each row of the input is one step: the previous target word, then c, unchanged. "
         "Whether the decoder is writing its first word or its last, it looks at the same " +
         dh + " numbers.");
}

// The measurement: how much c depends on each source word.
void stage_dependence(const BottleneckLesson& r, report::Report& out) {
  const std::size_t S = r.S, d_h = r.d_h;
  const auto& src = r.set.src.tokens;
  const Vec grad = final_state_sensitivity(r.encoder, r.H);  // (S,)
  Vec replaced = xt::zeros<float>({S});                      // (S,)
  const Vec unk = word_embedding("<unk>", r.d_in);            // (d_in,)
  for (std::size_t j = 0; j < S; ++j) {
    Mat x2 = r.set.src.x;  // (S, d_in)
    xt::view(x2, j, xt::all()) = unk;
    const Vec c2 = xt::view(rnn_forward(r.encoder, x2), S - 1, xt::all());  // (d_h,)
    double sq = 0.0;
    for (std::size_t k = 0; k < d_h; ++k) sq += (c2(k) - r.c(k)) * (c2(k) - r.c(k));
    replaced(j) = static_cast<float>(std::sqrt(sq));
  }
  auto& s = out.stage("How much c depends on each source word",
                      "||d c / d x_j||  and  ||c(x with word j replaced by <unk>) - c||");
  s.in("H", r.H);
  s.show("||d c / d x_j||", grad, {}, src).show("||c' - c||", replaced, {}, src);
  std::vector<std::vector<std::string>> rows;
  const float g_top = xt::amax(grad)(), r_top = xt::amax(replaced)();
  for (std::size_t j = 0; j < S; ++j)
    rows.push_back({std::to_string(j + 1), src[j], sci(grad(j)), bar(grad(j), g_top, 20), sci(replaced(j)),
                    bar(replaced(j), r_top, 20)});
  s.table({"j", "word", "gradient", "", "replaced", ""}, rows);
  s.note("Two measurements of the same question. The gradient is the exact sensitivity of c to a "
         "small change in x_j, back-propagated through every later step (each step multiplies by "
         "W_hh and by tanh' <= 1). The replacement swaps word j for the vector of \"<unk>\" and "
         "re-runs the encoder. " + trend("The gradient", grad, src) + " " + trend("The replacement", replaced, src));
}

// The same measurement for longer and longer sentences.
void stage_length_sweep(const BottleneckLesson& r, report::Report& out) {
  const std::size_t d_in = r.d_in;
  const std::string dh = std::to_string(r.d_h);
  std::vector<std::vector<std::string>> sweep;
  std::vector<std::vector<std::string>> ramps;
  std::vector<double> ratios;  // first / last for each length
  for (std::size_t len : kLengths) {
    const TokenInput sentence = numbered_sentence(len, d_in);                              // (len, d_in)
    const Vec g = final_state_sensitivity(r.encoder, rnn_forward(r.encoder, sentence.x));  // (len,)
    sweep.push_back({std::to_string(len), std::to_string(len * d_in), dh, sci(g(0)), sci(g(len / 2)),
                     sci(g(len - 1)), sci(g(0) / g(len - 1))});
    ramps.push_back({std::to_string(len), "|" + log_ramp(g) + "|"});
    ratios.push_back(static_cast<double>(g(0)) / g(len - 1));
  }
  auto& s = out.stage("Longer sentences, same c", "||d c / d x_j|| for S = 4, 8, 16, 32, 64");
  s.table({"S", "numbers in", "numbers out", "first word", "middle word", "last word", "first / last"}, sweep);
  s.table({"S", "||d c / d x_j||, one character per position j = 1..S"}, ramps);
  s.note("Scale: one character per power of ten. @ marks the largest value of the row, % about "
         "10x less, # 100x less, then * + = - : . and a blank for 1e-9 of the largest or less.");
  const double first_short = ratios.front(), first_long = ratios.back();  // first / last at S = 4 and 64
  const double decades = std::log10(first_short / first_long);
  std::string fading = "first / last goes from " + sci(first_short) + " at S = " + std::to_string(kLengths[0]) +
                       " to " + sci(first_long) + " at S = " + std::to_string(kLengths[4]);
  if (first_long == 0.0)
    fading += ": as the sentence grows, the first word's influence on c shrinks until it underflows "
              "float32 to exactly 0, and by the time the decoder starts, this untrained RNN has lost the "
              "beginning of a long sentence.";
  else if (decades >= 2.0)
    fading += ": the first word's influence on c shrinks by " + std::to_string(static_cast<int>(decades)) +
              " orders of magnitude as the sentence grows, and by the time the decoder starts, this "
              "untrained RNN has nearly lost the beginning of a long sentence.";
  else if (decades > 0.0)
    fading += ": the first word's influence on c shrinks as the sentence grows, by less than two orders "
              "of magnitude with this encoder.";
  else
    fading += ": with this encoder the first word's influence on c does not shrink as the sentence grows.";
  s.note("The sentences are made-up words w1 .. wS with their own seeded vectors, read by the same "
         "encoder. The numbers going in grow with S; the numbers coming out stay " + dh + ". And " +
         fading);
  s.note("The encoder here is untrained, with small random weights. A trained LSTM or GRU fades far more "
         "slowly, because its gates learn to carry a value across many steps unchanged (which is why "
         "2014's encoder-decoders used them); it still hands the decoder one vector of the same size "
         "whatever the sentence's length.");
  s.note("This is what attention removes: instead of one c, the decoder will look back at every "
         "h_j, with weights it chooses per target word (next: attn lesson bahdanau).");
}

}  // namespace

// The lesson as its table of contents.
void lesson_bottleneck(const LessonOptions& opts, report::Report& out) {
  const BottleneckLesson r = setup(opts, out);
  stage_inputs(r, out);
  stage_encoder_cell(r, out);
  for (std::size_t t = 0; t < r.S; ++t) stage_encoder_step(r, t, out);
  stage_summary(r, out);
  stage_decoder(r, out);
  stage_dependence(r, out);
  stage_length_sweep(r, out);
}

// Teaching order 100: see `attn list`; docs/bottleneck.md is its page.
ATTN_REGISTER_LESSON({100, "bottleneck", "The encoder-decoder bottleneck",
                      "a tanh RNN squeezes the whole sentence into one vector; measure how early words fade",
                      "Evolution of Attention Mechanism; Rakesh, Transformer Block - Multihead Attention",
                      kSeed | kDIn | kSrc | kTgt | kHidden | kInput, lesson_bottleneck});

}  // namespace attn
