#include "report/text_width.hpp"

#include <locale.h>
#include <wchar.h>

#include <algorithm>

#include "io/utf8.hpp"

namespace attn::report {

namespace {

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
    const std::size_t n = utf8_length(text, i);
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
    const std::size_t n = utf8_length(utf8, i);
    w += n == 0 ? 1 : columns(utf8_code_point(utf8, i, n));
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
    const std::size_t n = std::max<std::size_t>(1, utf8_length(utf8, i));
    const std::size_t cw = utf8_length(utf8, i) == 0 ? 1 : columns(utf8_code_point(utf8, i, n));
    if (w + cw + 1 > width) break;  // keep the last column for '~'
    out.append(utf8, i, n);
    w += cw;
    i += n;
  }
  return out + "~";
}

}  // namespace attn::report
