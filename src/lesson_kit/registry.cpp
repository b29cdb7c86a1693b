// The lesson registry: the table every lesson adds itself to at start-up (ATTN_REGISTER_LESSON),
// kept in teaching order, and what reads it: find_lesson, "did you mean", the option checks.
#include "lesson_kit/registry.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "lesson_kit/shared_options.hpp"

namespace attn {
namespace {

// Filled before main() by the lessons' registrars (a function-local static, so the order in which
// the lesson files' statics are initialised does not matter).
std::vector<LessonEntry>& table() {
  static std::vector<LessonEntry> entries;
  return entries;
}

const char* type_name(OptionType t) {
  return t == OptionType::Integer ? "integer" : t == OptionType::Real ? "real" : "integer list";
}

bool given(const LessonOptions& opts, const LessonOption& o) {
  return o.type == OptionType::IntegerList ? opts.own_lists.count(o.flag) != 0 : opts.own.count(o.flag) != 0;
}

}  // namespace

void LessonEntry::run(const LessonOptions& opts, report::Report& out) const {
  if (std::all_of(extra.begin(), extra.end(), [&](const LessonOption& o) { return given(opts, o); }))
    return fn(opts, out);  // nothing to fill in: no copy of the options (a preset's weights can be large)
  LessonOptions with_defaults = opts;
  for (const auto& o : extra) {  // emplace keeps a given value
    if (o.type == OptionType::IntegerList) with_defaults.own_lists.emplace(o.flag, std::vector<std::int64_t>{});
    else with_defaults.own.emplace(o.flag, o.fallback);
  }
  fn(with_defaults, out);
}

const LessonOption* LessonEntry::find_extra(const std::string& flag) const {
  for (const auto& o : extra)
    if (flag == o.flag) return &o;
  return nullptr;
}

void add_lesson(std::vector<LessonEntry>& entries, LessonEntry entry) {
  const std::string name = entry.name;
  for (std::size_t i = 0; i < entry.extra.size(); ++i) {
    const LessonOption& o = entry.extra[i];
    const std::string flag = o.flag;
    if (flag.size() < 3 || flag.compare(0, 2, "--") != 0)
      throw std::logic_error("lesson '" + name + "': option '" + flag + "' must start with --");
    if (is_shared_flag(flag))
      throw std::logic_error("lesson '" + name + "': " + flag + " is a shared option; read it from LessonOptions");
    for (std::size_t j = 0; j < i; ++j)
      if (flag == entry.extra[j].flag) throw std::logic_error("lesson '" + name + "' declares " + flag + " twice");
    if (!(o.lo <= o.fallback && o.fallback <= o.hi))
      throw std::logic_error("lesson '" + name + "': the default of " + flag + " is outside its range");
    if (o.type != OptionType::Real && (o.lo != static_cast<double>(static_cast<long long>(o.lo)) ||
                                          o.hi != static_cast<double>(static_cast<long long>(o.hi))))
      throw std::logic_error("lesson '" + name + "': the range of integer option " + flag + " is not whole");
  }
  for (const auto& other : entries) {
    if (name == other.name) throw std::logic_error("two lessons are named '" + name + "'");
    if (entry.order == other.order)
      throw std::logic_error("lessons '" + std::string(other.name) + "' and '" + name + "' have the same order key " +
                             std::to_string(entry.order));
    for (const auto& mine : entry.extra)
      if (const LessonOption* theirs = other.find_extra(mine.flag))
        if (theirs->type != mine.type)
          throw std::logic_error("lessons '" + std::string(other.name) + "' and '" + name + "' declare " + mine.flag +
                                 " as " + type_name(theirs->type) + " and " + type_name(mine.type));
  }
  const auto at = std::find_if(entries.begin(), entries.end(), [&](const LessonEntry& e) { return e.order > entry.order; });
  entries.insert(at, std::move(entry));
}

LessonRegistrar::LessonRegistrar(LessonEntry entry) {
  try {
    add_lesson(table(), std::move(entry));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attn: internal: cannot register a lesson: %s\n", e.what());
    std::abort();
  }
}

const std::vector<LessonEntry>& lessons() { return table(); }

std::vector<LessonOption> declared_lesson_options() {
  std::vector<LessonOption> all;
  for (const auto& l : lessons())
    for (const auto& o : l.extra)
      if (std::none_of(all.begin(), all.end(), [&](const LessonOption& a) { return std::string(a.flag) == o.flag; }))
        all.push_back(o);
  std::sort(all.begin(), all.end(), [](const LessonOption& a, const LessonOption& b) { return std::string(a.flag) < b.flag; });
  return all;
}

namespace {

std::vector<std::string> default_weight_files() {
  std::vector<std::string> names;
  for (const char* suffix : {"", "_bias"})
    for (const char* layer : {"W_query", "W_key", "W_value", "out_proj"}) names.push_back(std::string(layer) + suffix);
  return names;
}

}  // namespace

std::vector<std::string> weight_file_names(const LessonEntry& lesson) {
  return lesson.weight_files.empty() ? default_weight_files() : lesson.weight_files;
}

std::vector<std::string> state_file_names(const LessonEntry& lesson) { return lesson.state_files; }

std::vector<std::string> weight_file_names(const std::string& lesson) {
  const LessonEntry* l = find_lesson(lesson);
  return l ? weight_file_names(*l) : default_weight_files();
}

std::vector<std::string> state_file_names(const std::string& lesson) {
  const LessonEntry* l = find_lesson(lesson);
  return l ? state_file_names(*l) : std::vector<std::string>{};
}

const LessonEntry* find_lesson(const std::string& name) {
  for (const auto& l : lessons())
    if (name == l.name) return &l;
  return nullptr;
}
namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  // Damerau (optimal string alignment): "casual" -> "causal" is one transposition.
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::string closest_name(const std::string& name, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = 4;  // farther than 3 edits is not a typo
  for (const auto& candidate : candidates) {
    const std::size_t d = edit_distance(name, candidate);
    if (d < best_d) {
      best_d = d;
      best = candidate;
    }
  }
  return best;
}

std::string closest_lesson(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& l : lessons()) names.push_back(l.name);
  return closest_name(name, names);
}

void check_options_apply(const LessonEntry& lesson, const std::set<std::string>& given) {
  auto refuse = [&](const std::string& typed) {
    std::string accepted;
    for (const auto& o : shared_options())
      if (o.bits != 0 && applies(o, lesson.options)) accepted += std::string(o.flag) + ", ";
    for (const auto& o : lesson.extra) accepted += std::string(o.flag) + ", ";
    if (accepted.empty()) accepted = "the display and output options, ";
    accepted.resize(accepted.size() - 2);
    throw UsageError("lesson '" + std::string(lesson.name) + "' does not take " + typed, typed,
                     "one of " + accepted + " (attn lesson " + lesson.name + " --help)", typed);
  };
  for (const auto& opt : shared_options())
    if (given.count(opt.flag) != 0 && !applies(opt, lesson.options)) refuse(opt.flag);
  // Another lesson's own option (--theta given to causal).
  const std::vector<LessonOption> declared = declared_lesson_options();
  for (const auto& flag : given)
    if (!is_shared_flag(flag) && !lesson.find_extra(flag) &&
        std::any_of(declared.begin(), declared.end(), [&](const LessonOption& o) { return flag == o.flag; }))
      refuse(flag);
}

}  // namespace attn
