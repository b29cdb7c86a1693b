// Finding added tokens in text (added_tokens.hpp).
#include "io/added_tokens.hpp"

#include <utf8proc.h>

#include <algorithm>

namespace attn {

namespace {

// The code point that starts at `at` (valid UTF-8), and the one that ends just before `at`.
utf8proc_int32_t char_at(std::string_view s, std::size_t at) {
  utf8proc_int32_t c = -1;
  utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(s.data() + at), static_cast<utf8proc_ssize_t>(s.size() - at), &c);
  return c;
}
std::size_t char_start_before(std::string_view s, std::size_t at) {
  std::size_t i = at - 1;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
  return i;
}

// Rust regex's \w: letters, marks, digits and connector punctuation (the underscore).
bool is_word_char(utf8proc_int32_t c) {
  switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT: case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO: case UTF8PROC_CATEGORY_PC:
      return true;
    default:
      return false;
  }
}

// Rust's char::is_whitespace (Unicode White_Space).
bool is_space(utf8proc_int32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
         c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::size_t char_length_at(std::string_view s, std::size_t at) {
  std::size_t n = 1;
  while (at + n < s.size() && (static_cast<unsigned char>(s[at + n]) & 0xC0) == 0x80) ++n;
  return n;
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> tokens) : tokens_(std::move(tokens)), by_first_byte_(256) {
  for (std::size_t i = 0; i < tokens_.size(); ++i)
    if (!tokens_[i].content.empty()) by_first_byte_[static_cast<unsigned char>(tokens_[i].content[0])].push_back(i);
  for (auto& bucket : by_first_byte_)
    std::stable_sort(bucket.begin(), bucket.end(),
                     [&](std::size_t a, std::size_t b) { return tokens_[a].content.size() > tokens_[b].content.size(); });
}

std::vector<TextPiece> AddedTokenMatcher::split(std::string_view text) const {
  if (text.empty()) return {{0, 0, std::nullopt}};
  std::vector<TextPiece> pieces;
  std::size_t done = 0;  // end of the last piece pushed
  std::size_t at = 0;    // where the search goes on (after the last match, as a non-overlapping search)
  while (at < text.size() && !tokens_.empty()) {
    const AddedToken* found = nullptr;
    for (std::size_t i : by_first_byte_[static_cast<unsigned char>(text[at])]) {
      if (text.compare(at, tokens_[i].content.size(), tokens_[i].content) == 0) {
        found = &tokens_[i];
        break;  // the longest: buckets are sorted longest first
      }
    }
    if (!found) {
      ++at;
      continue;
    }
    std::size_t start = at, stop = at + found->content.size();
    at = stop;
    if (found->single_word) {
      const bool space_before = start == 0 || !is_word_char(char_at(text, char_start_before(text, start)));
      const bool space_after = stop == text.size() || !is_word_char(char_at(text, stop));
      if (!space_before || !space_after) continue;
    }
    if (found->lstrip) {
      std::size_t s = start;
      while (s > 0 && is_space(char_at(text, char_start_before(text, s)))) s = char_start_before(text, s);
      start = std::max(s, done);  // spaces a previous match already took stay with it
    }
    if (found->rstrip)
      while (stop < text.size() && is_space(char_at(text, stop))) stop += char_length_at(text, stop);
    if (done < start) pieces.push_back({done, start, std::nullopt});
    pieces.push_back({start, stop, found->id});
    done = stop;
    at = std::max(at, stop);
  }
  if (done != text.size()) pieces.push_back({done, text.size(), std::nullopt});
  return pieces;
}

}  // namespace attn
