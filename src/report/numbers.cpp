#include "report/numbers.hpp"

#include <cmath>
#include <cstdio>
#include <iterator>

namespace attn::report {

namespace {
// printf writes "-nan"; the reports say "nan", "inf", "-inf".
std::string not_finite(double v) { return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf"; }
}  // namespace

std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) return not_finite(v);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string scientific(double v, int digits) {
  if (!std::isfinite(v)) return not_finite(v);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", digits, v);
  return buf;
}

std::string with_commas(std::uint64_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string human_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  std::size_t u = 0;
  while (v >= 1024.0 && u + 1 < std::size(units)) {
    v /= 1024.0;
    ++u;
  }
  if (u == 0) return std::to_string(bytes) + " B";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f %s", v, units[u]);
  return buf;
}

std::string bytes(double n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t u = 0;
  while (n >= 1024.0 && u + 1 < std::size(units)) {
    n /= 1024.0;
    ++u;
  }
  char buf[32];
  if (u == 0) std::snprintf(buf, sizeof buf, "%.0f B", n);
  else std::snprintf(buf, sizeof buf, n < 100.0 ? "%.2f %s" : "%.0f %s", n, units[u]);
  return buf;
}

std::string ratio_text(std::uint64_t a, std::uint64_t b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", static_cast<double>(a) / static_cast<double>(b));
  return buf;
}

}  // namespace attn::report
