// How lessons write counts and sizes in notes and tables: 114,688 / 14.00 GiB / 3.00x.
// Header-only and light (no xtensor), so any lesson can include it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace attn {

// 114688 -> "114,688": multiply-add and byte counts run to many digits.
inline std::string with_commas(std::uint64_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// Bytes in binary units: "96 B", "3.50 KiB", "14.00 GiB".
inline std::string human_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  std::size_t u = 0;
  while (v >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
    v /= 1024.0;
    ++u;
  }
  if (u == 0) return std::to_string(bytes) + " B";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

// What a word list must cover, for a refusal: "one word for each of its 5 rows", "one word for its
// one row" (the count is the file's; the learner's count follows it as "3 words").
inline std::string one_word_each(std::uint64_t n, const std::string& noun) {
  return n == 1 ? "one word for its one " + noun : "one word for each of its " + std::to_string(n) + " " + noun + "s";
}
inline std::string words_given(std::uint64_t n) { return std::to_string(n) + (n == 1 ? " word" : " words"); }

// a / b as "3.00x".
inline std::string ratio_text(std::uint64_t a, std::uint64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", static_cast<double>(a) / static_cast<double>(b));
  return buf;
}

}  // namespace attn
