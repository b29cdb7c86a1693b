// `attn completion bash|zsh`: a completion script for this attn. The words it offers are written
// into the script when it is made, from what this attn knows: the commands and their options as
// main.cpp registered them, the lessons and each lesson's own option set (cli/lesson_help.*), the
// presets for each lesson, and the exercises in the table this attn reads. docs/completion.md.
#pragma once

#include <string>
#include <vector>

namespace attn::cli {

struct CompletionOption {
  std::string flag;   // "--seeds"
  std::string value;  // its value's name ("N", "DIR", "text|json"); "" for a flag without one
};

struct CompletionCommand {
  std::string name;                        // "verify"
  std::vector<CompletionOption> options;   // every option the command takes (for lesson: of any lesson)
};

// The script: a function _attn and `complete -F _attn attn`. Values complete by their name: DIR
// directories, FILE files, "a|b" those words, --preset the presets of the lesson on the line,
// verify --lesson the lessons; exercises after check and hint; after `lesson NAME`, the options
// NAME accepts.
std::string bash_completion(const std::vector<CompletionCommand>& commands, const std::vector<std::string>& exercises);

// `attn completion zsh`: the bash script, loaded through zsh's bashcompinit (compinit first when
// the shell has not run it), so both shells offer exactly the same words.
std::string zsh_completion(const std::string& bash_script);

}  // namespace attn::cli
