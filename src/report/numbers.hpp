// How numbers read in notes, checks and tables: 114,688 / 0.1235 / 5.96e-08 / 14.00 GiB / 3.00x.
// The one home of these formatters: lessons, lesson_kit, the CLI and the sinks all use these
// (lesson_kit/numbers.hpp brings them into namespace attn for the lesson kit's own messages).
// Light (no xtensor), so anything may include it.
#pragma once

#include <cstdint>
#include <string>

namespace attn::report {

std::string fixed(double v, int decimals);     // "%.4f"; "nan", "inf", "-inf" when not finite
std::string scientific(double v, int digits);  // "%.2e"; "nan", "inf", "-inf" when not finite
inline std::string f4(double v) { return fixed(v, 4); }  // PyTorch's default print precision

// 114688 -> "114,688": multiply-add and byte counts run to many digits.
std::string with_commas(std::uint64_t n);

// Bytes in binary units, two forms:
//   human_bytes: always two decimals past bytes:   "96 B", "3.50 KiB", "128.00 MiB", "14.00 GiB"
//   bytes:       three figures, whole past 100:    "512 B", "1.50 GiB", "96.00 MiB", "128 MiB"
std::string human_bytes(std::uint64_t bytes);
std::string bytes(double n);

// a / b as "3.00x".
std::string ratio_text(std::uint64_t a, std::uint64_t b);

}  // namespace attn::report
