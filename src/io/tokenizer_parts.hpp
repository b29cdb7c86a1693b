// What a loaded tokenizer.json is made of (Tokenizer::Parts): private to tokenizer.cpp, which runs
// it, and tokenizer_json.cpp, which builds it.
#pragma once

#include <mutex>
#include <optional>
#include <string_view>
#include <string>
#include <unordered_map>
#include <vector>

#include "io/added_tokens.hpp"
#include "io/bpe.hpp"
#include "io/normalizer.hpp"
#include "io/pre_tokenizer.hpp"
#include "io/tokenizer.hpp"

namespace attn {

struct Tokenizer::Parts {
  explicit Parts(Bpe model) : bpe(std::move(model)) {}
  Bpe bpe;
  // The model's vocabulary by id (nullopt where no token has the id), viewing bpe's strings, which
  // stay where they are once Parts is built.
  std::vector<std::optional<std::string_view>> id_to_token;
  std::vector<AddedToken> added;                // as listed in the file
  std::unordered_map<TokenId, std::size_t> added_by_id;  // -> index in `added`
  AddedTokenMatcher raw_matcher;         // added tokens with "normalized": false
  AddedTokenMatcher normalized_matcher;  // the others
  Normalizer normalizer;
  PreTokenizer pre_tokenizer;
  bool byte_level_decoder = false;  // decoder ByteLevel (else none: tokens joined by spaces)
  PostTemplate post;
  bool has_template = false;

  // Pre-token -> ids: a text repeats its words, and BPE on a word costs more than a lookup.
  static constexpr std::size_t kCacheMax = 100000;
  mutable std::unordered_map<std::string, std::vector<TokenId>> cache;
  mutable std::mutex cache_mutex;
};

}  // namespace attn
