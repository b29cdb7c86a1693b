// Added tokens (tokenizer.json's "added_tokens": special tokens such as <|endoftext|>, and others)
// are found in the raw text before anything else runs, and never go through BPE. As in Hugging
// Face's AddedVocabulary: at each place the leftmost match wins, the longest among those starting
// there; single_word, lstrip and rstrip then apply. Tokens with "normalized": false are matched in
// the raw text, the others in the normalized text between those.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/bpe.hpp"

namespace attn {

struct AddedToken {
  TokenId id = 0;
  std::string content;
  bool single_word = false;  // only where it is not inside a word
  bool lstrip = false;       // takes the whitespace before it
  bool rstrip = false;       // takes the whitespace after it
  bool normalized = true;    // matched in the normalized text (else in the raw text)
  bool special = false;
};

// A piece of text: [begin, end) in bytes, and the added token it is, if it is one.
struct TextPiece {
  std::size_t begin, end;
  std::optional<TokenId> token;
};

class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  // `tokens` with their contents as they are to be matched (normalized ones already normalized).
  explicit AddedTokenMatcher(std::vector<AddedToken> tokens);
  // `text` cut at every match (an empty text is one empty piece).
  std::vector<TextPiece> split(std::string_view text) const;
  bool empty() const { return tokens_.empty(); }

 private:
  std::vector<AddedToken> tokens_;
  std::vector<std::vector<std::size_t>> by_first_byte_;  // indices into tokens_, longest first
};

}  // namespace attn
