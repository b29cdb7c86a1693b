// One safe line for an error message (error_line.hpp).
#include "cli/error_line.hpp"

#include <cstdio>

namespace attn::cli {

namespace {

std::string hex(unsigned char c) {
  char buf[5];
  std::snprintf(buf, sizeof buf, "\\x%02X", c);
  return buf;
}

// Bytes in a valid UTF-8 sequence starting at s[i] (2 to 4, shortest form, no surrogates, at most
// U+10FFFF), or 0.
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  const std::size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((b(k) & 0xC0) != 0x80) return 0;
  if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
  if (c == 0xED && b(1) >= 0xA0) return 0;  // a surrogate
  if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
  if (c == 0xF4 && b(1) >= 0x90) return 0;  // past U+10FFFF
  return n;
}

}  // namespace

std::string error_line(const std::string& message) {
  std::string out;
  for (std::size_t i = 0; i < message.size();) {
    const unsigned char c = static_cast<unsigned char>(message[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
    } else if (const std::size_t n = c >= 0x80 ? utf8_length(message, i) : 0; n > 0) {
      const bool c1 = n == 2 && c == 0xC2 && static_cast<unsigned char>(message[i + 1]) < 0xA0;  // U+0080..U+009F
      if (c1) out += hex(c) + hex(static_cast<unsigned char>(message[i + 1]));
      else out.append(message, i, n);
      i += n;
    } else {
      out += hex(c);
      ++i;
    }
  }
  if (out.size() <= kMaxErrorBytes) return out;
  // Cut on character boundaries: never inside a UTF-8 sequence or a \xNN escape.
  auto back_to_boundary = [&](std::size_t at) {
    while (at > 0 && (static_cast<unsigned char>(out[at]) & 0xC0) == 0x80) --at;  // inside a UTF-8 character
    for (std::size_t k = 1; k <= 3 && at >= k; ++k)  // inside a 4-byte \xNN escape: back to its backslash
      if (out.compare(at - k, 2, "\\x") == 0) return at - k;
    return at;
  };
  const std::size_t head = back_to_boundary(kMaxErrorBytes * 6 / 10);
  const std::size_t tail = back_to_boundary(out.size() - kMaxErrorBytes * 3 / 10);
  return out.substr(0, head) + " ... (" + std::to_string(tail - head) + " bytes left out) ... " + out.substr(tail);
}

}  // namespace attn::cli
