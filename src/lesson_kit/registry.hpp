// The lesson registry: every lesson registers itself from its own file (ATTN_REGISTER_LESSON at
// the end of lessons/<name>.cpp) with its name, title, summary, article, the options it reads and
// its place in the teaching order. `attn list`, "did you mean", the option checks, presets and
// `attn verify` all read the registry; nothing else lists the lessons.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "lesson_kit/options.hpp"
#include "report/stage.hpp"

namespace attn {

using LessonFn = void (*)(const LessonOptions&, report::Report&);

struct LessonEntry {
  int order;            // place in the teaching order: `attn list` sorts by it (gaps welcome)
  const char* name;     // what the learner types
  const char* title;
  const char* summary;  // one line for `attn list`
  const char* follows;  // the article section
  unsigned options;     // OptionBit mask of the shared options it reads
  LessonFn fn;          // the lesson itself; call run(), which fills declared defaults first
  std::vector<LessonOption> extra = {};        // options of its own (--theta, ...), see options.hpp
  std::vector<std::string> weight_files = {};  // --weights DIR files without .npy; {} = W_query, ...
  std::vector<std::string> state_files = {};   // --states DIR files (RNN lessons)

  // Runs the lesson with `opts`, every declared option of its own that `opts` lacks set to its
  // default, so opts.number("--theta") always answers inside the lesson.
  void run(const LessonOptions& opts, report::Report& out) const;
  // The lesson's own option with this flag, or nullptr.
  const LessonOption* find_extra(const std::string& flag) const;
};

// Every registered lesson, in teaching order.
const std::vector<LessonEntry>& lessons();

// Adds `entry` to `table` keeping it sorted by order. Throws std::logic_error when the name or
// the order key is already taken, a flag of its own is a shared flag's spelling or is declared
// twice, or another lesson declares the same flag with another type. The registry uses it on the
// global table; tests use it on their own.
void add_lesson(std::vector<LessonEntry>& table, LessonEntry entry);

// The object ATTN_REGISTER_LESSON defines: registers at start-up, and ends the program with a
// message naming both lessons when add_lesson refuses (a programming error, not a learner's).
struct LessonRegistrar {
  explicit LessonRegistrar(LessonEntry entry);
};

#define ATTN_REGISTER_LESSON_CAT2(a, b) a##b
#define ATTN_REGISTER_LESSON_CAT(a, b) ATTN_REGISTER_LESSON_CAT2(a, b)
// At namespace scope in a lesson's file: ATTN_REGISTER_LESSON({order, "name", "title", ...});
#define ATTN_REGISTER_LESSON(...) \
  static const ::attn::LessonRegistrar ATTN_REGISTER_LESSON_CAT(attn_lesson_registrar_, __LINE__)(__VA_ARGS__)

// Every option of their own that the registered lessons declare, one per flag (the first
// declaration's type, range and help; add_lesson made sure the types agree), sorted by flag.
std::vector<LessonOption> declared_lesson_options();

// The files (without .npy) a lesson reads from --weights DIR, and from --states DIR (RNN lessons).
std::vector<std::string> weight_file_names(const LessonEntry& lesson);
std::vector<std::string> state_file_names(const LessonEntry& lesson);
// The same by name (none for an unknown name but the default weight files).
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

// Throws UsageError for an option the lesson does not read: a shared one outside its OptionBit
// mask, or another lesson's own option. `given` holds flag spellings; a flag neither of these
// tables holds (an output option, src/cli/output_options.hpp) is every lesson's.
void check_options_apply(const LessonEntry& lesson, const std::set<std::string>& given);

}  // namespace attn
