// The bash completion script, written with every word it offers spelled out (no call back into
// attn while the learner types, so completing costs nothing).
#include "cli/completion.hpp"

#include <map>
#include <stdexcept>

#include "cli/lesson_help.hpp"
#include "lesson_kit/presets.hpp"
#include "lesson_kit/registry.hpp"

namespace attn::cli {
namespace {

// Words go into the script inside single quotes; none of attn's names has one, and a name that
// did would break the script, so it is a programming error.
std::string quoted(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (w.find_first_of("'\\\n") != std::string::npos) throw std::logic_error("completion word with a quote: " + w);
    out += (out.empty() ? "" : " ") + w;
  }
  return "'" + out + "'";
}

std::vector<std::string> split_choices(const std::string& value) {  // "text|json" -> text, json
  std::vector<std::string> words;
  for (std::size_t start = 0;;) {
    const auto bar = value.find('|', start);
    words.push_back(value.substr(start, bar - start));
    if (bar == std::string::npos) return words;
    start = bar + 1;
  }
}

std::vector<std::string> lesson_names() {
  std::vector<std::string> names;
  for (const auto& l : lessons()) names.push_back(l.name);
  return names;
}

std::vector<std::string> presets_of(const std::string& lesson) {
  std::vector<std::string> names;
  for (const auto& p : presets())
    for (const char* l : p.lessons)
      if (lesson.empty() || lesson == l) {
        names.push_back(p.name);
        break;
      }
  return names;
}

}  // namespace

std::string bash_completion(const std::vector<CompletionCommand>& commands, const std::vector<std::string>& exercises) {
  std::string s =
      "# bash completion for attn, printed by `attn completion bash`: the commands, lessons, presets,\n"
      "# exercises and options of the attn that printed it. Load it into this shell with\n"
      "#   source <(attn completion bash)\n"
      "# or for every new shell with\n"
      "#   attn completion bash > ~/.local/share/bash-completion/completions/attn\n"
      "# and make it again after updating attn (docs/command-line.md).\n\n";

  // The options of `attn lesson NAME`, lesson by lesson; any other word gets every lesson option.
  s += "_attn_lesson_options() {\n  case $1 in\n";
  for (const auto& l : lessons()) {
    std::vector<std::string> flags;
    for (const auto& f : lesson_flags(l)) flags.push_back(f.flag);
    flags.push_back("--help");
    s += "    " + std::string(l.name) + ") echo " + quoted(flags) + " ;;\n";
  }
  std::map<std::string, std::string> value_of;  // every option with a value, of every command
  std::vector<std::string> names;
  for (const auto& c : commands) {
    names.push_back(c.name);
    for (const auto& o : c.options)
      if (!o.value.empty()) value_of.emplace(o.flag, o.value);
  }
  for (const auto& c : commands)
    if (c.name == "lesson") {
      std::vector<std::string> all;
      for (const auto& o : c.options) all.push_back(o.flag);
      s += "    *) echo " + quoted(all) + " ;;\n";
    }
  s += "  esac\n}\n\n";

  s += "_attn_presets() {\n  case $1 in\n";
  for (const auto& l : lessons())
    if (const auto p = presets_of(l.name); !p.empty()) s += "    " + std::string(l.name) + ") echo " + quoted(p) + " ;;\n";
  s += "    *) echo " + quoted(presets_of("")) + " ;;\n  esac\n}\n\n";

  std::vector<std::string> top = names;  // the first word: a command, or attn's own options
  top.insert(top.end(), {"--help", "--version"});
  std::vector<std::string> valued;
  for (const auto& [flag, value] : value_of) valued.push_back(flag);
  s += "_attn() {\n"
       "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
       "  local command= name= word i\n"
       "  # The words before the cursor: the command, then its first plain word (a lesson or an\n"
       "  # exercise). The value after an option that takes one is skipped.\n"
       "  for (( i = 1; i < COMP_CWORD; i++ )); do\n"
       "    word=${COMP_WORDS[i]}\n"
       "    case $word in\n"
       "      -*=*) ;;\n"
       "      -*) case \" \"" + quoted(valued) + "\" \" in *\" $word \"*) (( i++ )) ;; esac ;;\n"
       "      *) if [[ -z $command ]]; then command=$word; elif [[ -z $name ]]; then name=$word; fi ;;\n"
       "    esac\n"
       "  done\n"
       "  local words=\n"
       "  # The value of an option.\n"
       "  case $prev in\n";
  std::map<std::string, std::vector<std::string>> by_kind;  // how a value completes -> its options
  for (const auto& [flag, value] : value_of) {
    if (flag == "--preset") continue;
    if (flag == "--lesson") continue;
    if (value == "DIR") by_kind["dirs"].push_back(flag);
    else if (value == "FILE") by_kind["files"].push_back(flag);
    else if (value.find('|') != std::string::npos) s += "    " + flag + ") words=" + quoted(split_choices(value)) + " ;;\n";
    else by_kind["none"].push_back(flag);  // a number, words, a list: nothing to offer
  }
  auto alternatives = [](const std::vector<std::string>& flags) {
    std::string out;
    for (const auto& f : flags) out += (out.empty() ? "" : "|") + f;
    return out;
  };
  if (value_of.count("--preset")) s += "    --preset) words=$(_attn_presets \"$name\") ;;\n";
  if (value_of.count("--lesson")) s += "    --lesson) words=" + quoted(lesson_names()) + " ;;\n";
  if (by_kind.count("dirs"))
    s += "    " + alternatives(by_kind["dirs"]) +
         ") compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -d -- \"$cur\") ); return ;;\n";
  if (by_kind.count("files"))
    s += "    " + alternatives(by_kind["files"]) +
         ") compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- \"$cur\") ); return ;;\n";
  if (by_kind.count("none")) s += "    " + alternatives(by_kind["none"]) + ") COMPREPLY=(); return ;;\n";
  s += "  esac\n"
       "  if [[ -z $words ]]; then\n"
       "    case $command in\n"
       "      '') words=" + quoted(top) + " ;;\n";
  for (const auto& c : commands) {
    std::vector<std::string> flags;
    for (const auto& o : c.options) flags.push_back(o.flag);
    std::string positional;  // what the command's first plain word is
    if (c.name == "lesson") positional = quoted(lesson_names());
    else if (c.name == "check" || c.name == "hint" || c.name == "reset" || c.name == "watch") positional = quoted(exercises);
    else if (c.name == "completion") positional = "'bash zsh'";
    const std::string options = c.name == "lesson" ? "$(_attn_lesson_options \"$name\")" : quoted(flags);
    if (c.name == "model") {  // attn model DIR: the first plain word is a folder
      s += "      model) if [[ -z $name && $cur != -* ]]; then compopt -o filenames 2>/dev/null; "
           "COMPREPLY=( $(compgen -d -- \"$cur\") ); return; else words=" + options + "; fi ;;\n";
    } else if (positional.empty()) {
      s += "      " + c.name + ") words=" + options + " ;;\n";
    } else {
      s += "      " + c.name + ") if [[ -z $name && $cur != -* ]]; then words=" + positional + "; else words=" + options +
           "; fi ;;\n";
    }
  }
  s += "    esac\n"
       "  fi\n"
       "  COMPREPLY=( $(compgen -W \"$words\" -- \"$cur\") )\n"
       "}\n"
       "complete -F _attn attn ./build/attn\n";
  return s;
}

std::string zsh_completion(const std::string& bash_script) {
  // zsh runs bash completion functions through its bashcompinit layer, which provides COMP_WORDS,
  // COMP_CWORD, compgen and complete, and calls the function with 0-based arrays as bash has
  // them. So one script serves both shells and cannot drift apart. bashcompinit needs compinit.
  return "# zsh completion for attn, printed by `attn completion zsh`: the bash script below, run\n"
         "# through zsh's bashcompinit. Load it into this shell with\n"
         "#   source <(attn completion zsh)\n"
         "# or for every new shell, after compinit in ~/.zshrc, with\n"
         "#   attn completion zsh > ~/.local/share/attn/attn.zsh && echo 'source ~/.local/share/attn/attn.zsh' >> ~/.zshrc\n"
         "(( $+functions[compdef] )) || { autoload -U compinit && compinit; }\n"
         "autoload -U +X bashcompinit && bashcompinit\n\n" +
         bash_script;
}

}  // namespace attn::cli
