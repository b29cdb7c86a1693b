// LessonOptions' helpers: the strict parser of a lesson's own options,
// and check_size, the limit every lesson applies before it allocates.
#include "lesson_kit/options.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "lesson_kit/numbers.hpp"

namespace attn {
namespace {

std::string report_large(long double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2Le", v);
  return buf;
}

}  // namespace

void check_size(const std::string& tensor, const Shape& shape, bool shapes_only,
                const std::string& options) {
  // Sizes are at most kMaxSize each, so a long double holds the count of any shape here exactly
  // enough to print it.
  long double count = 1;
  for (std::size_t d : shape) count *= static_cast<long double>(d);
  auto values = [&] {
    return count < 1e18L ? std::to_string(static_cast<unsigned long long>(count)) + " values"
                         : report_large(count) + " values";
  };
  if (count > static_cast<long double>(kMaxValues))
    throw UsageError(tensor + " " + shape_str(shape) + " would be too large to hold", options,
                     "at most " + std::to_string(kMaxValues) + " values", values());
  if (!shapes_only && count > static_cast<long double>(kMaxPrintedValues))
    throw UsageError(tensor + " " + shape_str(shape) + " is too large to print; add --shapes-only",
                     options, "at most " + std::to_string(kMaxPrintedValues) + " values", values());
}

void check_held(const std::string& what, long double bytes, bool suggest_shapes_only, const std::string& options) {
  if (bytes <= static_cast<long double>(kMaxHeldBytes)) return;
  const std::string held = human_bytes(static_cast<std::uint64_t>(std::min(bytes, 1e19L)));
  throw UsageError(what + " would hold " + held + " at once, more than a lesson may" +
                       (suggest_shapes_only ? "; add --shapes-only" : ""),
                   options, "at most " + human_bytes(kMaxHeldBytes) + " of tensors and labels together", held);
}

long double loaded_bytes(const LessonOptions& opts) {
  long double n = 0;
  if (opts.input) n += static_cast<long double>(opts.input->values.size());
  for (const auto& [name, t] : opts.weights) n += static_cast<long double>(t.values.size());
  for (const auto& [name, t] : opts.states) n += static_cast<long double>(t.values.size());
  return 4 * n;
}

long double held_bytes(const LessonOptions& opts, const std::vector<HeldTensors>& terms) {
  long double n = 0;
  for (const HeldTensors& t : terms) {
    long double count = t.count;
    for (std::size_t d : t.shape) count *= static_cast<long double>(d);
    n += count;
  }
  return 4 * n + loaded_bytes(opts);
}

bool values_within_held(const std::string& what, long double bytes, bool shapes_only, bool values_optional,
                        bool skips_values, const std::string& options) {
  if (bytes <= static_cast<long double>(kMaxHeldBytes)) return true;
  if (shapes_only && values_optional) return false;
  check_held(what, bytes, skips_values && !shapes_only, options);
  return true;  // not reached: check_held refused
}

double LessonOptions::number(const std::string& flag) const {
  const auto it = own.find(flag);
  if (it == own.end()) throw std::logic_error("the lesson reads " + flag + " but does not declare it");
  return it->second;
}

std::int64_t LessonOptions::integer(const std::string& flag) const {
  return static_cast<std::int64_t>(number(flag));
}

const std::vector<std::int64_t>& LessonOptions::integers(const std::string& flag) const {
  const auto it = own_lists.find(flag);
  if (it == own_lists.end()) throw std::logic_error("the lesson reads " + flag + " but does not declare it as a list");
  return it->second;
}

std::uint64_t parse_whole(const std::string& flag, const std::string& text, std::uint64_t lo, std::uint64_t hi) {
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  const bool digits = !text.empty() && text.size() <= 20 && text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits) {
    const bool signed_digits = !text.empty() && text[0] == '-' && text.size() > 1 &&
                               text.find_first_not_of("0123456789", 1) == std::string::npos;
    const bool negative = signed_digits && text.find_first_not_of('0', 1) != std::string::npos;  // "-0" is not
    throw UsageError(flag + (negative          ? " must not be negative"
                             : signed_digits   ? " expects a whole number without a sign"
                                               : " expects a whole number"),
                     flag, range, "'" + text + "'");
  }
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE || v < lo || v > hi) throw UsageError(flag + " is out of range", flag, range, text);
  return v;
}

std::string format_option_value(double v) {
  char buf[40];
  if (std::fabs(v) < 1e6 && v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.6g", v);
  // "1e+09" -> "1e9", "2.5e-05" -> "2.5e-5": as a learner would type it.
  std::string s = buf;
  const auto e = s.find('e');
  if (e == std::string::npos) return s;
  std::string mantissa = s.substr(0, e), exponent = s.substr(e + 1);
  const bool negative = exponent[0] == '-';
  exponent.erase(0, 1);
  exponent.erase(0, std::min(exponent.find_first_not_of('0'), exponent.size() - 1));
  return mantissa + "e" + (negative ? "-" : "") + exponent;
}

double parse_lesson_option(const LessonOption& option, const std::string& text) {
  const std::string flag = option.flag;
  const std::string range = format_option_value(option.lo) + ".." + format_option_value(option.hi);
  const std::string quoted = "'" + text + "'";
  double v = 0;
  if (option.type == OptionType::Integer) {
    const bool minus = !text.empty() && text[0] == '-';
    const std::size_t first = minus ? 1 : 0;
    const bool digits = text.size() > first && text.size() <= 20 &&
                        text.find_first_not_of("0123456789", first) == std::string::npos;
    if (!digits)
      throw UsageError(flag + " expects a whole number", flag, range, quoted);
    // "-0" is no negative number, but no plain one either: a sign has no place in a count.
    const bool zero = text.find_first_not_of('0', first) == std::string::npos;
    if (minus && option.lo >= 0)
      throw UsageError(flag + (zero ? " expects a whole number without a sign" : " must not be negative"), flag, range,
                       quoted);
    errno = 0;
    const long long n = std::strtoll(text.c_str(), nullptr, 10);
    if (errno == ERANGE) throw UsageError(flag + " is out of range", flag, range, text);
    v = static_cast<double>(n);
  } else {
    // Digits, one sign, a point and an exponent only: strtod alone would take "inf", "nan", "0x1p3".
    const bool plain = !text.empty() && text.find_first_not_of("0123456789+-.eE") == std::string::npos &&
                       text.find_first_of("0123456789") != std::string::npos;
    char* end = nullptr;
    errno = 0;
    if (plain) v = std::strtod(text.c_str(), &end);
    if (!plain || end != text.c_str() + text.size()) throw UsageError(flag + " expects a number", flag, range, quoted);
    if (errno == ERANGE || !std::isfinite(v)) throw UsageError(flag + " is out of range", flag, range, text);
  }
  if (!(v >= option.lo && v <= option.hi)) throw UsageError(flag + " is out of range", flag, range, text);
  return v;
}

std::vector<std::int64_t> parse_lesson_list(const LessonOption& option, const std::string& text) {
  const std::string flag = option.flag;
  const std::string range = "each " + format_option_value(option.lo) + ".." + format_option_value(option.hi);
  const std::string quoted = "'" + text + "'";
  // Digits and single commas between entries; a sign is allowed only where the range is negative.
  const bool negatives = option.lo < 0;
  std::vector<std::int64_t> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string entry = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t first = negatives && !entry.empty() && entry[0] == '-' ? 1 : 0;
    const bool digits = entry.size() > first && entry.size() <= 20 &&
                        entry.find_first_not_of("0123456789", first) == std::string::npos;
    if (!digits) {
      if (!entry.empty() && entry[0] == '-')
        throw UsageError(flag + (entry.find_first_not_of('0', 1) == std::string::npos && entry.size() > 1
                                     ? " expects whole numbers without a sign"
                                     : " must not be negative"),
                         flag, range, quoted);
      throw UsageError(flag + " expects whole numbers separated by commas, e.g. 5,2", flag, range, quoted);
    }
    errno = 0;
    const long long n = std::strtoll(entry.c_str(), nullptr, 10);
    if (errno == ERANGE || !(static_cast<double>(n) >= option.lo && static_cast<double>(n) <= option.hi))
      throw UsageError(flag + " is out of range", flag, range, entry);
    out.push_back(n);
    if (out.size() > kMaxSize)
      throw UsageError(flag + " has too many entries", flag, "at most " + std::to_string(kMaxSize), "more");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

bool check_sizes(const std::vector<SizedTensor>& tensors, bool shapes_only, bool values_optional) {
  if (shapes_only && values_optional) {
    long double total = 0;  // what the run would hold at once, if it computed
    for (const SizedTensor& t : tensors) {
      long double count = 1;
      for (std::size_t d : t.shape) count *= static_cast<long double>(d);
      if (count > static_cast<long double>(kMaxPrintedValues)) return false;
      total += count;
    }
    if (total > static_cast<long double>(kMaxPrintedValues)) return false;
  }
  for (const SizedTensor& t : tensors) check_size(t.name, t.shape, shapes_only, t.options);
  return true;
}

}  // namespace attn
