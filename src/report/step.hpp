// --step: the learner sets the pace. After each stage the lesson waits for a key:
//   Enter, space, n, or the right arrow / Page Down: the next stage
//   p, b, or the left arrow / Page Up: the previous stage, shown again
//   q, Ctrl-C or Ctrl-D: stop here (a normal end, exit status 0)
// while a footer says where the learner is: "stage 4/9 · n next · p back · q quit".
//
// Paging (when the caller gives the window's size and a way to render a stage as text): a stage
// taller than the window is shown a page at a time. Each page starts with the stage's heading (the
// "[n/N] title" line, the equation, the in/out shapes) so they never scroll away, then as much of
// the body as fits, then the footer on the window's last row: "stage 6/14 · lines 1-18 of 57 ·
// n more · p back · q quit". "next" shows the next page, and after the last page the next stage;
// "back" the previous page, and on a stage's first page the previous stage from its top.
//
// The loop knows nothing of terminals: keys come from a KeySource (the CLI's raw-mode terminal,
// or a list of keys in a test) and the stages go to any Sink (the terminal printer).
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "report/stage.hpp"

namespace attn::report {

// redraw: show the current page again (after Ctrl-Z and fg, or when the window changed size).
enum class Key { next, back, quit, redraw, other };

class KeySource {
 public:
  virtual ~KeySource() = default;
  virtual Key read_key() = 0;  // blocks until a key; Key::quit at the end of input
};

struct StepOptions {
  std::size_t width = 80;  // the footer is shortened to fit
  bool highlight = false;  // draw the footer in reverse video (only where colour is allowed)
  // The window's size now, {columns, rows}, asked before every page (it may change); rows 0 or
  // no function: no paging, each stage printed whole through the sink as before.
  std::function<std::pair<std::size_t, std::size_t>()> window;
  // The stage as the sink prints it (needed for paging: the text is cut into pages).
  std::function<std::string(const Stage&, std::size_t total)> render;
};

// Where a page's lines go: the first body line of each page of `rows` (screen rows each body line
// takes), `budget` rows a page. Always starts with 0; a line taller than a page gets one page.
std::vector<std::size_t> page_starts(const std::vector<std::size_t>& rows, std::size_t budget);

// "stage 6/14 · lines 1-18 of 57 · n more · p back · q quit" ("n next" on a stage's last page,
// "n end" on the last stage's); narrower: "6/14 1-18/57 · n p q".
std::string page_footer(std::size_t stage, std::size_t total, std::size_t first, std::size_t last,
                        std::size_t lines, std::size_t width, bool last_page, bool last_stage);

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
