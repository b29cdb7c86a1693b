// The table of lessons, in teaching order. `attn list`, "did you mean" and option checks
// all read it; a new lesson is one row here and one file beside this one.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "lesson_kit/options.hpp"
#include "report/stage.hpp"

namespace attn {

using LessonFn = void (*)(const LessonOptions&, report::Report&);

struct LessonEntry {
  const char* name;     // what the learner types
  const char* title;
  const char* summary;  // one line for `attn list`
  const char* follows;  // the article section
  unsigned options;     // OptionBit mask of what it reads
  LessonFn run;
};

const std::vector<LessonEntry>& lessons();

// The files (without .npy) a lesson reads from --weights DIR, and from --states DIR (RNN lessons).
std::vector<std::string> weight_file_names(const std::string& lesson);
std::vector<std::string> state_file_names(const std::string& lesson);

// nullptr when no lesson has that name.
const LessonEntry* find_lesson(const std::string& name);

// The candidate nearest to `name` within 3 edits (a swap of two neighbours counts as one, so
// "casual" is 1 from "causal"), or "" when none is that close: the "did you mean" of lessons,
// exercises and presets.
std::string closest_name(const std::string& name, const std::vector<std::string>& candidates);

// The nearest lesson name, or "".
std::string closest_lesson(const std::string& name);

// Throws UsageError for an option the lesson does not read. `given` holds flag spellings.
void check_options_apply(const LessonEntry& lesson, const std::set<std::string>& given);

// Each lesson's entry point (one file each).
void lesson_bottleneck(const LessonOptions& opts, report::Report& out);
void lesson_bahdanau(const LessonOptions& opts, report::Report& out);
void lesson_luong(const LessonOptions& opts, report::Report& out);
void lesson_self_attention(const LessonOptions& opts, report::Report& out);
void lesson_causal(const LessonOptions& opts, report::Report& out);
void lesson_heads(const LessonOptions& opts, report::Report& out);
void lesson_scaling(const LessonOptions& opts, report::Report& out);

}  // namespace attn
