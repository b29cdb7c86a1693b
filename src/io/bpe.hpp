// Byte-pair encoding, the model of a Hugging Face tokenizer.json of type "BPE": a word (one
// pre-token) starts as its characters, and the pair with the lowest merge rank is merged, again
// and again, until no adjacent pair has a merge. docs/tokenizers.md walks through an example.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/token_map.hpp"

namespace attn {

using TokenId = std::uint32_t;

class Bpe {
 public:
  // `merges` are pairs of ids in rank order (rank = index); each merged string must be in `vocab`
  // (the loader checks and names the merge otherwise).
  struct Merge {
    TokenId left, right, merged;
  };
  struct Options {
    bool ignore_merges = false;  // a word that is itself in the vocabulary is one token (Llama 3)
    bool byte_fallback = false;  // a character outside the vocabulary becomes <0xNN> tokens
    bool fuse_unk = false;       // consecutive unknown characters become one unk token
    std::optional<TokenId> unk;  // the unk token, when the file names one
  };

  Bpe(TokenMap vocab, const std::vector<Merge>& merges, Options options);

  // Appends the ids of one pre-token (already byte-level mapped when the tokenizer is byte-level).
  void encode_word(std::string_view word, std::vector<TokenId>& out) const;

  std::optional<TokenId> id_of(std::string_view token) const { return vocab_.find(token); }
  const TokenMap& vocab() const { return vocab_; }

 private:
  struct Symbol {
    TokenId id;
    int prev, next;  // neighbours in the word, -1 at the ends; a merged-away symbol has id unused
    bool alive;
  };
  std::vector<Symbol> initial_symbols(std::string_view word) const;
  void merge_all(std::vector<Symbol>& symbols) const;
  static std::uint64_t pair_key(TokenId a, TokenId b) { return (std::uint64_t{a} << 32) | b; }

  // Pair -> (rank, merged id), open addressing with linear probing: Llama 3's 280,147 merges in
  // one array instead of as many allocated nodes (loading time is most of attn tokenize's time).
  struct Slot {
    std::uint64_t key = kEmpty;
    std::uint32_t rank = 0;
    TokenId merged = 0;
  };
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};  // ids stay below 2^26: never a pair
  const Slot* find_pair(TokenId a, TokenId b) const;
  std::size_t slot_of(std::uint64_t key) const { return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_); }

  TokenMap vocab_;
  std::vector<Slot> slots_;
  unsigned shift_ = 63;
  Options options_;
};

}  // namespace attn
