// Oniguruma behind Regex (regex_split.hpp). oniguruma.h stays in this file.
#include "io/regex_split.hpp"

#include <oniguruma.h>

#include <mutex>

#include "io/npy.hpp"  // escaped_for_message
#include "io/tokenizer_error.hpp"

namespace attn {

namespace {

std::string onig_message(int code, OnigErrorInfo* info = nullptr) {
  OnigUChar buf[ONIG_MAX_ERROR_MESSAGE_LEN];
  if (info) onig_error_code_to_str(buf, code, info);
  else onig_error_code_to_str(buf, code);
  return reinterpret_cast<const char*>(buf);
}

void initialize_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    OnigEncoding encodings[] = {ONIG_ENCODING_UTF8};
    onig_initialize(encodings, 1);
  });
}

std::string quoted(const std::string& pattern) { return "'" + escaped_for_message(pattern, 120, true) + "'"; }

}  // namespace

struct Regex::Compiled {
  OnigRegex regex = nullptr;
  OnigMatchParam* param = nullptr;
  ~Compiled() {
    if (param) onig_free_match_param(param);
    if (regex) onig_free(regex);
  }
};

Regex::Regex(const std::string& pattern, const std::string& where) : compiled_(new Compiled), pattern_(pattern) {
  initialize_once();
  OnigErrorInfo info;
  const auto* p = reinterpret_cast<const OnigUChar*>(pattern.data());
  const int rc = onig_new(&compiled_->regex, p, p + pattern.size(), ONIG_OPTION_NONE, ONIG_ENCODING_UTF8,
                          ONIG_SYNTAX_RUBY, &info);
  if (rc != ONIG_NORMAL) {
    compiled_->regex = nullptr;
    throw TokenizerError("the pre-tokenizer's regex does not compile (" + where + ": a regex Oniguruma accepts vs " +
                         quoted(pattern) + ": " + escaped_for_message(onig_message(rc, &info), 120) + ")");
  }
  // Limits of this regex's own, so that no global setting of the library is changed.
  compiled_->param = onig_new_match_param();
  onig_initialize_match_param(compiled_->param);
  onig_set_retry_limit_in_match_of_match_param(compiled_->param, kRetryLimit);
  onig_set_match_stack_limit_size_of_match_param(compiled_->param, kStackLimit);
}

Regex::~Regex() = default;

// The onig crate's find_iter: search from the end of the last match; an empty match right where
// the last one ended is not taken, the search moves on by one character instead.
std::vector<Span> Regex::find_matches(std::string_view text) const {
  if (text.empty()) return {{0, 0, false}};
  const auto* start = reinterpret_cast<const OnigUChar*>(text.data());
  const auto* end = start + text.size();
  OnigRegion* region = onig_region_new();
  std::vector<Span> spans;
  std::size_t from = 0, prev = 0;
  bool had_match = false;
  std::size_t last_match_end = 0;
  while (from <= text.size()) {
    const int rc = onig_search_with_param(compiled_->regex, start, end, start + from, end, region, ONIG_OPTION_NONE,
                                          compiled_->param);
    if (rc == ONIG_MISMATCH) break;
    if (rc < 0) {
      onig_region_free(region, 1);
      throw TokenizerError("the pre-tokenizer's regex gave up on the text (pattern " + quoted(pattern_) + ": at most " +
                           std::to_string(kRetryLimit) + " backtracking steps per match vs more, from byte " +
                           std::to_string(from) + ": " + onig_message(rc) + ")");
    }
    const auto s = static_cast<std::size_t>(region->beg[0]), e = static_cast<std::size_t>(region->end[0]);
    if (s == e && had_match && last_match_end == e) {
      std::size_t step = 1;  // one UTF-8 character
      while (from + step < text.size() && (static_cast<unsigned char>(text[from + step]) & 0xC0) == 0x80) ++step;
      from += step;
      continue;
    }
    from = e;
    had_match = true;
    last_match_end = e;
    if (prev != s) spans.push_back({prev, s, false});
    spans.push_back({s, e, true});
    prev = e;
    if (s == e && e == text.size()) break;
  }
  onig_region_free(region, 1);
  if (prev != text.size()) spans.push_back({prev, text.size(), false});
  return spans;
}

std::string escaped_regex(const std::string& literal) {
  std::string out;
  for (char c : literal) {
    if (std::string_view("\\^$.|?*+()[]{}-#& ~").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

}  // namespace attn
