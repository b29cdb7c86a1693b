// The byte-to-unicode table (byte_level.hpp), built once.
#include "io/byte_level.hpp"

#include <array>
#include <unordered_map>

namespace attn::byte_level {

namespace {

std::string utf8_of(unsigned code) {
  std::string s;
  if (code < 0x80) {
    s += static_cast<char>(code);
  } else {  // the table only reaches U+0143: two bytes suffice
    s += static_cast<char>(0xC0 | (code >> 6));
    s += static_cast<char>(0x80 | (code & 0x3F));
  }
  return s;
}

bool stands_for_itself(unsigned b) { return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174; }

struct Table {
  std::array<std::string, 256> chars;
  std::unordered_map<unsigned, unsigned char> bytes;  // code point -> byte
  Table() {
    unsigned next = 256;
    for (unsigned b = 0; b < 256; ++b) {
      const unsigned code = stands_for_itself(b) ? b : next++;
      chars[b] = utf8_of(code);
      bytes[code] = static_cast<unsigned char>(b);
    }
  }
};

const Table& table() {
  static const Table t;
  return t;
}

}  // namespace

const std::string& char_of_byte(unsigned char b) { return table().chars[b]; }

std::string encode(std::string_view bytes) {
  const Table& t = table();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) out += t.chars[b];
  return out;
}

bool decode(std::string_view text, std::string& bytes) {
  const Table& t = table();
  bytes.clear();
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    unsigned code = 0;
    if (c < 0x80) {
      code = c;
      i += 1;
    } else if ((c & 0xE0) == 0xC0 && i + 1 < text.size()) {
      code = ((c & 0x1Fu) << 6) | (static_cast<unsigned char>(text[i + 1]) & 0x3Fu);
      i += 2;
    } else {
      return false;  // three- and four-byte characters are never in the table
    }
    const auto found = t.bytes.find(code);
    if (found == t.bytes.end()) return false;
    bytes += static_cast<char>(found->second);
  }
  return true;
}

}  // namespace attn::byte_level
