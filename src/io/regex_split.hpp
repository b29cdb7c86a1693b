// A pre-tokenizer's regex, run by Oniguruma: the engine (and version, 6.9.8) that Hugging Face's
// tokenizers use through the onig crate, so that \p{L}, (?i:...) and (?!\S) mean exactly what they
// mean there. std::regex cannot run these patterns at all.
//
// Backtracking is bounded: a pattern such as (a*)*b on a long run of 'a' would otherwise run for
// hours; past the bound the search stops and TokenizerError names the pattern.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

// A stretch of text: [begin, end) in bytes, and whether the pattern matched it.
struct Span {
  std::size_t begin, end;
  bool match;
};

class Regex {
 public:
  // Compiles `pattern` (Ruby syntax, UTF-8, as the onig crate's Regex::new). `where` names the
  // file for the message when it does not compile.
  Regex(const std::string& pattern, const std::string& where);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // The text cut into matches and the stretches between them, in order, covering it all (an empty
  // text is one empty non-match), as Hugging Face's find_matches for a regex.
  std::vector<Span> find_matches(std::string_view text) const;
  const std::string& pattern() const { return pattern_; }

  // Backtracking steps one match may take, and the depth of Oniguruma's match stack.
  static constexpr unsigned long kRetryLimit = 1'000'000;
  static constexpr unsigned kStackLimit = 1'000'000;

 private:
  struct Compiled;
  std::unique_ptr<Compiled> compiled_;
  std::string pattern_;
};

// Text matching `literal` exactly, as Hugging Face's Split with a String pattern (the pattern
// escaped, then run as a regex).
std::string escaped_regex(const std::string& literal);

}  // namespace attn
