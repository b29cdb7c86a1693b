// NFC through utf8proc (normalizer.hpp): Unicode's canonical composition, so that "e" followed by a
// combining acute accent and the single character "é" give the same tokens.
#include "io/normalizer.hpp"

#include <utf8proc.h>

#include <cstdlib>
#include <memory>

#include "io/tokenizer_error.hpp"

namespace attn {

Normalizer Normalizer::nfc() {
  Normalizer n;
  n.nfc_ = true;
  return n;
}

std::string Normalizer::apply(std::string_view text) const {
  if (!nfc_ || text.empty()) return std::string(text);
  utf8proc_uint8_t* out = nullptr;
  const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                              static_cast<utf8proc_ssize_t>(text.size()), &out,
                              static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  // The text was checked to be valid UTF-8 before; an error here means memory ran out.
  if (n < 0) throw TokenizerError(std::string("NFC normalization failed (") + utf8proc_errmsg(n) + ")");
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(out, &std::free);
  return std::string(reinterpret_cast<const char*>(out), static_cast<std::size_t>(n));
}

}  // namespace attn
