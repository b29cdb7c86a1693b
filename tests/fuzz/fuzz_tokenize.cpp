// Fuzz target: encoding arbitrary bytes with GPT-2's tokenizer (tests/data/tokenizers/gpt2, loaded
// once). Invalid UTF-8 is refused before encoding, as attn tokenize does. The oracle: a byte-level
// tokenizer loses nothing, so decoding the ids must give the text back, byte for byte.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "io/tokenizer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const attn::Tokenizer tok = attn::Tokenizer::load(ATTN_FUZZ_GPT2_TOKENIZER);
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (attn::invalid_utf8_at(text)) return 0;
  try {
    const auto ids = tok.encode(text);
    if (tok.decode(ids) != text) std::abort();
    for (auto id : ids) (void)tok.readable(id);
  } catch (const attn::TokenizerError&) {  // the regex's backtracking bound
  }
  return 0;
}
