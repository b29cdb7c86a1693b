// Labels drawn in pictures come from the learner (--tokens, --src, --tgt): any bytes at all. A
// grid lines up only if each label's width on screen is known, and a picture must not carry
// control characters (an escape sequence in a token would repaint the terminal) or broken UTF-8
// (an SVG with it is not XML).
#pragma once

#include <string>

namespace attn::report {

// Control characters become '?', and so does every byte that is not part of valid UTF-8.
std::string clean_label(const std::string& text);

// Columns on screen, as terminals count them: wcwidth() of the C library, read in the C.UTF-8
// locale whatever the process's own locale is, so East Asian wide characters (猫, 日本語) take
// two columns and combining marks none. A byte that is not valid UTF-8 counts as one column (it
// prints as one '?' once cleaned), and so does a code point wcwidth calls unprintable.
std::size_t display_width(const std::string& utf8);

// At most `width` columns; a label cut short ends in '~' so the learner sees it was cut. A wide
// character is never split: when only one column is left for it, the '~' comes first.
std::string fit_label(const std::string& utf8, std::size_t width);

}  // namespace attn::report
