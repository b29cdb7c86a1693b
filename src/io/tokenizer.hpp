// A Hugging Face tokenizer.json of model type BPE, encoding text to the ids Hugging Face's
// `tokenizers` library gives (docs/tokenizers.md): added tokens split out of the raw text, the
// normalizer, the pre-tokenizer, BPE, then the post-processor. And back: ids to text.
//
// What is read and what is refused (by name): docs/tokenizers.md, "What attn reads".
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/bpe.hpp"
#include "io/tokenizer_error.hpp"

namespace attn {

// Largest tokenizer.json read (Llama 3's is 9 MB, Qwen's 11 MB); a bigger file is refused before
// it is read.
constexpr std::uintmax_t kTokenizerJsonMaxBytes = 64ull << 20;

// A post-processor's template for one sequence: tokens before the text, then tokens after it.
// (TemplateProcessing's "single"; ByteLevel's post-processor adds nothing, so both lists are empty.)
struct PostTemplate {
  std::vector<TokenId> before, after;
};

class Tokenizer {
 public:
  // Reads and checks `path` (size limit first). Throws TokenizerError naming the file.
  static Tokenizer load(const std::string& path);
  // The same from the file's bytes; `what` names the file in messages.
  static Tokenizer parse(const std::string& json, const std::string& what);

  // The ids of `text` (valid UTF-8), without the post-processor (HF's add_special_tokens=False).
  // Throws TooMany as soon as more than `max_tokens` ids are made, before the rest of the text is
  // tokenized (the caller words the message: it knows the context length and the option).
  struct TooMany {
    std::size_t bytes_done;  // how far into the text it got
  };
  std::vector<TokenId> encode(std::string_view text, std::size_t max_tokens = std::numeric_limits<std::size_t>::max()) const;

  const PostTemplate& post_template() const;
  bool has_template() const;  // the post-processor is (or holds) a TemplateProcessing

  // The vocabulary string of `id` ("Ġbank"), or nullopt when no token has that id.
  std::optional<std::string> token(TokenId id) const;
  std::optional<TokenId> id_of(const std::string& token) const;  // vocabulary or added token
  // The text of `id` for display: the bytes it stands for as text, a newline as \n, a tab as \t,
  // other control bytes and bytes of an unfinished UTF-8 character as <0xNN>.
  std::string readable(TokenId id) const;
  // The text of all `ids` (HF's decode with skip_special_tokens=False): invalid UTF-8 that a cut
  // through a character leaves becomes U+FFFD, as Rust's from_utf8_lossy does.
  std::string decode(const std::vector<TokenId>& ids) const;
  std::size_t vocab_size() const;  // model tokens + added tokens
  std::size_t added_count() const;

  struct Parts;  // the loaded pieces (tokenizer.cpp)
  explicit Tokenizer(std::shared_ptr<const Parts> parts) : parts_(std::move(parts)) {}

 private:
  std::string bytes_of(TokenId id) const;
  std::shared_ptr<const Parts> parts_;
};

// The first byte offset where `text` is not valid UTF-8, or nullopt when it all is.
std::optional<std::size_t> invalid_utf8_at(std::string_view text);

}  // namespace attn
