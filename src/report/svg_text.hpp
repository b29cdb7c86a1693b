// SVG text shared by the pictures (svg_heatmap.cpp, svg_curve.cpp): escaped text, coordinates,
// estimated text widths.
#pragma once

#include <string>

namespace attn::report::svg {

// Text and attribute values: the five characters XML reserves escaped, after clean_label has
// removed control characters and broken UTF-8.
std::string xml(const std::string& text);
// A coordinate with one decimal at most ("12.5", "40").
std::string num(double v);
// Estimated width of `s` in a font of size `font` (about 0.6 em per column).
double text_width(const std::string& s, double font);

}  // namespace attn::report::svg
