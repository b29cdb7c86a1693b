// TEMPORARY placeholder while the lesson is written; replaced before any commit.
#include "lessons/registry.hpp"
namespace attn { void lesson_bahdanau(const LessonOptions&, report::Report&) { throw UsageError("lesson 'bahdanau' is not written yet"); } }
