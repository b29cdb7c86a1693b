// The golden comparison: a lesson's output against its checked-in file, strict about text and
// lenient about the last printed digits of numbers (docs/testing.md, "Golden outputs").
//
// Both texts are cut into lines, and each line into tokens: numbers, and text (words,
// punctuation) with the runs of spaces between them. Then
//   - the number of lines and, in each line, the number and kinds of tokens must be equal;
//   - text tokens must be equal, byte for byte (so "nan", "inf" and "-inf" too);
//   - a number with no digit after a decimal point ("6", "(3, 4)", "1.", "1e9") must be equal,
//     byte for byte: counts, shapes, seeds and PyTorch's integer mode are exact;
//   - a number with decimals ("0.2899", "1.49e-08", "-0.0000") may differ from the golden value
//     g by at most max(kAbsolute, kUlps * (one unit in g's last printed place), kRelative * |g|),
//     and a zero in scientific notation ("0.00e+00", whose exponent says nothing) by kAbsolute;
//   - a run of spaces touching a number may differ in length, or be missing on one side
//     (PyTorch pads every value of a tensor to the widest one, so one value turning from 0.0000
//     to -0.0000 widens all the columns); every other run of spaces must be equal.
// Standard C++ only (no xtensor), so the comparator compiles in a second.
#pragma once

#include <string>
#include <vector>

namespace attn::golden {

inline constexpr double kAbsolute = 1e-6;  // residuals such as |sum - 1| = 1.49e-08 vs 2.98e-08
inline constexpr double kUlps = 1.01;      // a last-digit rounding flip: 0.2899 vs 0.2900
inline constexpr double kRelative = 1e-5;  // long mantissas: 1234.5678 vs 1234.5679 (--precision)

// One line that differs, with why (the first reason found on that line).
struct LineDifference {
  std::size_t line = 0;   // 1-based; a line that exists on one side only has "" on the other
  std::string expected;
  std::string actual;
  std::string why;
};

struct Comparison {
  bool equal = true;
  std::size_t expected_lines = 0, actual_lines = 0;
  std::vector<LineDifference> differences;
};

// The tolerance for a golden number as printed (for example "1.49e-08" gives 1e-6, "0.2899" gives
// 1.01e-4); 0 for a number compared byte for byte. `text` must be one number token.
double tolerance_for(const std::string& text);

Comparison compare(const std::string& expected, const std::string& actual);

// A report for people: each differing line (expected, actual, why), at most `max_lines` of them.
std::string describe(const Comparison& c, std::size_t max_lines = 40);

}  // namespace attn::golden
