// What the training lessons share (lesson_kit/training.*): --steps and --lr parsed strictly
// (0 steps and absurd rates refused in the usual one-line form), the refusal of a loss that is
// no longer a number, and the progress callback that does nothing when no CLI is listening.
#include <doctest/doctest.h>

#include <cmath>

#include "lesson_kit/training.hpp"

using namespace attn;

namespace {

std::string usage_error(const LessonOption& o, const std::string& text) {
  try {
    parse_lesson_option(o, text);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("--steps and --lr refuse zero, negatives, absurd values and non-numbers") {
  const LessonOption steps = steps_option(300, 5000), lr = lr_option(0.01, 1);
  CHECK(parse_lesson_option(steps, "40") == 40);
  CHECK(usage_error(steps, "0") == "--steps is out of range (--steps: 1..5000 vs 0)");
  CHECK(usage_error(steps, "1000000") == "--steps is out of range (--steps: 1..5000 vs 1000000)");
  CHECK(usage_error(steps, "2.5") != "");
  CHECK(parse_lesson_option(lr, "3e-3") == doctest::Approx(0.003));
  CHECK(usage_error(lr, "0") == "--lr is out of range (--lr: 1e-6..1 vs 0)");
  CHECK(usage_error(lr, "50") == "--lr is out of range (--lr: 1e-6..1 vs 50)");
  CHECK(usage_error(lr, "nan") != "");
  CHECK(usage_error(lr, "-0.1") != "");
}

TEST_CASE("a NaN or infinite loss stops training with the step and a smaller --lr suggested") {
  CHECK_NOTHROW(check_finite_loss(2.3, 5, 300, 0.01));
  try {
    check_finite_loss(NAN, 37, 400, 0.9);
    FAIL("no error");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()) ==
          "training diverged: the loss is nan at step 37 of 400; try a smaller --lr (--lr: below 0.9 vs 0.9)");
  }
  try {
    check_finite_loss(INFINITY, 2, 10, 1);
    FAIL("no error");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()).find("the loss is inf at step 2 of 10") != std::string::npos);
  }
}

TEST_CASE("report_progress calls the CLI's callback, and nothing when there is none") {
  LessonOptions opts;
  CHECK_NOTHROW(report_progress(opts, 1, 2));
  std::size_t seen_done = 0, seen_total = 0;
  opts.progress = [&](std::size_t d, std::size_t t) { seen_done = d, seen_total = t; };
  report_progress(opts, 3, 7);
  CHECK(seen_done == 3);
  CHECK(seen_total == 7);
}
