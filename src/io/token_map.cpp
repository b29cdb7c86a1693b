// TokenMap (token_map.hpp): linear probing in a power-of-two table kept at most half full.
#include "io/token_map.hpp"

#include <functional>

namespace attn {

std::uint32_t TokenMap::hash_of(std::string_view key) {
  const std::size_t h = std::hash<std::string_view>{}(key);
  return static_cast<std::uint32_t>(h ^ (h >> 32));
}

void TokenMap::reserve(std::size_t tokens) {
  entries_.reserve(tokens);
  arena_.reserve(tokens * 8);
  std::size_t want = 16;
  while (want < 2 * tokens) want *= 2;
  if (want > slots_.size()) {
    slots_.assign(want, 0);
    for (std::size_t i = 0; i < entries_.size(); ++i) slots_[find_slot(key(i), entries_[i].hash)] = slot_value(entries_[i].hash, i);
  }
}

void TokenMap::grow() { reserve(std::max<std::size_t>(16, entries_.size() * 2)); }

std::size_t TokenMap::find_slot(std::string_view k, std::uint32_t hash) const {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t s = hash & mask;; s = (s + 1) & mask) {
    const std::uint64_t v = slots_[s];
    if (v == 0) return s;
    if (static_cast<std::uint32_t>(v >> 32) == hash && key(static_cast<std::uint32_t>(v) - 1) == k) return s;
  }
}

bool TokenMap::insert(std::string_view k, Id id) {
  if (2 * (entries_.size() + 1) > slots_.size()) grow();
  const std::uint32_t hash = hash_of(k);
  const std::size_t s = find_slot(k, hash);
  if (slots_[s] != 0) return false;
  entries_.push_back({static_cast<std::uint32_t>(arena_.size()), static_cast<std::uint32_t>(k.size()), id, hash});
  arena_.append(k);
  slots_[s] = slot_value(hash, entries_.size() - 1);
  return true;
}

std::optional<TokenMap::Id> TokenMap::find(std::string_view k) const {
  if (slots_.empty()) return std::nullopt;
  const std::uint64_t v = slots_[find_slot(k, hash_of(k))];
  if (v == 0) return std::nullopt;
  return entries_[static_cast<std::uint32_t>(v) - 1].id;
}

}  // namespace attn
