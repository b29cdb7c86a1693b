// attn tokenize DIR --text "..." | --ids 1,2,3: a Hugging Face tokenizer.json at work, token by
// token (docs/tokenizers.md). main.cpp registers the options and calls run_tokenize.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "io/tokenizer.hpp"
#include "io/tokenizer_folder.hpp"

namespace attn::cli {

// Longest --text accepted, checked before the tokenizer is loaded.
constexpr std::size_t kTokenizeMaxTextBytes = std::size_t{1} << 20;

struct TokenizeOptions {
  std::string path;                 // a checkpoint folder or a tokenizer.json
  std::optional<std::string> text;  // --text
  std::optional<std::string> text_file;  // --text-file: the text from a file ('-': standard input);
                                         // the kernel caps one argument at 128 KiB, below the limit
  std::optional<std::string> ids;   // --ids 1,2,3 (decode instead)
  // --bos / --no-bos: the template's BOS as the file says, forced on, or left out.
  enum class Bos { AsTemplate, Add, Drop } bos = Bos::AsTemplate;
  bool no_special = false;  // --no-special: nothing from the post-processor (add_special_tokens=False)
  bool json = false;        // --format json
};

// The pieces attn model shares with attn tokenize (docs/tokenizers.md says what each refuses):
// "1,2,3" as ids; a text's limits (size, UTF-8) under `option`; --text-file's text.
std::vector<TokenId> parse_ids(const std::string& text);
void check_text(const std::string& text, const std::string& option);
std::string read_text_file(const std::string& path);

// o.text's tokens with what the post-processor adds (after --bos, --no-bos, --no-special), at most
// the folder's context; `added[i]` marks the post-processor's tokens.
struct EncodedPrompt {
  std::vector<TokenId> ids;
  std::vector<bool> added;
};
EncodedPrompt encode_prompt(const TokenizeOptions& o, const Tokenizer& tok, const TokenizerFolder& folder,
                            const std::string& option);

// Prints the tokens; throws UsageError (one line, exit status 2) for every refusal.
int run_tokenize(const TokenizeOptions& options, std::ostream& out);

}  // namespace attn::cli
