// BPE merging by rank over a linked list of symbols, with a priority queue of candidate pairs
// (bpe.hpp). The order is Hugging Face's: lowest rank first, leftmost first among equal ranks;
// a queued pair whose symbols changed since it was queued is skipped when it comes up.
#include "io/bpe.hpp"

#include <cstdio>
#include <queue>

namespace attn {

namespace {

// Length of the UTF-8 character starting with byte `c` (the text was checked valid before).
std::size_t char_length(unsigned char c) {
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) return 2;
  if ((c & 0xF0) == 0xE0) return 3;
  return 4;
}

struct Candidate {
  std::uint32_t rank;
  int pos;  // the left symbol
  TokenId merged;
  // std::priority_queue pops the largest: "larger" here means the later rank, then the later position.
  bool operator<(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};

}  // namespace

Bpe::Bpe(TokenMap vocab, const std::vector<Merge>& merges, Options options)
    : vocab_(std::move(vocab)), options_(options) {
  // At most 3/4 full: probes stay short, and the table (8 MB for Llama 3) is not cleared for long.
  std::size_t size = 2;
  shift_ = 63;
  while (4 * (merges.size() + 1) > 3 * size) size *= 2, --shift_;
  slots_.assign(size, Slot{});
  // A pair listed twice keeps its last rank, as Hugging Face's map built from the list does.
  for (std::size_t r = 0; r < merges.size(); ++r) {
    const std::uint64_t key = pair_key(merges[r].left, merges[r].right);
    std::size_t i = slot_of(key);
    while (slots_[i].key != kEmpty && slots_[i].key != key) i = (i + 1) & (size - 1);
    slots_[i] = {key, static_cast<std::uint32_t>(r), merges[r].merged};
  }
}

const Bpe::Slot* Bpe::find_pair(TokenId a, TokenId b) const {
  const std::uint64_t key = pair_key(a, b);
  for (std::size_t i = slot_of(key);; i = (i + 1) & (slots_.size() - 1)) {
    if (slots_[i].key == key) return &slots_[i];
    if (slots_[i].key == kEmpty) return nullptr;
  }
}

// One symbol per character; a character outside the vocabulary becomes its <0xNN> byte tokens
// (byte_fallback), else the unk token (fused with an unk just before it under fuse_unk), else
// nothing: Hugging Face drops it silently, and so does this.
std::vector<Bpe::Symbol> Bpe::initial_symbols(std::string_view word) const {
  std::vector<Symbol> symbols;
  bool last_was_unk = false;
  auto push = [&symbols](TokenId id) {
    const int n = static_cast<int>(symbols.size());
    symbols.push_back({id, n - 1, -1, true});
    if (n > 0) symbols[n - 1].next = n;
  };
  for (std::size_t i = 0; i < word.size();) {
    const std::size_t len = std::min(char_length(static_cast<unsigned char>(word[i])), word.size() - i);
    const std::string_view ch = word.substr(i, len);
    i += len;
    if (const auto id = vocab_.find(ch)) {
      push(*id);
      last_was_unk = false;
      continue;
    }
    if (options_.byte_fallback) {
      std::vector<TokenId> bytes;
      for (unsigned char b : ch) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        if (const auto id = vocab_.find(name)) bytes.push_back(*id);
      }
      if (bytes.size() == ch.size()) {
        for (TokenId id : bytes) push(id);
        last_was_unk = false;
        continue;
      }
    }
    if (options_.unk) {
      if (!(options_.fuse_unk && last_was_unk)) push(*options_.unk);
      last_was_unk = true;
    }
  }
  return symbols;
}

void Bpe::merge_all(std::vector<Symbol>& symbols) const {
  std::priority_queue<Candidate> queue;
  auto consider = [&](int left) {
    const int right = symbols[left].next;
    if (right < 0) return;
    if (const Slot* found = find_pair(symbols[left].id, symbols[right].id)) queue.push({found->rank, left, found->merged});
  };
  for (int i = 0; i + 1 < static_cast<int>(symbols.size()); ++i) consider(i);
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.pos];
    if (!left.alive || left.next < 0) continue;
    // Still the pair it was queued for? Either symbol may have been merged with another since.
    const Slot* now = find_pair(left.id, symbols[left.next].id);
    if (!now || now->merged != top.merged || now->rank != top.rank) continue;
    Symbol& right = symbols[left.next];
    left.id = top.merged;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.pos;
    if (left.prev >= 0) consider(left.prev);
    consider(top.pos);
  }
}

void Bpe::encode_word(std::string_view word, std::vector<TokenId>& out) const {
  if (options_.ignore_merges) {
    if (const auto id = vocab_.find(word)) {
      out.push_back(*id);
      return;
    }
  }
  std::vector<Symbol> symbols = initial_symbols(word);
  merge_all(symbols);
  for (const Symbol& s : symbols)
    if (s.alive) out.push_back(s.id);
}

}  // namespace attn
