// The options `attn lesson` has for every lesson and that a lesson reads, in one table: one row
// per option, and the row holds everything about it: its flag, the lessons that read it
// (OptionBits), its --help group, value name and line, and the parser that turns its text into
// its LessonOptions field. Everything that needs to know them reads this table and nothing else:
// the command line registers them from it (src/cli/main.cpp) and parses them with it
// (parse_lesson_options), the registry refuses those a lesson does not read and keeps a lesson's
// own options off their names (registry.cpp), `attn lesson NAME --help` groups them, and `attn
// completion bash` offers them. Adding one is a row here and a field in LessonOptions.
//
// The options of the outputs (--dump, --svg, --format, --precision, ...; no lesson reads them)
// have their own table beside the command line: src/cli/output_options.*.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "lesson_kit/options.hpp"

namespace attn {

struct LessonEntry;

// How `attn lesson NAME --help` and `attn lesson --help` group the options.
enum class OptionGroup { Sizes, Inputs, Outputs, Display };
const char* group_title(OptionGroup group);  // "Sizes and model", "Inputs", ...

// The options typed on one command line, by flag: "--seed" -> "3"; a flag without a value -> "".
using TypedOptions = std::map<std::string, std::string>;

// How the rows that name files read them: src/cli/external_io.* (lesson_kit opens no file). Each
// fills the field of its row, refusing a file the lesson cannot take before reading its data.
struct OptionFiles {
  // --input FILE into opts.input; `opts` holds the sizes parsed before it.
  std::function<void(const std::string& path, bool allow_nonfinite, LessonOptions& opts)> input;
  // --weights DIR into opts.weights (and opts.weights_dir), --states DIR into opts.states.
  std::function<void(const std::string& dir, bool allow_nonfinite, LessonOptions& opts)> weights;
  std::function<void(const std::string& dir, bool allow_nonfinite, LessonOptions& opts)> states;
};

// What a row's parser reads: its own text, and the rest of the command line where the row depends
// on it (--no-causal on --causal, --weights-layout on --weights).
struct OptionText {
  const char* flag;            // the row's flag
  const std::string& text;     // as typed; "" for a flag without a value
  const LessonEntry& lesson;   // the lesson being run
  const TypedOptions& typed;   // every option typed
  const OptionFiles& files;
  bool given(const char* other) const { return typed.count(other) != 0; }
};

struct SharedOption {
  const char* flag;   // "--seq-len"
  unsigned bits;      // the OptionBit(s) a lesson must have for it to apply; 0: every lesson
  OptionGroup group;
  // The value's name in --help ("INT", "WORDS", "DIR", "math|torch"); nullptr for a flag without
  // a value. Completion reads it too: DIR completes directories, FILE files, NAME the presets,
  // and "a|b|c" offers those words.
  const char* value;
  const char* help;   // one line for --help
  // Its text into its LessonOptions field, strictly (UsageError in the one-line form); called
  // only when the option was typed. nullptr for --preset and --values, which the preset step
  // applies after the checks (apply_preset, lesson_kit/presets.hpp).
  void (*parse)(const OptionText& in, LessonOptions& into);
};

// In the order `attn lesson --help` lists them, group by group.
const std::vector<SharedOption>& shared_options();

// The entry for `flag`, or nullptr.
const SharedOption* find_shared_option(const std::string& flag);

// True for a flag `attn lesson` has for every lesson (this table, and CLI11's --help): a lesson's
// own option must not take one of these names. (The output options' names are kept off by the
// command line, which registers them: src/cli/main.cpp.)
bool is_shared_flag(const std::string& flag);

// True when lesson options `mask` (an OptionBit mask) let a lesson read `option`.
inline bool applies(const SharedOption& option, unsigned mask) { return option.bits == 0 || (option.bits & mask) != 0; }

// Fills `opts` from the options typed for `lesson`: every row of the table that was typed, in the
// table's order, then the lesson's own options (LessonEntry::extra) and the articles' names for
// the sizes (article_names.hpp). Options that are not the lesson's (the outputs') are skipped.
// `given` receives the flags check_options_apply judges: the table's, any lesson's own, and the
// options an article's name stood for. Throws UsageError.
void parse_lesson_options(const LessonEntry& lesson, const TypedOptions& typed, const OptionFiles& files,
                          LessonOptions& opts, std::set<std::string>& given);

}  // namespace attn
