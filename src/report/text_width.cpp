#include "report/text_width.hpp"

#include <locale.h>
#include <wchar.h>

#include <algorithm>

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

// The code point of the valid n-byte sequence at s[i].
char32_t code_point(const std::string& s, std::size_t i, std::size_t n) {
  const auto c = static_cast<unsigned char>(s[i]);
  char32_t cp = n == 1 ? c : c & (0xFF >> (n + 1));
  for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  return cp;
}

// Columns one code point takes on a terminal. wcwidth() answers by the calling thread's locale,
// and attn never calls setlocale (numbers must print the same everywhere), so the question is
// asked with C.UTF-8 in force for this thread only; Debian's libc-bin always ships that locale.
// Without it (another system), every code point counts one column, as before.
std::size_t columns(char32_t cp) {
  if (cp >= 0x20 && cp < 0x7F) return 1;  // ASCII needs no locale
  static const locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
  if (utf8 == static_cast<locale_t>(nullptr)) return 1;
  const locale_t previous = uselocale(utf8);
  const int w = wcwidth(static_cast<wchar_t>(cp));
  uselocale(previous);
  return w < 0 ? 1 : static_cast<std::size_t>(w);
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
  for (std::size_t i = 0; i < utf8.size();) {
    const std::size_t n = sequence_length(utf8, i);
    w += n == 0 ? 1 : columns(code_point(utf8, i, n));
    i += n == 0 ? 1 : n;
  }
  return w;
}

std::string fit_label(const std::string& utf8, std::size_t width) {
  if (display_width(utf8) <= width) return utf8;
  if (width == 0) return "";
  std::string out;
  std::size_t w = 0;
  for (std::size_t i = 0; i < utf8.size();) {
    const std::size_t n = std::max<std::size_t>(1, sequence_length(utf8, i));
    const std::size_t cw = sequence_length(utf8, i) == 0 ? 1 : columns(code_point(utf8, i, n));
    if (w + cw + 1 > width) break;  // keep the last column for '~'
    out.append(utf8, i, n);
    w += cw;
    i += n;
  }
  return out + "~";
}

}  // namespace attn::report
