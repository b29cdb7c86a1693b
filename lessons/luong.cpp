// TEMPORARY placeholder while the lesson is written; replaced before any commit.
#include "lessons/registry.hpp"
namespace attn { void lesson_luong(const LessonOptions&, report::Report&) { throw UsageError("lesson 'luong' is not written yet"); } }
