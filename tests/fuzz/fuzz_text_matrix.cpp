// Fuzz target: the text-matrix reader behind --input x.csv / .tsv / .txt. The bytes are a whole
// file, read twice: strictly (the default) and with --allow-nonfinite. A strict read either
// refuses with NpyError or gives a finite (rows, cols) matrix that the permissive read gives too.
// Any refusal message stays one short line: no newline, no control byte, bounded length.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "io/text_matrix.hpp"

namespace {

void check_message(const char* what) {
  const std::size_t n = std::strlen(what);
  if (n > 400) std::abort();  // "path: line L, column C: '<24 characters>...' ..." is far shorter
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(what[i]);
    if (c < 0x20 || c == 0x7f) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  bool strict_ok = true, loose_ok = true;
  attn::NpyArray strict, loose;
  try {
    strict = attn::parse_text_matrix(text, "fuzz.csv", false);
  } catch (const attn::NpyError& e) {
    check_message(e.what());
    strict_ok = false;
  }
  try {
    loose = attn::parse_text_matrix(text, "fuzz.csv", true);
  } catch (const attn::NpyError& e) {
    check_message(e.what());
    loose_ok = false;
  }
  if (strict_ok) {
    if (!loose_ok) std::abort();  // allowing more never refuses what the strict read took
    if (strict.shape.size() != 2 || strict.shape[0] == 0 || strict.shape[1] == 0) std::abort();
    if (strict.values.size() != strict.shape[0] * strict.shape[1]) std::abort();
    if (loose.shape != strict.shape) std::abort();
    for (std::size_t i = 0; i < strict.values.size(); ++i) {
      if (!std::isfinite(strict.values[i])) std::abort();
      if (std::memcmp(&strict.values[i], &loose.values[i], sizeof(float)) != 0) std::abort();
    }
  }
  if (loose_ok && loose.values.size() != loose.shape[0] * loose.shape[1]) std::abort();
  return 0;
}
