// The machine-readable description of a lesson run: the lesson, the command, the setting, the
// token labels, and for each stage its index, title, equation, tensors and checks. `--dump DIR`
// writes it as manifest.json beside one .npy file per tensor; `--format json` prints it with the
// values inline; with --shapes-only both carry names and shapes only.
#pragma once

#include <string>
#include <vector>

#include "report/stage.hpp"

namespace attn::report {

// The stable file name of a tensor in a dump: "s07_attn_weights.npy" (stage 7). Characters
// other than letters, digits and '_' become '_', runs of them collapse, and a name that occurs
// twice in one stage gets "_2", "_3", ....
std::string tensor_file_name(const Stage& stage, std::size_t item_index);

// --format json writes a tensor's values only up to this many (PyTorch's print threshold: past
// it, print summarises too); a larger one gets a summary with this many values from each end.
inline constexpr std::size_t kJsonInlineValues = 1000;
inline constexpr std::size_t kJsonEdgeItems = 3;

// The schema: "format" names it and "version" counts its changes (docs/interop.md, "The manifest's
// schema", lists every field and what each version changed). Readers check "version".
inline constexpr int kManifestVersion = 3;

// Where the manifest says a tensor's values are: in a .npy file beside it ("file", --dump), inline
// ("values" or "summary", --format json), or nowhere (--shapes-only: the run kept only names and
// shapes, Report::keep_values).
enum class ValueMode { Files, Inline, None };

// JSON text. Inline: each tensor carries "values" as nested lists (non-finite values as the strings
// "nan", "inf", "-inf", which numpy.array(..., dtype=float) reads back) when it has at most
// `inline_limit` values, else a "summary"; a top-level "values" object says which. Files: each
// tensor names its "file". None: names and shapes only. Strings that are not UTF-8 are repaired
// (json_string). A run trimmed by --stage (Header::shown) also has
// "stage_selection": {"option": "5-7", "stages": [5, 6, 7], "of": 14}.
std::string manifest_json(const Header& header, const std::string& command, const std::deque<Stage>& stages,
                          ValueMode mode, std::size_t inline_limit = static_cast<std::size_t>(-1));
// The same with `inline_values` true for ValueMode::Inline, false for ValueMode::Files.
inline std::string manifest_json(const Header& header, const std::string& command, const std::deque<Stage>& stages,
                                 bool inline_values, std::size_t inline_limit = static_cast<std::size_t>(-1)) {
  return manifest_json(header, command, stages, inline_values ? ValueMode::Inline : ValueMode::Files, inline_limit);
}

// A command line as one line a POSIX shell (bash, zsh, dash) reads back into the same words: a
// word of safe characters as it is, any other in single quotes, and a word holding a control
// character or a byte that is not UTF-8 as $'...' with \xNN escapes (bash, zsh and ksh read those;
// the JSON then stays ASCII and the bytes survive).
std::string shell_command(const std::vector<std::string>& words);

// One entry of the header's setting line read as a name and a value: "seed 789" is seed = 789,
// "source words 6" is source_words = 6, "weights from w (torch layout (out, in))" is weights = "w"
// with the note "torch layout (out, in)". The value starts at the first word that is a number, a
// list ("[3, 2]", "(2, 8)"), True or False, or follows "from" or "in" (which the name drops); failing
// those, it is the last word ("preset llama"). The name's spaces and dashes become '_'.
struct SettingEntry {
  std::string name;
  std::string value;  // as written
  std::string note;   // the trailing "(...)" of the value, or ""
};
SettingEntry parse_setting(const std::string& item);

// A string as a JSON string literal, quotes included.
std::string json_string(const std::string& s);

}  // namespace attn::report
