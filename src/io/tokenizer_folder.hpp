// Where `attn tokenize DIR` finds its files: DIR/tokenizer.json (or DIR is that file), the context
// length from DIR/config.json, and the BOS token from DIR/tokenizer_config.json. The context length
// is read here on its own, one field, until the checkpoint's config reader takes over.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace attn {

struct TokenizerFolder {
  std::string tokenizer_json;                 // the path to read
  std::optional<std::size_t> context;         // config.json: n_positions or max_position_embeddings
  std::string context_from;                   // "config.json's n_positions", for messages
  std::optional<std::string> bos_token;       // tokenizer_config.json: bos_token
};

// Throws TokenizerError: no such path, a folder without tokenizer.json (one line saying so), or a
// config.json / tokenizer_config.json that is not valid JSON or has a field of the wrong type.
TokenizerFolder find_tokenizer(const std::string& path);

}  // namespace attn
