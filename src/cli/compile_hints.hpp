// One-line hints for the compiler errors a learner coming from PyTorch meets first.
//
// `attn check` shows the compiler's messages as they are; when the first error matches one of a
// small table of known beginner mistakes (x.shape[0], x.T, x @ y, dim=-1, ...), one line after
// them says what xtensor 0.24 or C++ writes instead. The table is in compile_hints.cpp; each row
// is tested against the message g++ really prints for that mistake (tests/exercises).
#pragma once

#include <string>

namespace attn::cli {

// `text` without its terminal colour sequences (ESC [ ... letter): g++ colours its messages when
// the build asks it to (CMAKE_COLOR_DIAGNOSTICS, -fdiagnostics-color=always).
std::string strip_colors(const std::string& text);

// The first line of `compiler_output` (colours removed) holding "error:" (the line g++ prints first, "file:line:col:
// error: ..."), followed by the source line g++ quotes under it when there is one; "" when no line
// says error.
std::string first_compiler_error(const std::string& compiler_output);

// The hint for that error, or "" when it matches no row of the table. Curly quotes (g++ in a
// UTF-8 locale) and straight ones (in the C locale) both match.
std::string compile_hint(const std::string& first_error);

}  // namespace attn::cli
