// Fuzz target: the .npy reader behind --input x.npy, --weights DIR and --states DIR.
// The bytes are a whole file. parse_npy either returns an array whose values fill its shape, or
// refuses with NpyError; then the non-finite check either passes or refuses with UsageError.
// Anything else (a crash, a sanitizer report, another exception, a broken invariant, a message
// with a control byte or longer than a line) is a bug.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cli/external_io.hpp"
#include "io/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  attn::NpyArray a;
  try {
    a = attn::parse_npy(bytes, "fuzz.npy");
  } catch (const attn::NpyError& e) {
    // A refusal is one short line: header bytes are shown cut and escaped, never raw.
    const std::string what = e.what();
    if (what.size() > 400) std::abort();
    for (const char c : what)
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) == 0x7f) std::abort();
    return 0;
  }
  std::size_t count = 1;
  for (std::size_t d : a.shape) count *= d;
  if (count != a.values.size() || count > attn::kNpyMaxElements) std::abort();
  // What --input x.npy does next: refuse NaN and inf, or (--allow-nonfinite) describe them.
  const attn::ExternalTensor t{"--input fuzz.npy", a.shape, a.values};
  bool finite = true;
  try {
    attn::cli::require_finite(t);
  } catch (const attn::UsageError&) {
    finite = false;
  }
  attn::LessonOptions opts;
  opts.input = t;
  if (attn::cli::nonfinite_notes(opts).empty() != finite) std::abort();
  // What --dump writes back must read back the same.
  if (count <= 4096) {
    const attn::NpyArray back = attn::parse_npy(attn::encode_npy(a.shape, a.values.data()), "again.npy");
    if (back.shape != a.shape || back.values.size() != a.values.size()) std::abort();
  }
  return 0;
}
