// The one line attn prints on stderr for an error: whatever a message quotes (an option's value, a
// lesson name, a path, CLI11's own words) is the learner's bytes, and a newline in it would make
// two lines, an escape sequence would reach the terminal (`--format $'\e]0;title\a'` set the
// window's title), and a 100 kB value would make a 100 kB line.
#pragma once

#include <cstddef>
#include <string>

namespace attn::cli {

// Longest error line, in bytes, before its middle is cut.
inline constexpr std::size_t kMaxErrorBytes = 1000;

// `message` made fit for one line on a terminal: control bytes (C0, DEL, and the C1 range U+0080
// to U+009F) and bytes that are not valid UTF-8 written as \xNN; valid UTF-8 kept (a Japanese
// token stays readable); past kMaxErrorBytes, the middle replaced by "... (N bytes left out) ...",
// so that the start (what went wrong) and the end (what was given) both remain.
std::string error_line(const std::string& message);

}  // namespace attn::cli
