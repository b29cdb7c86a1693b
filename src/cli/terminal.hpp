// What attn learns about the terminal it runs in, and how it reads single keys from it.
//
// Colour: --color always|never decide; --color auto (the default) paints only when standard output
// is a terminal, NO_COLOR is unset or empty (no-color.org) and TERM is not "dumb", or when
// CLICOLOR_FORCE is set to anything but "" and "0" (bixense.com/clicolors), unless NO_COLOR is
// set too. Depth: 24-bit when COLORTERM says "truecolor" or "24bit", 256 colours otherwise.
// Width: a pipe or a file always gets 80 columns, so saved output does not depend on the window it
// was made in; a terminal gets COLUMNS when that is a number, else the window size (TIOCGWINSZ),
// else 80.
#pragma once

#include <termios.h>

#include <optional>
#include <string>
#include <utility>

#include "report/colormap.hpp"
#include "report/step.hpp"

namespace attn::cli {

enum class ColorChoice { automatic, always, never };

// "auto", "always", "never"; nothing for anything else.
std::optional<ColorChoice> parse_color_choice(const std::string& text);

// The decisions, from the facts (so tests need no terminal). Null pointers are unset variables.
report::ColorDepth color_depth(ColorChoice choice, bool stdout_tty, const char* no_color,
                               const char* colorterm, const char* term, const char* clicolor_force = nullptr);
std::size_t terminal_width(bool stdout_tty, const char* columns, int window_columns);

struct Terminal {
  bool stdin_tty = false;
  bool stdout_tty = false;
  std::size_t width = 80;
  report::ColorDepth color = report::ColorDepth::none;
};

// Looks at file descriptors 0 and 1 and the environment.
Terminal probe_terminal(ColorChoice choice);

// The window of standard output now, {columns, rows} (TIOCGWINSZ); {0, 0} when unknown.
std::pair<std::size_t, std::size_t> window_size();

// Whether standard error is a terminal: where a training run's progress bar may be drawn.
bool stderr_is_terminal();

// Keys from a terminal in raw mode: each key arrives as it is pressed, unechoed, and Ctrl-C is a
// key (quit) rather than a signal. The terminal's settings are restored when this object dies,
// and also if attn is killed by SIGTERM, SIGHUP, SIGINT or SIGQUIT meanwhile. Ctrl-Z (a byte in raw
// mode) and SIGTSTP sent from outside stop attn with the terminal's settings restored; on SIGCONT
// raw mode comes back and read_key answers Key::redraw, as it does after SIGWINCH (a new size).
class TerminalKeys : public report::KeySource {
 public:
  explicit TerminalKeys(int fd);  // throws std::runtime_error if fd is not a terminal
  ~TerminalKeys() override;
  TerminalKeys(const TerminalKeys&) = delete;
  TerminalKeys& operator=(const TerminalKeys&) = delete;
  report::Key read_key() override;

 private:
  int fd_;
};

}  // namespace attn::cli
