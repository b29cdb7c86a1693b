// The normalizer of a tokenizer.json, run on the text between added tokens before the
// pre-tokenizer. attn runs NFC (Qwen's; through utf8proc) and a Sequence of NFC, and refuses the
// others by name at load time.
#pragma once

#include <string>
#include <string_view>

namespace attn {

class Normalizer {
 public:
  Normalizer() = default;  // "normalizer": null, the text as it is
  static Normalizer nfc();
  std::string apply(std::string_view text) const;
  bool active() const { return nfc_; }

 private:
  bool nfc_ = false;
};

}  // namespace attn
