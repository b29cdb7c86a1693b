// `attn lesson NAME --help` and the option words completion offers for one lesson.
#include "cli/lesson_help.hpp"

#include <algorithm>

#include "lesson_kit/article_names.hpp"
#include "lesson_kit/presets.hpp"
#include "cli/output_options.hpp"
#include "lesson_kit/shared_options.hpp"
#include "report/text_sink.hpp"

namespace attn::cli {
namespace {

constexpr const char* kOwnGroup = "Options of this lesson";
constexpr const char* kArticleGroup = "The articles' names here (docs/names.md)";

std::vector<std::string> presets_for(const LessonEntry& lesson) {
  std::vector<std::string> names;
  for (const auto& p : presets())
    for (const char* l : p.lessons)
      if (std::string(l) == lesson.name) names.push_back(p.name);
  return names;
}

std::string own_help(const LessonOption& o) {
  const std::string range = format_option_value(o.lo) + ".." + format_option_value(o.hi);
  if (o.type == OptionType::IntegerList) return std::string(o.help) + "; comma-separated, each " + range;
  return std::string(o.help) + "; " + range + ", default " + format_option_value(o.fallback);
}

std::string join(const std::vector<std::string>& words, const std::string& sep) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : sep) + w;
  return out;
}

}  // namespace

std::vector<LessonFlag> lesson_flags(const LessonEntry& lesson) {
  std::vector<LessonFlag> flags;
  for (const auto& o : lesson.extra)
    flags.push_back({o.flag,
                     o.type == OptionType::IntegerList ? "INT,..." : o.type == OptionType::Integer ? "INT" : "REAL",
                     own_help(o), kOwnGroup});
  // The shared options it reads, group by group in the table's order. --preset and --values only
  // where a preset configures the lesson: anywhere else they have nothing to do.
  const bool has_presets = !presets_for(lesson).empty();
  for (const auto& o : lesson_command_options()) {
    if (!applies(o, lesson.options)) continue;
    const std::string flag = o.flag;
    if ((flag == "--preset" || flag == "--values") && !has_presets) continue;
    flags.push_back({flag, o.value ? o.value : "", o.help, group_title(o.group)});
  }
  // The articles' names, where they stand for something here (a lesson's own spelling, rope's
  // --d-k, is listed above with its range).
  for (const auto& a : article_names()) {
    if (lesson.find_extra(a.flag)) continue;
    try {
      const auto targets = article_name_targets(lesson, a.flag, "N");
      flags.push_back({a.flag, "INT", "the same as " + join(targets, " and "), kArticleGroup});
    } catch (const UsageError&) {
      // It means nothing in this lesson: `attn lesson NAME --d-k 4` says why.
    }
  }
  return flags;
}

std::string lesson_help(const LessonEntry& lesson) {
  const std::string name = lesson.name;
  std::string out = "attn lesson " + name + ": " + lesson.title + "\n";
  out += report::wrap(lesson.summary, 80, "  ", "  ");
  out += report::wrap(std::string("Follows: ") + lesson.follows, 80, "  ", "    ");
  out += "  Page: docs/" + name + ".md\n\nUsage: attn lesson " + name + " [OPTIONS]\n";

  const auto flags = lesson_flags(lesson);
  std::size_t width = 0;  // the flag column, as wide as its widest entry (most are far narrower)
  for (const auto& f : flags) width = std::max(width, f.flag.size() + (f.value.empty() ? 0 : 1 + f.value.size()));
  width = std::min<std::size_t>(width, 20);
  if (lesson.extra.empty()) out += "\n" + std::string(kOwnGroup) + ": none; it takes only shared options.\n";
  std::string group;
  for (const auto& f : flags) {
    if (f.group != group) {
      group = f.group;
      out += "\n" + group + ":\n";
    }
    std::string left = "  " + f.flag + (f.value.empty() ? "" : " " + f.value);
    const std::string indent(2 + width + 2, ' ');
    // A flag wider than the column gets its own line, the help below it.
    if (left.size() > 2 + width) out += left + "\n" + report::wrap(f.help, 80, indent, indent);
    else out += report::wrap(f.help, 80, left + std::string(2 + width + 2 - left.size(), ' '), indent);
  }
  const auto names = presets_for(lesson);
  if (!names.empty()) out += "\nPresets: " + join(names, ", ") + " (attn list --presets)\n";
  out += "\nEvery option of every lesson, and the size limits: attn lesson --help\n";
  return out;
}

}  // namespace attn::cli
