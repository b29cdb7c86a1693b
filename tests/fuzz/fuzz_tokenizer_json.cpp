// Fuzz target: loading arbitrary bytes as a tokenizer.json (io/tokenizer_json.cpp and what it
// builds: vocabulary, merges, added tokens, regexes, templates), then encoding a short text with
// whatever loaded. A TokenizerError is the expected refusal; anything else is a bug.
#include <cstdint>
#include <string>

#include "io/tokenizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const attn::Tokenizer tok = attn::Tokenizer::parse(bytes, "fuzz.json");
    const auto ids = tok.encode("Hello, world! <|endoftext|> 12345 \xC3\xA9\xE6\x97\xA5", 4096);
    (void)tok.decode(ids);
    for (auto id : ids) (void)tok.readable(id);
  } catch (const attn::TokenizerError&) {
  } catch (const attn::Tokenizer::TooMany&) {
  }
  return 0;
}
