// --step: the learner sets the pace. After each stage the lesson waits for a key:
//   Enter, space, n, or the right arrow / Page Down: the next stage
//   p, b, or the left arrow / Page Up: the previous stage, shown again
//   q, Ctrl-C or Ctrl-D: stop here (a normal end, exit status 0)
// while a footer says where the learner is: "stage 4/9 · n next · p back · q quit".
//
// The loop knows nothing of terminals: keys come from a KeySource (the CLI's raw-mode terminal,
// or a list of keys in a test) and the stages go to any Sink (the terminal printer).
#pragma once

#include <ostream>

#include "report/stage.hpp"

namespace attn::report {

enum class Key { next, back, quit, other };

class KeySource {
 public:
  virtual ~KeySource() = default;
  virtual Key read_key() = 0;  // blocks until a key; Key::quit at the end of input
};

struct StepOptions {
  std::size_t width = 80;  // the footer is shortened to fit
  bool highlight = false;  // draw the footer in reverse video (only where colour is allowed)
};

// "stage 4/9 · n next · p back · q quit"; on the last stage "n end" instead of "n next"; in a
// terminal narrower than that, "4/9 · n p q".
std::string step_footer(std::size_t stage, std::size_t total, std::size_t width);
// The same where the last stage shown is not the lesson's last (--stage 5-7): "n end" on `last`.
std::string step_footer(std::size_t stage, std::size_t total, std::size_t width, bool last);

enum class StepEnd { finished, quit };

// Shows the header, then one stage at a time: the report's stages (only those --stage kept), each
// footer counting as the headings do ("stage 6/14"). The footer is erased (overwritten with blanks)
// before the next stage prints, so the scrollback holds the stages and not the prompts.
StepEnd step_through(const Report& report, Sink& sink, std::ostream& out, KeySource& keys,
                     const StepOptions& options);

}  // namespace attn::report
