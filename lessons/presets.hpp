// --preset NAME: the exact configurations of the articles, by name. A preset fills in the
// options the learner did not give (what they give explicitly wins), and says on screen what it
// took from the article and what it could not.
#pragma once

#include <string>
#include <vector>

#include "lessons/options.hpp"

namespace attn {

struct Preset {
  const char* name;
  const char* follows;                // the article and section
  std::vector<const char*> lessons;   // lessons it configures
  const char* summary;                // one line for `attn list --presets`
};

const std::vector<Preset>& presets();

// Fills `opts` for `lesson` from preset `name`. `values_requested` (--values) keeps the values of
// a preset that shows shapes only by default. Throws UsageError for an unknown preset (with the
// nearest name) or one that does not configure this lesson.
void apply_preset(const std::string& name, const std::string& lesson, bool values_requested, LessonOptions& opts);

}  // namespace attn
