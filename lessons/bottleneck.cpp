// TEMPORARY placeholder while the lesson is written; replaced before any commit.
#include "lessons/registry.hpp"
namespace attn { void lesson_bottleneck(const LessonOptions&, report::Report&) { throw UsageError("lesson 'bottleneck' is not written yet"); } }
