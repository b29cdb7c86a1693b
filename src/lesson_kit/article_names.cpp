// The articles' names for attn's size options: which option each stands for in a lesson, decided
// from the options the lesson takes (so a new lesson needs no entry here), and the message for an
// option nobody declares. docs/names.md sets out the result lesson by lesson.
#include "lesson_kit/article_names.hpp"

#include <algorithm>

namespace attn {
namespace {

// Each group is one idea under the names different articles give it.
const char* const kModelWidth[] = {"--d-model"};                       // Phillips, Evolution, the Llama walk-through
const char* const kHeadCount[] = {"--num-heads", "--n-heads"};         // Raschka, Rakesh, the Llama walk-through / Phillips
const char* const kHeadWidth[] = {"--d-k", "--d-key", "--head-dim"};   // Evolution, the Llama walk-through / Phillips / Raschka

template <std::size_t N>
bool in(const char* const (&group)[N], const std::string& flag) {
  return std::find(std::begin(group), std::end(group), flag) != std::end(group);
}

// The lessons that take `bit`, "heads, gqa", for a message pointing elsewhere.
std::string lessons_taking(OptionBit bit) {
  std::string names;
  for (const auto& l : lessons())
    if (l.options & bit) names += (names.empty() ? "" : ", ") + std::string(l.name);
  return names;
}

// The articles' options attn leaves out on purpose, and why.
struct Absent {
  const char* flag;
  const char* why;
};
const Absent kAbsent[] = {
    {"--dropout",
     "attn has no --dropout: it runs attention as a model does at inference (model.eval()), where nn.Dropout "
     "changes nothing; run the command without it to see the articles' numbers in eval mode (docs/names.md)"},
    {"--context-length",
     "attn has no --context-length: the causal mask is built for exactly the tokens given, as the book's "
     "mask[:num_tokens, :num_tokens] is cut to them; set the number of tokens with --seq-len (docs/names.md)"},
};

}  // namespace

const std::vector<ArticleName>& article_names() {
  static const std::vector<ArticleName> names = {
      {"--d-model", "The articles' d_model: --d-in (and --d-out too where a lesson has heads and --d-out)"},
      {"--num-heads", "Raschka's, Rakesh's and the Llama walk-through's num_heads: --heads"},
      {"--n-heads", "Phillips' n_heads: --heads"},
      {"--d-k", "Evolution's and the Llama walk-through's d_k: one head's width (--d-out when there is one head)"},
      {"--d-key", "Phillips' d_key: one head's width (--d-out when there is one head)"},
      {"--head-dim", "Raschka's head_dim: one head's width (--d-out when there is one head)"},
  };
  return names;
}

bool is_article_name(const std::string& flag) {
  const auto& names = article_names();
  return std::any_of(names.begin(), names.end(), [&](const ArticleName& a) { return flag == a.flag; });
}

std::vector<std::string> article_name_targets(const LessonEntry& lesson, const std::string& flag,
                                              const std::string& text) {
  const std::string name = lesson.name;
  const std::string typed = flag + " " + text;
  const bool d_in = lesson.options & kDIn, d_out = lesson.options & kDOut, heads = lesson.options & kHeads;
  const bool rnn = lesson.options & kHidden;  // the encoder-decoder lessons: embeddings and an RNN state

  if (in(kHeadCount, flag)) {
    if (heads) return {"--heads"};
    throw UsageError("lesson '" + name + "' has no head count: " + flag +
                         " is the articles' name for --heads, which only the multi-head lessons take",
                     flag, "a lesson with heads (" + lessons_taking(kHeads) + ")", "lesson " + name);
  }

  if (in(kModelWidth, flag)) {
    // Phillips and the Llama walk-through project d_model to d_model, so in the multi-head lesson
    // with both widths the article's d_model is both; elsewhere it is the embedding width of x.
    if (rnn)
      throw UsageError("lesson '" + name + "' has no d_model: its widths are --d-in (the word embeddings) and "
                       "--hidden (the RNN's state)", flag, "--d-in or --hidden", typed);
    if (d_in && d_out && heads) return {"--d-in", "--d-out"};
    if (d_in) return {"--d-in"};
    throw UsageError("lesson '" + name + "' has no model width: " + flag +
                         " (the articles' d_model) is --d-in, which this lesson does not take",
                     flag, "a lesson that takes --d-in", "lesson " + name);
  }

  if (in(kHeadWidth, flag)) {
    // A lesson that declares one spelling of the head width (rope: --d-k) takes the others for it.
    for (const char* spelling : kHeadWidth)
      if (lesson.find_extra(spelling)) return {spelling};
    if (heads) {
      if (text.find_first_not_of('0') == std::string::npos)  // "0": no width to derive a size from
        throw UsageError(flag + " is out of range", flag, "1.." + std::to_string(kMaxSize), text);
      // Every article derives it: head_dim = d_out // num_heads, d_key = d_model // n_heads.
      const std::string total = d_out ? "--d-out" : "--d-in";
      throw UsageError("lesson '" + name + "' computes the head width itself, d_k = " + total +
                           " / --heads: for d_k " + text + ", give " + total + " = " + text + " x the number of heads",
                       flag, total + " and --heads", typed);
    }
    if (rnn)
      throw UsageError("lesson '" + name + "' has no key width to set: " + flag +
                           " belongs to the attention lessons (docs/names.md)",
                       flag, "a lesson with a key width", "lesson " + name);
    if (d_out) return {"--d-out"};  // one head: its width is the whole projection, d_k = d_out
    if (d_in) return {"--d-in"};    // no projection: queries and keys are d_in wide (padding)
    throw UsageError("lesson '" + name + "' has no option for the key width: " + flag +
                         " means nothing here (docs/" + name + ".md)",
                     flag, "a lesson with a key width", "lesson " + name);
  }
  throw std::logic_error(flag + " is not an article name");
}

std::string unknown_option_message(const std::string& typed, const std::vector<std::string>& known,
                                   const std::vector<std::string>& elsewhere, const std::string& help_hint) {
  const std::string name = typed.substr(0, typed.find('='));  // --dropout=0.1 names --dropout
  for (const Absent& a : kAbsent)
    if (name == a.flag) return a.why;
  std::vector<std::string> all = known;
  all.insert(all.end(), elsewhere.begin(), elsewhere.end());
  const std::string near = closest_name(name, all);
  if (near.empty()) return "unknown option '" + name + "' (" + help_hint + ")";
  // The nearest name may belong to another lesson (--head, typed to causal, is nearest --heads):
  // say so, rather than offer a farther name this lesson takes.
  if (std::find(known.begin(), known.end(), near) == known.end())
    return "unknown option '" + name + "' (nearest: " + near + ", which this lesson does not take; " + help_hint + ")";
  return "unknown option '" + name + "' (did you mean '" + near + "'?)";
}

}  // namespace attn
