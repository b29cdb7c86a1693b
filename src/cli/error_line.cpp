// One safe line for an error message (error_line.hpp).
#include "cli/error_line.hpp"

#include <cstdio>

#include "io/utf8.hpp"

namespace attn::cli {

namespace {

std::string hex(unsigned char c) {
  char buf[5];
  std::snprintf(buf, sizeof buf, "\\x%02X", c);
  return buf;
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
