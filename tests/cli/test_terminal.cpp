// How attn decides about colour and width from what it finds: --color, NO_COLOR, CLICOLOR_FORCE,
// TERM, COLORTERM, whether standard output is a terminal, COLUMNS and the window size.
#include <doctest/doctest.h>

#include "cli/terminal.hpp"

using attn::cli::ColorChoice;
using attn::cli::color_depth;
using attn::cli::parse_color_choice;
using attn::cli::terminal_width;
using attn::report::ColorDepth;

TEST_CASE("--color values") {
  CHECK(parse_color_choice("auto") == ColorChoice::automatic);
  CHECK(parse_color_choice("always") == ColorChoice::always);
  CHECK(parse_color_choice("never") == ColorChoice::never);
  CHECK_FALSE(parse_color_choice("yes").has_value());
  CHECK_FALSE(parse_color_choice("").has_value());
}

TEST_CASE("auto: colour only on a terminal, and never with NO_COLOR or TERM=dumb") {
  CHECK(color_depth(ColorChoice::automatic, true, nullptr, nullptr, "xterm-256color") == ColorDepth::xterm256);
  CHECK(color_depth(ColorChoice::automatic, false, nullptr, "truecolor", "xterm") == ColorDepth::none);  // a pipe
  CHECK(color_depth(ColorChoice::automatic, true, "1", "truecolor", "xterm") == ColorDepth::none);
  CHECK(color_depth(ColorChoice::automatic, true, "", nullptr, "xterm") == ColorDepth::xterm256);  // empty: unset
  CHECK(color_depth(ColorChoice::automatic, true, nullptr, nullptr, "dumb") == ColorDepth::none);
}

TEST_CASE("auto: CLICOLOR_FORCE paints into a pipe and a dumb terminal, but NO_COLOR still wins") {
  // Without CLICOLOR_FORCE a pipe gets no colour (above); forced, it gets the terminal's depth.
  CHECK(color_depth(ColorChoice::automatic, false, nullptr, nullptr, "xterm", "1") == ColorDepth::xterm256);
  CHECK(color_depth(ColorChoice::automatic, false, nullptr, "truecolor", nullptr, "yes") == ColorDepth::truecolor);
  CHECK(color_depth(ColorChoice::automatic, true, nullptr, nullptr, "dumb", "1") == ColorDepth::xterm256);
  // "0" and "" mean not forced (CMake's reading of the convention).
  CHECK(color_depth(ColorChoice::automatic, false, nullptr, nullptr, "xterm", "0") == ColorDepth::none);
  CHECK(color_depth(ColorChoice::automatic, false, nullptr, nullptr, "xterm", "") == ColorDepth::none);
  // NO_COLOR is checked first; --color never still means never.
  CHECK(color_depth(ColorChoice::automatic, false, "1", nullptr, "xterm", "1") == ColorDepth::none);
  CHECK(color_depth(ColorChoice::automatic, true, "1", "truecolor", "xterm", "1") == ColorDepth::none);
  CHECK(color_depth(ColorChoice::never, false, nullptr, nullptr, "xterm", "1") == ColorDepth::none);
}

TEST_CASE("always and never win over everything else, COLORTERM picks the depth") {
  CHECK(color_depth(ColorChoice::always, false, "1", nullptr, "dumb") == ColorDepth::xterm256);
  CHECK(color_depth(ColorChoice::always, false, nullptr, "truecolor", nullptr) == ColorDepth::truecolor);
  CHECK(color_depth(ColorChoice::always, false, nullptr, "24bit", nullptr) == ColorDepth::truecolor);
  CHECK(color_depth(ColorChoice::always, false, nullptr, "TrueColor", nullptr) == ColorDepth::truecolor);
  CHECK(color_depth(ColorChoice::always, false, nullptr, "yes", nullptr) == ColorDepth::xterm256);
  CHECK(color_depth(ColorChoice::never, true, nullptr, "truecolor", "xterm") == ColorDepth::none);
}

TEST_CASE("width: 80 in a pipe, else COLUMNS, else the window, else 80") {
  CHECK(terminal_width(false, "200", 150) == 80);
  CHECK(terminal_width(true, "120", 150) == 120);
  CHECK(terminal_width(true, nullptr, 150) == 150);
  CHECK(terminal_width(true, "wide", 150) == 150);  // not a number: ignored
  CHECK(terminal_width(true, "0", 0) == 80);
  CHECK(terminal_width(true, nullptr, 0) == 80);
}
