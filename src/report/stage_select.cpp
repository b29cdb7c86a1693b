// --stage SEL: parsing the picks, and finding them among a finished lesson's stages.
#include "report/stage_select.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace attn::report {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Words separated by single spaces, so that "causal  mask" finds "Causal mask".
std::string squeeze(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// A part as typed, shortened and without control characters, for a message.
std::string quoted(const std::string& text) {
  std::string out;
  for (const char c : text.substr(0, 40)) out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
  return "'" + out + (text.size() > 40 ? "...'" : "'");
}

bool digits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

// A stage number; anything past any lesson's stage count saturates (it is refused as out of range
// once the count is known, with the number as typed).
std::size_t number(const std::string& s) {
  std::size_t v = 0;
  for (char c : s) v = std::min<std::size_t>(v * 10 + static_cast<std::size_t>(c - '0'), 1000000);
  return v;
}

constexpr const char* kForms = "a stage number such as 5, a range such as 5-7, words of a title, or a list such as 2,5-7";

}  // namespace

std::optional<StageSelection> parse_stage_selection(const std::string& text, StageSelectionProblem& problem) {
  StageSelection sel;
  sel.text = text;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string raw = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::string part = squeeze(raw);
    if (part.empty()) {
      problem = {text.find_first_not_of(" \t") == std::string::npos ? "--stage needs a stage to show"
                                                                    : "--stage has an empty entry between commas",
                 kForms, quoted(text)};
      return std::nullopt;
    }
    // Numbers and dashes only (spaces aside): a number or a range, or a mistake in one.
    std::string compact;
    for (char c : part)
      if (c != ' ') compact += c;
    if (compact.find_first_not_of("0123456789-") == std::string::npos) {
      const std::size_t dash = compact.find('-');
      const std::string lo = compact.substr(0, dash), hi = dash == std::string::npos ? lo : compact.substr(dash + 1);
      if (!digits(lo) || !digits(hi)) {
        problem = {"--stage " + quoted(part) + " is not a stage number or a range", kForms, quoted(part)};
        return std::nullopt;
      }
      StagePick pick{number(lo), number(hi), "", part};
      if (pick.first == 0 || pick.last == 0) {
        problem = {"--stage counts stages from 1, as the [n/N] headings do", "a stage number from 1", quoted(part)};
        return std::nullopt;
      }
      if (pick.first > pick.last) {
        problem = {"--stage range " + quoted(part) + " runs backwards", "a range from low to high, such as 5-7",
                   quoted(part)};
        return std::nullopt;
      }
      sel.picks.push_back(pick);
    } else {
      sel.picks.push_back({0, 0, lower(part), part});
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return sel;
}

std::vector<std::size_t> resolve_stage_selection(const StageSelection& selection, const std::deque<Stage>& stages,
                                                 const std::string& lesson, StageSelectionProblem& problem) {
  const std::size_t total = stages.size();
  std::set<std::size_t> chosen;
  for (const StagePick& pick : selection.picks) {
    if (pick.words.empty()) {
      if (pick.last > total) {
        problem = {"--stage " + pick.typed + ": lesson '" + lesson + "' has " + std::to_string(total) + " stages",
                   "stages 1.." + std::to_string(total), quoted(pick.typed)};
        return {};
      }
      for (std::size_t n = pick.first; n <= pick.last; ++n) chosen.insert(n);
      continue;
    }
    bool found = false;
    for (const Stage& s : stages)
      if (squeeze(lower(s.title)).find(pick.words) != std::string::npos) {
        chosen.insert(s.index);
        found = true;
      }
    if (!found) {
      // A few titles to pick from, and where to see them all.
      std::string some;
      for (std::size_t i = 0; i < stages.size() && i < 3; ++i)
        some += std::to_string(stages[i].index) + " '" + stages[i].title + "', ";
      problem = {"--stage " + quoted(pick.typed) + " is in no stage title of lesson '" + lesson + "'",
                 "a word of a title or a number 1.." + std::to_string(total) + ", e.g. " + some +
                     "... (every title is a [n/" + std::to_string(total) + "] heading of the run without --stage)",
                 quoted(pick.typed)};
      return {};
    }
  }
  return {chosen.begin(), chosen.end()};
}

std::string stage_ranges(const std::vector<std::size_t>& stages) {
  std::string out;
  for (std::size_t i = 0; i < stages.size();) {
    std::size_t j = i;
    while (j + 1 < stages.size() && stages[j + 1] == stages[j] + 1) ++j;
    out += (out.empty() ? "" : ", ") + std::to_string(stages[i]);
    if (j > i) out += "-" + std::to_string(stages[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace attn::report
