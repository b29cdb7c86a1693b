// What one lesson takes on the command line: `attn lesson NAME --help`, and the option words of
// `attn completion bash`. Both are made from the registry (the lesson's OptionBits and its own
// options), the one table of shared options and the articles' names, so they list exactly what
// `attn lesson NAME` accepts.
#pragma once

#include <string>
#include <vector>

#include "lesson_kit/registry.hpp"

namespace attn::cli {

struct LessonFlag {
  std::string flag;   // "--seq-len"
  std::string value;  // "INT", "DIR", "text|json"; "" for a flag without a value
  std::string help;   // for an own option: with its range and default
  std::string group;  // the heading it is listed under
};

// Every option `lesson` accepts, group by group: its own options first, then the shared ones it
// reads (Sizes and model, Inputs, Outputs, Display), then the articles' names that mean something
// in it (their help says which of its options each sets).
std::vector<LessonFlag> lesson_flags(const LessonEntry& lesson);

// The text of `attn lesson NAME --help`: title, summary, article, page, the options of
// lesson_flags under their headings, and the presets that configure it.
std::string lesson_help(const LessonEntry& lesson);

}  // namespace attn::cli
