// How the lesson kit words counts in its messages ("3 words"), and the number formatters of
// report/numbers.hpp (with_commas, human_bytes, ratio_text) brought into namespace attn.
// Header-only and light (no xtensor).
#pragma once

#include <cstdint>
#include <string>

#include "report/numbers.hpp"

namespace attn {

using report::human_bytes;
using report::ratio_text;
using report::with_commas;

// What a word list must cover, for a refusal: "one word for each of its 5 rows", "one word for its
// one row" (the count is the file's; the learner's count follows it as "3 words").
inline std::string one_word_each(std::uint64_t n, const std::string& noun) {
  return n == 1 ? "one word for its one " + noun : "one word for each of its " + std::to_string(n) + " " + noun + "s";
}
inline std::string words_given(std::uint64_t n) { return std::to_string(n) + (n == 1 ? " word" : " words"); }

}  // namespace attn
