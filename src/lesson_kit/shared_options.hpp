// The options `attn lesson` has for every lesson, in one table. Everything that needs to know
// them reads this table and nothing else: the command line registers them from it (src/cli/main.cpp),
// the registry refuses those a lesson does not read and keeps a lesson's own options off their
// names (registry.cpp), `attn lesson NAME --help` groups them, and `attn completion bash` offers
// them. Adding a shared option is one line here (and the code that reads its value).
#pragma once

#include <string>
#include <vector>

namespace attn {

// How `attn lesson NAME --help` and `attn lesson --help` group the options.
enum class OptionGroup { Sizes, Inputs, Outputs, Display };
const char* group_title(OptionGroup group);  // "Sizes and model", "Inputs", ...

struct SharedOption {
  const char* flag;   // "--seq-len"
  unsigned bits;      // the OptionBit(s) a lesson must have for it to apply; 0: every lesson
  OptionGroup group;
  // The value's name in --help ("INT", "WORDS", "DIR", "text|json"); nullptr for a flag without
  // a value. Completion reads it too: DIR completes directories, FILE files, NAME the presets,
  // and "a|b|c" offers those words.
  const char* value;
  const char* help;   // one line for --help
};

// In the order `attn lesson --help` lists them, group by group.
const std::vector<SharedOption>& shared_options();

// The entry for `flag`, or nullptr.
const SharedOption* find_shared_option(const std::string& flag);

// True for a flag `attn lesson` has for every lesson (this table, and CLI11's --help): a lesson's
// own option must not take one of these names.
bool is_shared_flag(const std::string& flag);

// True when lesson options `mask` (an OptionBit mask) let a lesson read `option`.
inline bool applies(const SharedOption& option, unsigned mask) { return option.bits == 0 || (option.bits & mask) != 0; }

}  // namespace attn
