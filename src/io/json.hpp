// Strict JSON for the files a Hugging Face checkpoint folder holds (config.json, the safetensors
// header, model.safetensors.index.json, tokenizer.json), parsed with nlohmann/json (Debian's
// nlohmann-json3-dev; docs/architecture.md says why a library and not our own parser).
//
// nlohmann/json already refuses invalid UTF-8 inside strings, trailing bytes and malformed
// numbers. What it accepts silently and we do not: the same key twice in one object (it keeps the
// last, so two tensors of one name would shadow each other), and nesting deeper than a file of
// this kind ever needs.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace attn {

// What the JSON parser refuses: `what` names the file, the message says where (byte offset) and why.
struct JsonError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Deepest nesting accepted: tokenizer.json, the deepest of these files, uses 5 levels.
constexpr std::size_t kJsonMaxDepth = 64;

// Parses `text` as one JSON value. Throws JsonError "<what>: not valid JSON at byte N (...)",
// "<what>: key 'k' appears twice in one object (at byte N)" or "<what>: nested deeper than 64".
nlohmann::json parse_json_strict(const std::string& text, const std::string& what);

}  // namespace attn
