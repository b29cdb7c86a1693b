// Labels drawn in pictures come from the learner (--tokens, --src, --tgt): any bytes at all. A
// grid lines up only if each label's width on screen is known, and a picture must not carry
// control characters (an escape sequence in a token would repaint the terminal) or broken UTF-8
// (an SVG with it is not XML).
#pragma once

#include <string>

namespace attn::report {

// Control characters become '?', and so does every byte that is not part of valid UTF-8.
std::string clean_label(const std::string& text);

// Columns on screen: one per code point. (Wide CJK characters would take two; tokens here are
// words of European languages, and a CJK token only shifts its own row's label.)
std::size_t display_width(const std::string& utf8);

// At most `width` columns; a label cut short ends in '~' so the learner sees it was cut.
std::string fit_label(const std::string& utf8, std::size_t width);

}  // namespace attn::report
