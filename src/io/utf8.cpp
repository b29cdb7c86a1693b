#include "io/utf8.hpp"

namespace attn {

namespace {

// The length a lead byte promises (0 for none), and the range its first continuation byte must
// fall in: narrower after E0, ED, F0 and F4 (no overlong forms, no surrogates, nothing past
// U+10FFFF).
struct Lead {
  std::size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;
};

Lead lead(unsigned char c) {
  Lead l;
  if (c >= 0xC2 && c <= 0xDF) l.len = 2;
  else if (c >= 0xE0 && c <= 0xEF) l.len = 3, l.lo = c == 0xE0 ? 0xA0 : 0x80, l.hi = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4) l.len = 4, l.lo = c == 0xF0 ? 0x90 : 0x80, l.hi = c == 0xF4 ? 0x8F : 0xBF;
  return l;
}

// Bytes of the valid prefix of the sequence at s[i] (at least the lead byte).
std::size_t valid_prefix(std::string_view s, std::size_t i, const Lead& l) {
  std::size_t k = 1;
  while (l.len && k < l.len && i + k < s.size()) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (b < (k == 1 ? l.lo : 0x80) || b > (k == 1 ? l.hi : 0xBF)) break;
    ++k;
  }
  return k;
}

}  // namespace

std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  const Lead l = lead(c);
  return l.len && valid_prefix(s, i, l) == l.len ? l.len : 0;
}

std::size_t utf8_invalid_length(std::string_view s, std::size_t i) {
  const Lead l = lead(static_cast<unsigned char>(s[i]));
  return l.len ? valid_prefix(s, i, l) : 1;
}

char32_t utf8_code_point(std::string_view s, std::size_t i, std::size_t n) {
  const auto c = static_cast<unsigned char>(s[i]);
  char32_t cp = n == 1 ? c : c & (0xFF >> (n + 1));
  for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  return cp;
}

}  // namespace attn
