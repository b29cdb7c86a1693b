// What the tokenizer code throws when it refuses a tokenizer.json or a text: one line in attn's
// style, "<what> (<file or option>: <expected> vs <got>)", with bytes from outside escaped.
#pragma once

#include <stdexcept>
#include <string>

namespace attn {

struct TokenizerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace attn
