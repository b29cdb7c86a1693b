#include "golden_compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace attn::golden {

namespace {

enum class Kind { text, number };

struct Token {
  Kind kind;
  std::string text;
};

// A line as tokens, with the run of spaces before each token and after the last one.
struct Line {
  std::vector<Token> tokens;
  std::vector<std::string> gaps;  // gaps[i] precedes tokens[i]; gaps.back() ends the line
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t'; }
bool is_word_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}
bool is_word_char(char c) { return is_word_start(c) || is_digit(c); }

// The length of the number starting at s[i], or 0. A sign belongs to the number only where it
// cannot be a minus between two operands: "[-0.1234", ", -inf"... but not "j-1" or "3-4".
std::size_t number_at(const std::string& s, std::size_t i) {
  std::size_t j = i;
  if ((s[j] == '-' || s[j] == '+') && j + 1 < s.size()) {
    const char before = i > 0 ? s[i - 1] : ' ';
    if (is_word_char(before) || before == ')' || before == ']' || before == '.') return 0;
    ++j;
  }
  const std::size_t int_start = j;
  while (j < s.size() && is_digit(s[j])) ++j;
  bool digits = j > int_start;
  if (j < s.size() && s[j] == '.' && (digits || (j + 1 < s.size() && is_digit(s[j + 1])))) {
    ++j;
    while (j < s.size() && is_digit(s[j])) ++j;
    digits = true;
  }
  if (!digits) return 0;
  if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
    std::size_t k = j + 1;
    if (k < s.size() && (s[k] == '-' || s[k] == '+')) ++k;
    if (k < s.size() && is_digit(s[k])) {
      while (k < s.size() && is_digit(s[k])) ++k;
      j = k;
    }
  }
  return j - i;
}

Line tokenize(const std::string& s) {
  Line line;
  std::string gap;
  std::size_t i = 0;
  while (i < s.size()) {
    if (is_space(s[i])) {
      gap += s[i++];
      continue;
    }
    line.gaps.push_back(gap);
    gap.clear();
    if (std::size_t n = number_at(s, i)) {
      line.tokens.push_back({Kind::number, s.substr(i, n)});
      i += n;
    } else if (is_word_start(s[i])) {
      std::size_t j = i;
      while (j < s.size() && is_word_char(s[j])) ++j;
      line.tokens.push_back({Kind::text, s.substr(i, j - i)});
      i = j;
    } else {
      line.tokens.push_back({Kind::text, s.substr(i, 1)});
      ++i;
    }
  }
  line.gaps.push_back(gap);
  return line;
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s[i] == '\n') {
      lines.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  lines.push_back(s.substr(start));  // "" after a final newline: a missing one is a difference
  return lines;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// Why two lines differ, or "" when they match.
std::string line_difference(const std::string& expected, const std::string& actual) {
  const Line e = tokenize(expected), a = tokenize(actual);
  const auto numeric = [](const Line& l, std::size_t i) { return i < l.tokens.size() && l.tokens[i].kind == Kind::number; };
  const std::size_t n = std::min(e.tokens.size(), a.tokens.size());
  for (std::size_t i = 0; i <= n; ++i) {
    // The spaces before token i (or, for i == n, after the last token of the shorter line).
    const bool touches_number = numeric(e, i) || (i > 0 && numeric(e, i - 1));
    if (!touches_number && e.tokens.size() == a.tokens.size() && e.gaps[i] != a.gaps[i])
      return (i == n ? std::string("spaces differ at the end of the line")
                     : "spaces differ before token " + std::to_string(i + 1)) +
             " (" + std::to_string(e.gaps[i].size()) + " vs " + std::to_string(a.gaps[i].size()) +
             "); only spaces next to a number may";
    if (i == n) break;
    const Token& x = e.tokens[i];
    const Token& y = a.tokens[i];
    if (x.kind != y.kind)
      return "token " + std::to_string(i + 1) + ": " + (x.kind == Kind::number ? "number " : "text ") + quoted(x.text) +
             " vs " + (y.kind == Kind::number ? "number " : "text ") + quoted(y.text);
    if (x.kind == Kind::text || tolerance_for(x.text) == 0.0) {
      if (x.text != y.text)
        return "token " + std::to_string(i + 1) + ": " + quoted(x.text) + " vs " + quoted(y.text) +
               (x.kind == Kind::text ? " (text must match exactly)" : " (a number without decimals must match exactly)");
      continue;
    }
    const double g = std::strtod(x.text.c_str(), nullptr), v = std::strtod(y.text.c_str(), nullptr);
    const double tol = tolerance_for(x.text), diff = std::fabs(g - v);
    if (!(diff <= tol))
      return "token " + std::to_string(i + 1) + ": " + x.text + " vs " + y.text + ", |diff| = " + sci(diff) +
             " > tolerance " + sci(tol);
  }
  if (e.tokens.size() != a.tokens.size())
    return std::to_string(e.tokens.size()) + " tokens vs " + std::to_string(a.tokens.size()) +
           (e.tokens.size() > a.tokens.size() ? " (missing: " + quoted(e.tokens[n].text) + ")"
                                              : " (extra: " + quoted(a.tokens[n].text) + ")");
  return "";
}

}  // namespace

double tolerance_for(const std::string& text) {
  const std::size_t dot = text.find('.');
  if (dot == std::string::npos) return 0.0;
  std::size_t decimals = 0;
  while (dot + 1 + decimals < text.size() && is_digit(text[dot + 1 + decimals])) ++decimals;
  if (decimals == 0) return 0.0;
  long exponent = 0;
  const std::size_t e = text.find_first_of("eE");
  const double g = std::fabs(std::strtod(text.c_str(), nullptr));
  // Zero in scientific notation, "0.00e+00", has no magnitude: its "+00" is a convention, not a
  // last place of 0.01. Only the absolute floor applies.
  if (e != std::string::npos && g == 0.0) return kAbsolute;
  if (e != std::string::npos) exponent = std::strtol(text.c_str() + e + 1, nullptr, 10);
  const double ulp = std::pow(10.0, static_cast<double>(exponent) - static_cast<double>(decimals));
  return std::max({kAbsolute, kUlps * ulp, kRelative * g});
}

Comparison compare(const std::string& expected, const std::string& actual) {
  Comparison c;
  const auto e = split_lines(expected), a = split_lines(actual);
  c.expected_lines = e.size();
  c.actual_lines = a.size();
  for (std::size_t i = 0; i < std::max(e.size(), a.size()); ++i) {
    LineDifference d;
    d.line = i + 1;
    if (i >= e.size()) {
      d.actual = a[i];
      d.why = "extra line";
    } else if (i >= a.size()) {
      d.expected = e[i];
      d.why = "missing line";
    } else {
      d.expected = e[i];
      d.actual = a[i];
      d.why = line_difference(e[i], a[i]);
      if (d.why.empty()) continue;
    }
    c.differences.push_back(d);
  }
  c.equal = c.differences.empty();
  return c;
}

std::string describe(const Comparison& c, std::size_t max_lines) {
  if (c.equal) return "";
  std::string out;
  if (c.expected_lines != c.actual_lines)
    out += "expected " + std::to_string(c.expected_lines) + " lines, got " + std::to_string(c.actual_lines) +
           " (a final newline counts as one more line)\n";
  std::size_t shown = 0;
  for (const auto& d : c.differences) {
    if (shown++ == max_lines) {
      out += "... and " + std::to_string(c.differences.size() - max_lines) + " more differing lines\n";
      break;
    }
    out += "line " + std::to_string(d.line) + ": " + d.why + "\n";
    out += "  expected: " + d.expected + "\n";
    out += "  actual:   " + d.actual + "\n";
  }
  return out;
}

}  // namespace attn::golden
