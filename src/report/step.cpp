#include "report/step.hpp"

#include "report/text_width.hpp"

namespace attn::report {

std::string step_footer(std::size_t stage, std::size_t total, std::size_t width) {
  return step_footer(stage, total, width, stage == total);
}

std::string step_footer(std::size_t stage, std::size_t total, std::size_t width, bool last) {
  const std::string where = std::to_string(stage) + "/" + std::to_string(total);
  const std::string full = "stage " + where + " \u00b7 n " + (last ? "end" : "next") +
                           " \u00b7 p back \u00b7 q quit";
  if (display_width(full) <= width) return full;
  return where + " \u00b7 n p q";
}

StepEnd step_through(const Report& report, Sink& sink, std::ostream& out, KeySource& keys,
                     const StepOptions& options) {
  const auto& stages = report.stages();
  const std::size_t total = report.total_stages(), shown = stages.size();
  sink.begin(report.header, total);
  std::size_t i = 0;
  while (i < shown) {
    sink.stage(stages[i], total);
    const std::string footer = step_footer(stages[i].index, total, options.width, i + 1 == shown);
    out << (options.highlight ? "\x1b[7m" + footer + "\x1b[0m" : footer) << std::flush;
    Key key = keys.read_key();
    while (key == Key::other) key = keys.read_key();
    // Blanks over the footer, and the cursor back to the start of its line.
    out << "\r" << std::string(display_width(footer), ' ') << "\r" << std::flush;
    if (key == Key::quit) {
      sink.end();
      return StepEnd::quit;
    }
    if (key == Key::back) i = i == 0 ? 0 : i - 1;  // at stage 1, "back" shows stage 1 again
    else ++i;
  }
  sink.end();
  return StepEnd::finished;
}

}  // namespace attn::report
