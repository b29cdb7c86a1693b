// The one table of the options lessons read, and the parse that fills LessonOptions from it (see
// shared_options.hpp for who reads it).
#include "lesson_kit/shared_options.hpp"

#include <sstream>

#include "lesson_kit/article_names.hpp"
#include "lesson_kit/registry.hpp"

namespace attn {

const char* group_title(OptionGroup group) {
  switch (group) {
    case OptionGroup::Sizes: return "Sizes and model";
    case OptionGroup::Inputs: return "Inputs";
    case OptionGroup::Outputs: return "Outputs";
    case OptionGroup::Display: return "Display";
  }
  return "";
}

namespace {

// Words separated by spaces: at least one, at most `limit` (a longer sentence could not be printed
// one word per row).
std::vector<std::string> parse_words(const std::string& flag, const std::string& text, std::size_t limit) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  if (words.empty()) throw UsageError(flag + " needs at least one word", flag, "words separated by spaces", "'" + text + "'");
  if (words.size() > limit)
    throw UsageError(flag + " is too long to print", flag, "at most " + std::to_string(limit) + " words",
                     std::to_string(words.size()));
  return words;
}

// The parsers the rows name: each writes its row's field.
template <std::optional<std::size_t> LessonOptions::*field, std::size_t hi = kMaxSize>
void size_into(const OptionText& in, LessonOptions& o) {
  o.*field = parse_whole(in.flag, in.text, 1, hi);
}

template <std::optional<std::vector<std::string>> LessonOptions::*field>
void sentence_into(const OptionText& in, LessonOptions& o) {
  o.*field = parse_words(in.flag, in.text, kMaxSentence);
}

void seed(const OptionText& in, LessonOptions& o) { o.seed = parse_whole(in.flag, in.text, 0, (std::uint64_t{1} << 63) - 1); }

void causal(const OptionText&, LessonOptions& o) { o.causal = true; }

void no_causal(const OptionText& in, LessonOptions& o) {
  if (in.given("--causal"))
    throw UsageError("--causal and --no-causal contradict each other", "--causal", "one of them", "both");
  o.causal = false;
}

void qkv_bias(const OptionText&, LessonOptions& o) { o.qkv_bias = true; }

// "a b c | d e f": one sentence per batch entry.
void tokens(const OptionText& in, LessonOptions& o) {
  std::vector<std::vector<std::string>> sentences;
  std::string rest = in.text + "|";
  for (std::size_t bar; (bar = rest.find('|')) != std::string::npos; rest.erase(0, bar + 1))
    sentences.push_back(parse_words(in.flag, rest.substr(0, bar), kMaxSize));
  o.tokens = sentences.front();
  o.more_sentences.assign(sentences.begin() + 1, sentences.end());
}

// Files are read only for a lesson that takes them (the others refuse the option by name), and a
// file's declared shape meets the lesson's limits before its data is read.
void input(const OptionText& in, LessonOptions& o) {
  if (in.lesson.options & kInput) in.files.input(in.text, in.given("--allow-nonfinite"), o);
}

void weights(const OptionText& in, LessonOptions& o) {
  if (in.lesson.options & kWeights) in.files.weights(in.text, in.given("--allow-nonfinite"), o);
}

void states(const OptionText& in, LessonOptions& o) {
  if (in.lesson.options & kStates) in.files.states(in.text, in.given("--allow-nonfinite"), o);
}

void weights_layout(const OptionText& in, LessonOptions& o) {
  if (in.text != "math" && in.text != "torch")
    throw UsageError("unknown --weights-layout", in.flag, "math (in, out) or torch (out, in)", "'" + in.text + "'");
  if (!in.given("--weights")) throw UsageError("--weights-layout needs --weights", in.flag, "--weights DIR", "no --weights");
  o.weights_torch_layout = in.text == "torch";
}

// Its field is each file's own flag: it only says whether they may hold NaN and inf.
void allow_nonfinite(const OptionText& in, LessonOptions&) {
  if (!in.given("--input") && !in.given("--weights") && !in.given("--states"))
    throw UsageError("--allow-nonfinite has no file to apply to", in.flag, "--input, --weights or --states",
                     "none of them");
}

// The articles' names (--d-model, --num-heads, --head-dim, ...; docs/names.md): each stands for
// one or two of this lesson's options and is parsed under the name typed, so that a message quotes
// what the learner wrote. Two spellings of one option are refused rather than one silently winning.
void apply_article_names(const LessonEntry& lesson, const TypedOptions& typed, LessonOptions& o,
                         std::set<std::string>& given) {
  std::map<std::string, std::string> set_by;  // option -> the article's name that set it
  for (const auto& a : article_names()) {
    const std::string flag = a.flag;
    if (lesson.find_extra(flag) || typed.count(flag) == 0) continue;  // its own option, or absent
    const std::string& text = typed.at(flag);
    for (const auto& target : article_name_targets(lesson, flag, text)) {
      const std::string other = set_by.count(target) ? set_by[target] : typed.count(target) ? target : "";
      if (!other.empty())
        throw UsageError(other + " and " + flag + " both set " + target + " in lesson '" + lesson.name + "'", flag,
                         "one of them", "both");
      set_by[target] = flag;
      given.insert(target);
      if (target == "--d-in") o.d_in = parse_whole(flag, text, 1, kMaxSize);
      else if (target == "--d-out") o.d_out = parse_whole(flag, text, 1, kMaxSize);
      else if (target == "--heads") o.heads = parse_whole(flag, text, 1, kMaxSize);
      else {  // the lesson's own head-width option (rope's --d-k), its range quoted under the name typed
        LessonOption own = *lesson.find_extra(target);
        own.flag = a.flag;
        o.own[target] = parse_lesson_option(own, text);
      }
    }
  }
}

}  // namespace

const std::vector<SharedOption>& shared_options() {
  using G = OptionGroup;
  using O = LessonOptions;
  // Group by group, in the order of --help and of the options a refusal lists as accepted. (The
  // Outputs group, and the Display group's options after --values, are the outputs' table.)
  static const std::vector<SharedOption> table = {
      {"--batch", kBatch, G::Sizes, "INT", "Batch size B: the input stacked B times", size_into<&O::batch>},
      {"--seq-len", kSeqLen, G::Sizes, "INT", "Number of tokens T", size_into<&O::seq_len>},
      {"--d-in", kDIn, G::Sizes, "INT", "Embedding width d_in", size_into<&O::d_in>},
      {"--d-out", kDOut, G::Sizes, "INT", "Projection width d_out (all heads together)", size_into<&O::d_out>},
      {"--heads", kHeads, G::Sizes, "INT", "Number of heads h (must divide the width they split)", size_into<&O::heads>},
      {"--kv-heads", kKvHeads, G::Sizes, "INT", "Key/value heads, each shared by heads/kv-heads query heads",
       size_into<&O::kv_heads>},
      {"--causal", kCausal, G::Sizes, nullptr, "Mask the future", causal},
      {"--no-causal", kCausal, G::Sizes, nullptr, "Let every token see every token", no_causal},
      {"--qkv-bias", kQkvBias, G::Sizes, nullptr, "Give W_query, W_key, W_value a bias", qkv_bias},
      {"--hidden", kHidden, G::Sizes, "INT", "Hidden width d_h of the RNNs", size_into<&O::hidden, kMaxHidden>},
      {"--seed", kSeed, G::Inputs, "INT", "Seed for torch.manual_seed (default: the article's)", seed},
      {"--tokens", kTokens, G::Inputs, "WORDS",
       "Words to attend over, e.g. \"the cat sat\" (\"a b | c d\": one sentence per batch entry)", tokens},
      {"--src", kSrc, G::Inputs, "WORDS", "Source sentence to translate", sentence_into<&O::src>},
      {"--tgt", kTgt, G::Inputs, "WORDS", "Target sentence, its translation", sentence_into<&O::tgt>},
      {"--input", kInput, G::Inputs, "FILE", "The lesson's x from a file: .npy (float32/64) or a text matrix", input},
      {"--weights", kWeights, G::Inputs, "DIR",
       "Weights from DIR: W_query.npy, W_key.npy, W_value.npy, out_proj.npy (+ *_bias.npy); bahdanau W_a.npy, "
       "U_a.npy, v_a.npy; luong W_g.npy, W_c.npy, v_c.npy",
       weights},
      {"--weights-layout", kWeights, G::Inputs, "math|torch",
       "math: files are (in, out) as in Q = X W (default); torch: (out, in) as nn.Linear.weight", weights_layout},
      {"--states", kStates, G::Inputs, "DIR",
       "Encoder states H.npy (S, d_enc) and decoder state s.npy (bahdanau) or h_t.npy (luong) from DIR, instead "
       "of the lesson's own RNNs",
       states},
      {"--allow-nonfinite", kInput | kWeights | kStates, G::Inputs, nullptr,
       "Keep NaN and inf found in --input, --weights or --states (refused by default)", allow_nonfinite},
      {"--preset", 0, G::Inputs, "NAME", "An article's configuration (see attn list --presets)", nullptr},
      {"--values", 0, G::Display, nullptr, "Print values even where a preset shows shapes only (llama)", nullptr},
  };
  return table;
}

const SharedOption* find_shared_option(const std::string& flag) {
  for (const auto& o : shared_options())
    if (flag == o.flag) return &o;
  return nullptr;
}

bool is_shared_flag(const std::string& flag) { return find_shared_option(flag) != nullptr || flag == "--help"; }

void parse_lesson_options(const LessonEntry& lesson, const TypedOptions& typed, const OptionFiles& files,
                          LessonOptions& opts, std::set<std::string>& given) {
  for (const auto& row : shared_options()) {
    const auto it = typed.find(row.flag);
    if (it == typed.end()) continue;
    given.insert(row.flag);
    if (row.parse) row.parse(OptionText{row.flag, it->second, lesson, typed, files}, opts);
  }
  // A lesson's own options: parsed against the declaration of this lesson; another lesson's
  // option is only noted here, and refused by name in check_options_apply.
  for (const auto& any_lesson_option : declared_lesson_options()) {
    const std::string flag = any_lesson_option.flag;
    // rope's --d-k is also an article's name: for the other lessons, apply_article_names reads it.
    if (is_article_name(flag) && !lesson.find_extra(flag)) continue;
    const auto it = typed.find(flag);
    if (it == typed.end()) continue;
    given.insert(flag);
    if (const LessonOption* declared = lesson.find_extra(flag)) {
      if (declared->type == OptionType::IntegerList) opts.own_lists[flag] = parse_lesson_list(*declared, it->second);
      else opts.own[flag] = parse_lesson_option(*declared, it->second);
    }
  }
  apply_article_names(lesson, typed, opts, given);
}

}  // namespace attn
