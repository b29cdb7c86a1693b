// The pre-tokenizer of a tokenizer.json: cuts normalized text into pre-tokens (roughly words),
// each of which BPE then encodes on its own. attn runs the two kinds byte-level BPE models use:
//   ByteLevel  optional leading space (add_prefix_space), GPT-2's regex (use_regex), then every
//              byte written as its byte-level character (byte_level.hpp)
//   Split      a regex (or a literal string) and what to do with its matches (behavior, invert)
// and a Sequence of them, applied in order, each to every piece the previous one left.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/regex_split.hpp"

namespace attn {

// GPT-2's pre-tokenization regex, the one ByteLevel runs when use_regex is true.
extern const char* const kGpt2Pattern;

// What Split does with the matches: Removed drops them, Isolated keeps each as its own piece,
// MergedWithPrevious/Next glue each to its neighbour, Contiguous joins runs of matches.
enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

struct PreTokenizerStep {
  enum class Kind { ByteLevel, Split } kind = Kind::ByteLevel;
  bool add_prefix_space = false;  // ByteLevel
  std::shared_ptr<const Regex> regex;  // ByteLevel with use_regex (GPT-2's), or Split's pattern
  SplitBehavior behavior = SplitBehavior::Isolated;  // Split
  bool invert = false;                               // Split: the pieces between matches are the matches
};

class PreTokenizer {
 public:
  PreTokenizer() = default;  // none: the whole text is one pre-token
  explicit PreTokenizer(std::vector<PreTokenizerStep> steps) : steps_(std::move(steps)) {}
  // The pre-tokens of `text`, in order (empty pieces dropped).
  std::vector<std::string> split(std::string_view text) const;
  bool byte_level() const;  // some step maps bytes: tokens are byte-level strings

 private:
  std::vector<PreTokenizerStep> steps_;
};

}  // namespace attn
