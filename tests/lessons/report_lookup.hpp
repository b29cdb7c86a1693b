// Reading a lesson's Report in tests: run a lesson by name, then find its tensors, checks,
// notes and tables by what the learner sees them called.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "lesson_kit/registry.hpp"

namespace attn::test {

inline report::Report run_lesson(const std::string& name, const LessonOptions& opts = {}) {
  const LessonEntry* lesson = find_lesson(name);
  REQUIRE_MESSAGE(lesson != nullptr, "no lesson named " << name);
  report::Report r;
  lesson->run(opts, r);
  return r;
}

// The last tensor called `name` across all stages, or nullptr.
inline const report::TensorItem* find_tensor(const report::Report& r, const std::string& name) {
  const report::TensorItem* found = nullptr;
  for (const auto& s : r.stages())
    for (const auto& item : s.items)
      if (const auto* t = std::get_if<report::TensorItem>(&item))
        if (t->name == name) found = t;
  return found;
}

inline bool has_tensor(const report::Report& r, const std::string& name) { return find_tensor(r, name) != nullptr; }

inline const report::TensorItem& tensor(const report::Report& r, const std::string& name) {
  const report::TensorItem* found = find_tensor(r, name);
  REQUIRE_MESSAGE(found != nullptr, "no tensor named " << name);
  return *found;
}

// Every check and question of the lesson, in order.
inline std::vector<report::CheckItem> checks(const report::Report& r) {
  std::vector<report::CheckItem> out;
  for (const auto& s : r.stages())
    for (const auto& item : s.items)
      if (const auto* c = std::get_if<report::CheckItem>(&item)) out.push_back(*c);
  return out;
}

// The one check or question whose text contains `part`.
inline report::CheckItem check_with(const report::Report& r, const std::string& part) {
  std::vector<report::CheckItem> found;
  for (const auto& c : checks(r))
    if (c.text.find(part) != std::string::npos) found.push_back(c);
  REQUIRE_MESSAGE(found.size() == 1, found.size() << " checks contain '" << part << "'");
  return found.front();
}

// The notes of one stage, in order.
inline std::vector<std::string> notes(const report::Stage& s) {
  std::vector<std::string> out;
  for (const auto& item : s.items)
    if (const auto* n = std::get_if<report::NoteItem>(&item)) out.push_back(n->text);
  return out;
}

// The last table whose last column is headed `last_header`.
inline const report::TableItem& table_with(const report::Report& r, const std::string& last_header) {
  const report::TableItem* found = nullptr;
  for (const auto& s : r.stages())
    for (const auto& item : s.items)
      if (const auto* t = std::get_if<report::TableItem>(&item))
        if (!t->header.empty() && t->header.back() == last_header) found = t;
  REQUIRE_MESSAGE(found != nullptr, "no table ending with column " << last_header);
  return *found;
}

}  // namespace attn::test
