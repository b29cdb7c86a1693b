#include "report/svg_text.hpp"

#include <cstdio>

#include "report/text_width.hpp"

namespace attn::report::svg {

// Text and attribute values: the five characters XML reserves, after clean_label has removed
// control characters and broken UTF-8 (either would make the file something other than XML).
std::string xml(const std::string& text) {
  std::string out;
  for (char c : clean_label(text)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string num(double v) {  // coordinates: one decimal is plenty for a screen
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string s = buf;
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

// Text widths are estimated (a file cannot measure its font): DejaVu Sans and its substitutes
// average about 0.6 em per character.
double text_width(const std::string& s, double font) { return 0.6 * font * static_cast<double>(display_width(s)); }

}  // namespace attn::report::svg
