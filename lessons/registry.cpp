#include "lessons/registry.hpp"

#include <algorithm>

namespace attn {

const std::vector<LessonEntry>& lessons() {
  static const std::vector<LessonEntry> table = {
      {"bottleneck", "The encoder-decoder bottleneck",
       "a tanh RNN squeezes the whole sentence into one vector; measure how early words fade",
       "Evolution of Attention Mechanism; Rakesh, Transformer Block - Multihead Attention",
       kSeed | kDIn | kSrc | kTgt | kHidden | kInput, lesson_bottleneck},
      {"bahdanau", "Bahdanau attention: additive scoring",
       "a bidirectional encoder, e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j), the alignment matrix",
       "Bahdanau, Cho, Bengio (2014), as told in Evolution of Attention Mechanism and by Rakesh",
       kSeed | kDIn | kSrc | kTgt | kHidden | kInput | kWeights | kStates, lesson_bahdanau},
      {"luong", "Luong attention: dot, general and concat scores",
       "scores from the current decoder state, three scoring functions, and the bridge to Q K^T",
       "Luong, Pham, Manning (2015), as told in Evolution of Attention Mechanism",
       kSeed | kDIn | kSrc | kTgt | kHidden | kInput | kWeights | kStates, lesson_luong},
      {"self-attention", "Self-attention, step by step",
       "scores, softmax and context vectors, first without weights, then with W_query, W_key, W_value",
       "Raschka, Build a Large Language Model (From Scratch), 3.3-3.4",
       kSeed | kBatch | kSeqLen | kDIn | kDOut | kTokens | kInput | kWeights, lesson_self_attention},
      {"causal", "Causal attention: no peeking at the future",
       "the triangular mask, -inf versus -1e9, and a proof that nothing leaks from later tokens",
       "Raschka, Build a Large Language Model (From Scratch), 3.5",
       kSeed | kBatch | kSeqLen | kDIn | kDOut | kTokens | kInput | kWeights, lesson_causal},
      {"heads", "Multi-head attention: split, attend, merge",
       "one fused projection viewed as h heads, the transpose that keeps tokens apart, out_proj",
       "Raschka, Build a Large Language Model (From Scratch), 3.6.2; Phillips, The Implemented Transformer",
       kSeed | kBatch | kSeqLen | kDIn | kDOut | kHeads | kCausal | kQkvBias | kTokens | kInput | kWeights | kKvHeads,
       lesson_heads},
      {"scaling", "Why scores are divided by sqrt(d_k)",
       "the variance of q.k grows with d_k; unscaled softmax saturates and the gradient vanishes",
       "Phillips, The Implemented Transformer, appendix on scaling",
       kSeed | kSeqLen, lesson_scaling},
  };
  return table;
}

std::vector<std::string> weight_file_names(const std::string& lesson) {
  if (lesson == "bahdanau") return {"W_a", "U_a", "v_a"};
  if (lesson == "luong") return {"W_g", "W_c", "v_c"};
  // self-attention and causal: three bias-free projections (the heads lesson takes the rest).
  if (lesson != "heads") return {"W_query", "W_key", "W_value"};
  std::vector<std::string> names;
  for (const char* suffix : {"", "_bias"})
    for (const char* layer : {"W_query", "W_key", "W_value", "out_proj"}) names.push_back(std::string(layer) + suffix);
  return names;
}

std::vector<std::string> state_file_names(const std::string& lesson) {
  if (lesson == "bahdanau") return {"H", "s"};
  if (lesson == "luong") return {"H", "h_t"};
  return {};
}

const LessonEntry* find_lesson(const std::string& name) {
  for (const auto& l : lessons())
    if (name == l.name) return &l;
  return nullptr;
}

namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  // Damerau (optimal string alignment): "casual" -> "causal" is one transposition.
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::string closest_name(const std::string& name, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = 4;  // farther than 3 edits is not a typo
  for (const auto& candidate : candidates) {
    const std::size_t d = edit_distance(name, candidate);
    if (d < best_d) {
      best_d = d;
      best = candidate;
    }
  }
  return best;
}

std::string closest_lesson(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& l : lessons()) names.push_back(l.name);
  return closest_name(name, names);
}

void check_options_apply(const LessonEntry& lesson, const std::set<std::string>& given) {
  for (const auto& opt : option_names()) {
    const bool applies = lesson.options & opt.bit;
    const std::string flag = opt.flag;
    // --no-causal is the other spelling of --causal; name the one the learner typed.
    const std::string typed = opt.bit == kCausal && given.count("--no-causal") ? "--no-causal" : flag;
    const bool passed = given.count(typed) != 0;
    if (passed && !applies) {
      std::string accepted;
      for (const auto& o : option_names())
        if (lesson.options & o.bit) accepted += std::string(o.flag) + ", ";
      accepted += "--precision, --shapes-only";
      throw UsageError("lesson '" + std::string(lesson.name) + "' does not take " + typed, typed,
                       "one of " + accepted, typed);
    }
  }
}

}  // namespace attn
