// What the lessons that train share: their --steps and --lr options (one declaration, so both
// lessons parse and explain them alike), the progress callback, and the refusal of a loss that
// stops being a number.
#pragma once

#include <cstddef>
#include <string>

#include "lesson_kit/options.hpp"

namespace attn {

// --steps: whole numbers lo..hi (0 is always refused: nothing would be trained), default `fallback`.
LessonOption steps_option(double fallback, double hi);
// --lr: Adam's learning rate, 1e-6..hi, default `fallback`. Above ~1 Adam's steps are as large
// as the weights themselves, so a lesson states its own upper end.
LessonOption lr_option(double fallback, double hi);

// Tells the CLI's progress bar (if any) that `done` of `total` steps are finished.
inline void report_progress(const LessonOptions& opts, std::size_t done, std::size_t total) {
  if (opts.progress) opts.progress(done, total);
}

// Throws UsageError when `loss` is NaN or infinite at training step `step` (1-based) of `steps`:
//   training diverged: the loss is nan at step 37 of 400; try a smaller --lr (--lr: below 3 vs 3)
// The run stops there: every later number would be NaN too.
void check_finite_loss(double loss, std::size_t step, std::size_t steps, double lr);

}  // namespace attn
