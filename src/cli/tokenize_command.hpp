// attn tokenize DIR --text "..." | --ids 1,2,3: a Hugging Face tokenizer.json at work, token by
// token (docs/tokenizers.md). main.cpp registers the options and calls run_tokenize.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>

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

// Prints the tokens; throws UsageError (one line, exit status 2) for every refusal.
int run_tokenize(const TokenizeOptions& options, std::ostream& out);

}  // namespace attn::cli
