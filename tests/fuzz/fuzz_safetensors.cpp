// Fuzz target: the safetensors reader behind attn model DIR (io/safetensors.*). The bytes are a
// whole file. parse_safetensors_header either refuses with CheckpointError, or returns tensors
// that tile the data exactly; each convertible tensor is then converted from those bytes.
// Anything else (a crash, a sanitizer report, another exception, a broken invariant, a message
// with a control byte or longer than a line) is a bug.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "io/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  attn::SafetensorsHeader h;
  try {
    h = attn::parse_safetensors_header(bytes, bytes.size(), "fuzz.safetensors");
  } catch (const attn::CheckpointError& e) {
    const std::string what = e.what();
    if (what.size() > 600) std::abort();
    for (const char c : what)
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) std::abort();
    return 0;
  }
  // Accepted: the tensors tile [0, data size) in order, and each size is shape x dtype.
  std::uint64_t at = 0;
  for (const auto& t : h.tensors) {
    if (t.begin != at || t.end < t.begin || t.bytes() != t.count * attn::dtype_size(t.dtype)) std::abort();
    at = t.end;
  }
  if (h.data_start + at != bytes.size()) std::abort();
  const auto* base = reinterpret_cast<const unsigned char*>(bytes.data()) + h.data_start;
  for (const auto& t : h.tensors) {
    if (!attn::dtype_converts(t.dtype)) continue;
    std::vector<float> out(static_cast<std::size_t>(t.count));  // (prod(shape),): at most the input's size
    attn::convert_to_f32(t.dtype, base + t.begin, out.size(), out.data());
  }
  return 0;
}
