// Vocabulary strings -> ids, in three flat arrays (the strings end to end, one entry per token,
// an open-addressing table of hashes): loading Llama 3's file looks a token up three times per
// merge, 840,000 lookups, and a node-based std::unordered_map spent most of the load time in
// cache misses and allocations.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

class TokenMap {
 public:
  using Id = std::uint32_t;
  void reserve(std::size_t tokens);
  // Adds `key` with `id`; false (and nothing changed) when the key is there already.
  bool insert(std::string_view key, Id id);
  void set_last_id(Id id) { entries_.back().id = id; }
  std::optional<Id> find(std::string_view key) const;
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  // Entry `i` (0 <= i < size(), in insertion order): its key and id.
  std::string_view key(std::size_t i) const { return std::string_view(arena_).substr(entries_[i].offset, entries_[i].length); }
  Id id(std::size_t i) const { return entries_[i].id; }

 private:
  struct Entry {
    std::uint32_t offset, length;
    Id id;
    std::uint32_t hash;
  };
  static std::uint32_t hash_of(std::string_view key);
  static std::uint64_t slot_value(std::uint32_t hash, std::size_t index) {
    return (std::uint64_t{hash} << 32) | static_cast<std::uint32_t>(index + 1);
  }
  void grow();
  std::size_t find_slot(std::string_view key, std::uint32_t hash) const;  // its slot, or an empty one

  std::string arena_;
  std::vector<Entry> entries_;
  // (hash << 32) | (entry index + 1); 0 = empty. The hash beside the index lets a probe pass a
  // slot without reading its entry: one cache miss fewer per lookup.
  std::vector<std::uint64_t> slots_;
};

}  // namespace attn
