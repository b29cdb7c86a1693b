// Pre-tokenizer steps (pre_tokenizer.hpp), as Hugging Face's ByteLevel and Split apply them.
#include "io/pre_tokenizer.hpp"

#include <algorithm>

#include "io/byte_level.hpp"

namespace attn {

const char* const kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

namespace {

// Hugging Face's NormalizedString::split: the spans, regrouped by `behavior`, empty ones dropped.
std::vector<Span> regroup(std::vector<Span> spans, SplitBehavior behavior) {
  std::vector<Span> out;
  switch (behavior) {
    case SplitBehavior::Isolated:
      for (auto& s : spans) out.push_back({s.begin, s.end, false});
      break;
    case SplitBehavior::Removed:
      for (auto& s : spans)
        if (!s.match) out.push_back(s);
      break;
    case SplitBehavior::Contiguous:
      for (auto& s : spans) {
        if (!out.empty() && out.back().match == s.match) out.back().end = s.end;
        else out.push_back(s);
      }
      break;
    case SplitBehavior::MergedWithPrevious: {
      bool previous_match = false;
      for (auto& s : spans) {
        if (s.match && !previous_match && !out.empty()) out.back().end = s.end;
        else out.push_back({s.begin, s.end, false});
        previous_match = s.match;
      }
      break;
    }
    case SplitBehavior::MergedWithNext: {
      bool previous_match = false;  // walking backwards: the span after this one
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        if (it->match && !previous_match && !out.empty()) out.back().begin = it->begin;
        else out.push_back({it->begin, it->end, false});
        previous_match = it->match;
      }
      std::reverse(out.begin(), out.end());
      break;
    }
  }
  std::vector<Span> kept;
  for (auto& s : out)
    if (s.end > s.begin) kept.push_back(s);
  return kept;
}

void apply(const PreTokenizerStep& step, const std::string& piece, std::vector<std::string>& out) {
  if (step.kind == PreTokenizerStep::Kind::Split) {
    std::vector<Span> spans = step.regex->find_matches(piece);
    if (step.invert)
      for (auto& s : spans) s.match = !s.match;
    for (const Span& s : regroup(std::move(spans), step.behavior)) out.push_back(piece.substr(s.begin, s.end - s.begin));
    return;
  }
  // ByteLevel: the prefix space makes a text's first word look like every other word (" Hello").
  const std::string text = step.add_prefix_space && (piece.empty() || piece[0] != ' ') ? " " + piece : piece;
  if (!step.regex) {
    if (!text.empty()) out.push_back(byte_level::encode(text));
    return;
  }
  for (const Span& s : step.regex->find_matches(text))
    if (s.end > s.begin) out.push_back(byte_level::encode(std::string_view(text).substr(s.begin, s.end - s.begin)));
}

}  // namespace

std::vector<std::string> PreTokenizer::split(std::string_view text) const {
  std::vector<std::string> pieces{std::string(text)};
  for (const PreTokenizerStep& step : steps_) {
    std::vector<std::string> next;
    for (const std::string& piece : pieces) apply(step, piece, next);
    pieces = std::move(next);
  }
  if (steps_.empty() && text.empty()) pieces.clear();
  return pieces;
}

bool PreTokenizer::byte_level() const {
  for (const auto& s : steps_)
    if (s.kind == PreTokenizerStep::Kind::ByteLevel) return true;
  return false;
}

}  // namespace attn
