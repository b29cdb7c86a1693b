// The shared pieces of the training lessons (see training.hpp).
#include "lesson_kit/training.hpp"

#include <cmath>

namespace attn {

LessonOption steps_option(double fallback, double hi) {
  return {"--steps", OptionType::Integer, 1, hi, fallback, "training steps (each one forward, backward and Adam update)"};
}

LessonOption lr_option(double fallback, double hi) {
  return {"--lr", OptionType::Real, 1e-6, hi, fallback, "Adam's learning rate"};
}

void check_finite_loss(double loss, std::size_t step, std::size_t steps, double lr) {
  if (std::isfinite(loss)) return;
  const std::string value = std::isnan(loss) ? "nan" : (loss > 0 ? "inf" : "-inf");
  throw UsageError("training diverged: the loss is " + value + " at step " + std::to_string(step) + " of " +
                       std::to_string(steps) + "; try a smaller --lr",
                   "--lr", "below " + format_option_value(lr), format_option_value(lr));
}

}  // namespace attn
