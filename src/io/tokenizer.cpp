// Encoding and decoding with a loaded tokenizer.json (tokenizer.hpp); loading is tokenizer_json.cpp.
#include "io/tokenizer.hpp"

#include <cstdio>

#include "io/byte_level.hpp"
#include "io/tokenizer_parts.hpp"
#include "io/utf8.hpp"

namespace attn {

namespace {

std::string hex_byte(unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "<0x%02X>", c);
  return buf;
}

}  // namespace

std::optional<std::size_t> invalid_utf8_at(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_length(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

// Added tokens without normalization first, in the raw text; then, between them, the normalizer
// and the normalized added tokens; then the pre-tokenizer and BPE on each pre-token.
std::vector<TokenId> Tokenizer::encode(std::string_view text, std::size_t max_tokens) const {
  const Parts& p = *parts_;
  std::vector<TokenId> ids;
  auto check = [&](std::size_t bytes_done) {
    if (ids.size() > max_tokens) throw TooMany{bytes_done};
  };
  for (const TextPiece& raw : p.raw_matcher.split(text)) {
    if (raw.token) {
      ids.push_back(*raw.token);
      check(raw.end);
      continue;
    }
    const std::string normalized = p.normalizer.apply(text.substr(raw.begin, raw.end - raw.begin));
    for (const TextPiece& piece : p.normalized_matcher.split(normalized)) {
      if (piece.token) {
        ids.push_back(*piece.token);
        continue;
      }
      for (const std::string& word : p.pre_tokenizer.split(std::string_view(normalized).substr(piece.begin, piece.end - piece.begin))) {
        {
          std::lock_guard<std::mutex> lock(p.cache_mutex);
          if (const auto hit = p.cache.find(word); hit != p.cache.end()) {
            ids.insert(ids.end(), hit->second.begin(), hit->second.end());
            if (ids.size() > max_tokens) throw TooMany{raw.begin};
            continue;
          }
        }
        const std::size_t before = ids.size();
        p.bpe.encode_word(word, ids);
        {
          std::lock_guard<std::mutex> lock(p.cache_mutex);
          if (p.cache.size() < Parts::kCacheMax) p.cache.emplace(word, std::vector<TokenId>(ids.begin() + before, ids.end()));
        }
        check(raw.begin);  // word by word: the rest of a text past the limit is never encoded
      }
      check(raw.begin);
    }
    check(raw.end);
  }
  return ids;
}

const PostTemplate& Tokenizer::post_template() const { return parts_->post; }
bool Tokenizer::has_template() const { return parts_->has_template; }

std::optional<std::string> Tokenizer::token(TokenId id) const {
  const Parts& p = *parts_;
  if (const auto a = p.added_by_id.find(id); a != p.added_by_id.end()) return p.added[a->second].content;
  if (id < p.id_to_token.size() && p.id_to_token[id]) return std::string(*p.id_to_token[id]);
  return std::nullopt;
}

std::optional<TokenId> Tokenizer::id_of(const std::string& token) const {
  for (const AddedToken& a : parts_->added)
    if (a.content == token) return a.id;
  return parts_->bpe.id_of(token);
}

// The bytes a token stands for: byte-level characters decoded, or the token's text as it is
// (an added token, or a character the table lacks), as Hugging Face's ByteLevel decoder does.
std::string Tokenizer::bytes_of(TokenId id) const {
  const std::optional<std::string> t = token(id);
  if (!t) return std::string();
  std::string bytes;
  if (parts_->byte_level_decoder && byte_level::decode(*t, bytes)) return bytes;
  return *t;
}

std::string Tokenizer::readable(TokenId id) const {
  const std::string bytes = bytes_of(id);
  std::string out;
  for (std::size_t i = 0; i < bytes.size();) {
    const std::size_t n = utf8_length(bytes, i);
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (n == 0) {
      out += hex_byte(c);  // a piece of a character another token finishes
      i += 1;
    } else if (c == '\n' || c == '\t' || c == '\r') {
      out += c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\r";
      i += 1;
    } else if (c < 0x20 || c == 0x7F || (c == 0xC2 && n == 2 && static_cast<unsigned char>(bytes[i + 1]) < 0xA0)) {
      for (std::size_t k = 0; k < n; ++k) out += hex_byte(static_cast<unsigned char>(bytes[i + k]));  // controls
      i += n;
    } else {
      out.append(bytes, i, n);
      i += n;
    }
  }
  return out;
}

std::string Tokenizer::decode(const std::vector<TokenId>& ids) const {
  std::string bytes;
  for (std::size_t k = 0; k < ids.size(); ++k) {
    if (!parts_->byte_level_decoder && k > 0) bytes += ' ';  // no decoder: Hugging Face joins with spaces
    bytes += bytes_of(ids[k]);
  }
  // Rust's from_utf8_lossy: each maximal invalid stretch (as its decoder steps) becomes U+FFFD.
  std::string out;
  for (std::size_t i = 0; i < bytes.size();) {
    const std::size_t n = utf8_length(bytes, i);
    if (n) {
      out.append(bytes, i, n);
      i += n;
      continue;
    }
    out += "\xEF\xBF\xBD";
    i += utf8_invalid_length(bytes, i);  // the maximal invalid stretch: E0 80 is two, E6 97 one
  }
  return out;
}

std::size_t Tokenizer::vocab_size() const { return parts_->bpe.vocab().size() + added_count(); }
std::size_t Tokenizer::added_count() const { return parts_->added.size(); }

}  // namespace attn
