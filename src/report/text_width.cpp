#include "report/text_width.hpp"

namespace attn::report {

namespace {

// Length of the UTF-8 sequence that starts at s[i], or 0 when it is not valid UTF-8.
std::size_t sequence_length(const std::string& s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  unsigned min = 0;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) n = 2, min = 0x80;
  else if ((c & 0xF0) == 0xE0) n = 3, min = 0x800;
  else if ((c & 0xF8) == 0xF0) n = 4, min = 0x10000;
  else return 0;
  if (i + n > s.size()) return 0;
  unsigned cp = c & (0xFF >> (n + 1));
  for (std::size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  // Overlong forms, UTF-16 surrogates and values past U+10FFFF are not valid UTF-8.
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

std::string clean_label(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = sequence_length(text, i);
    const auto c = static_cast<unsigned char>(text[i]);
    if (n == 0 || c < 0x20 || c == 0x7F) {
      out += '?';
      ++i;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

std::size_t display_width(const std::string& utf8) {
  std::size_t w = 0;
  for (unsigned char c : utf8) w += (c & 0xC0) != 0x80;  // count every byte that starts a code point
  return w;
}

std::string fit_label(const std::string& utf8, std::size_t width) {
  if (display_width(utf8) <= width) return utf8;
  if (width == 0) return "";
  std::string out;
  std::size_t w = 0;
  for (std::size_t i = 0; i < utf8.size(); ++i) {
    const auto c = static_cast<unsigned char>(utf8[i]);
    if ((c & 0xC0) != 0x80) {
      if (w + 1 == width) break;  // keep the last column for '~'
      ++w;
    }
    out += utf8[i];
  }
  return out + "~";
}

}  // namespace attn::report
