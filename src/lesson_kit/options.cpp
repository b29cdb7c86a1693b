#include "lesson_kit/options.hpp"

#include <cstdio>

namespace attn {
namespace {

std::string report_large(long double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2Le", v);
  return buf;
}

}  // namespace

const std::vector<OptionName>& option_names() {
  static const std::vector<OptionName> names = {
      {kSeed, "--seed"},     {kBatch, "--batch"}, {kSeqLen, "--seq-len"},
      {kDIn, "--d-in"},      {kDOut, "--d-out"},  {kHeads, "--heads"},
      {kCausal, "--causal"}, {kQkvBias, "--qkv-bias"}, {kTokens, "--tokens"},
      {kSrc, "--src"},       {kTgt, "--tgt"},     {kHidden, "--hidden"},
      {kInput, "--input"},   {kWeights, "--weights"}, {kKvHeads, "--kv-heads"},
      {kStates, "--states"},
  };
  return names;
}

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

}  // namespace attn
