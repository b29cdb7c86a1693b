// Fuzz target: config.json as attn model DIR reads it (io/model_config.*). The bytes are a whole
// config.json. parse_model_config either refuses with CheckpointError, or returns sizes that
// agree with each other; the tensor list they imply is then built. Anything else (a crash, a
// sanitizer report, another exception, a broken invariant, a message with a control byte or
// longer than a line) is a bug.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "io/checkpoint.hpp"
#include "io/model_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  attn::ModelConfig c;
  try {
    c = attn::parse_model_config(text, "config.json");
  } catch (const attn::CheckpointError& e) {
    const std::string what = e.what();
    if (what.size() > 600) std::abort();
    for (const char ch : what)
      if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7f) std::abort();
    return 0;
  }
  if (c.hidden == 0 || c.layers == 0 || c.heads == 0 || c.kv_heads == 0 || c.head_dim == 0) std::abort();
  if (c.heads % c.kv_heads != 0) std::abort();
  if (!c.head_dim_given && c.head_dim * c.heads != c.hidden) std::abort();
  if (c.family != attn::ModelFamily::Gpt2 && !(c.rope_theta > 0)) std::abort();
  // The tensors the config implies: a fixed number per layer, every axis positive.
  const auto expected = attn::expected_tensors(c);
  if (expected.size() < 2 * c.layers) std::abort();
  for (const auto& e : expected)
    for (auto d : e.shape)
      if (d == 0) std::abort();
  return 0;
}
