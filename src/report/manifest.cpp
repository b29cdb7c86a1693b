#include "report/manifest.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

namespace attn::report {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

namespace {

std::string sanitize(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (ok) out += c;
    else if (!out.empty() && out.back() != '_') out += '_';
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "tensor" : out;
}

std::string number(double v, const char* format = "%.9g") {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v < 0 ? "\"-inf\"" : "\"inf\"";
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);  // %.9g: enough digits to read back the same float
  return buf;
}

// {"kind": "check", "text": ..., "measure": ..., "value": ..., "relation": "<=", "bound": ...,
//  "passed": true, "line": "check passed: ..."}; a question has kind "question", "answer" yes/no
// and "because" when the answer is no.
std::string check_json(const CheckItem& c) {
  std::string j = "{\"kind\": " + std::string(c.question ? "\"question\"" : "\"check\"") +
                  ", \"text\": " + json_string(c.text) + ", \"measure\": " + json_string(c.measure) +
                  ", \"value\": " + number(c.value, "%.17g") + ", \"relation\": " +
                  (c.relation == Relation::AtMost ? "\"<=\"" : "\">=\"") + ", \"bound\": " + number(c.bound, "%.17g") +
                  ", \"passed\": " + (c.passed ? "true" : "false");
  if (c.question) j += std::string(", \"answer\": ") + (c.passed ? "\"yes\"" : "\"no\"");
  if (!c.because.empty()) j += ", \"because\": " + json_string(c.because);
  return j + ", \"line\": " + json_string(check_text(c)) + "}";
}

// Nested lists in row-major order: [[1, 2], [3, 4]].
void nested(const TensorItem& t, std::size_t dim, std::size_t& pos, std::string& out) {
  if (t.shape.empty()) {
    out += number(t.values.at(0));
    return;
  }
  out += '[';
  for (std::size_t i = 0; i < t.shape[dim]; ++i) {
    if (i) out += ", ";
    if (dim + 1 == t.shape.size()) out += number(t.values[pos++]);
    else nested(t, dim + 1, pos, out);
  }
  out += ']';
}

// A tensor too large to write out in --format json: how many values, their range and mean (over
// the finite ones), how many are not finite, and the first and last few in row-major order.
std::string summary_json(const TensorItem& t) {
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  std::size_t finite = 0;
  for (const float v : t.values)
    if (std::isfinite(v)) {
      lo = std::min<double>(lo, v);
      hi = std::max<double>(hi, v);
      sum += v;
      ++finite;
    }
  const std::size_t n = t.values.size(), edge = std::min<std::size_t>(kJsonEdgeItems, n);
  std::string first, last;
  for (std::size_t i = 0; i < edge; ++i) {
    first += (i ? ", " : "") + number(t.values[i]);
    last += (i ? ", " : "") + number(t.values[n - edge + i]);
  }
  return "{\"values\": " + std::to_string(n) + ", \"min\": " + (finite ? number(lo) : "null") +
         ", \"max\": " + (finite ? number(hi) : "null") + ", \"mean\": " + (finite ? number(sum / finite) : "null") +
         ", \"nonfinite\": " + std::to_string(n - finite) + ", \"first\": [" + first + "], \"last\": [" + last + "]}";
}

std::string shape_json(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string list_json(const std::vector<std::string>& items) {
  std::string s = "[";
  for (std::size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + json_string(items[i]);
  return s + "]";
}

}  // namespace

std::string tensor_file_name(const Stage& stage, std::size_t item_index) {
  std::map<std::string, int> seen;
  std::string result;
  for (std::size_t i = 0; i <= item_index && i < stage.items.size(); ++i) {
    const auto* t = std::get_if<TensorItem>(&stage.items[i]);
    if (!t) continue;
    const std::string base = sanitize(t->name);
    const int n = ++seen[base];
    result = base + (n > 1 ? "_" + std::to_string(n) : "");
  }
  char prefix[16];
  std::snprintf(prefix, sizeof prefix, "s%02zu_", stage.index);
  return prefix + result + ".npy";
}

std::string manifest_json(const Header& header, const std::string& command, const std::deque<Stage>& stages,
                          bool inline_values, std::size_t inline_limit) {
  std::string j = "{\n";
  j += "  \"format\": \"attn-manifest-2\",\n";
  j += "  \"lesson\": " + json_string(header.lesson) + ",\n";
  j += "  \"title\": " + json_string(header.title) + ",\n";
  j += "  \"follows\": " + json_string(header.follows) + ",\n";
  j += "  \"command\": " + json_string(command) + ",\n";
  j += "  \"setting\": " + list_json(header.setting) + ",\n";
  j += "  \"reproduce\": " + list_json(header.reproduce) + ",\n";
  if (!header.shown.empty()) {
    // --stage: "stages" below holds only these, each with its number in the full run.
    std::string shown;
    for (std::size_t i = 0; i < header.shown.size(); ++i) shown += (i ? ", " : "") + std::to_string(header.shown[i]);
    j += "  \"stage_selection\": {\"option\": " + json_string(header.selection) + ", \"stages\": [" + shown +
         "], \"of\": " + std::to_string(header.of) + "},\n";
  }
  std::size_t passed = 0, failed = 0, questions = 0;
  for (const Stage& s : stages)
    for (const Item& item : s.items)
      if (const auto* c = std::get_if<CheckItem>(&item)) (c->question ? questions : c->passed ? passed : failed) += 1;
  j += "  \"checks\": {\"passed\": " + std::to_string(passed) + ", \"failed\": " + std::to_string(failed) +
       ", \"questions\": " + std::to_string(questions) + "},\n";
  if (inline_values) {
    // Says how to read "tensors": which carry every value, which only a summary.
    std::size_t summarised = 0;
    for (const Stage& s : stages)
      for (const Item& item : s.items)
        if (const auto* t = std::get_if<TensorItem>(&item)) summarised += t->values.size() > inline_limit;
    const bool all = inline_limit == std::numeric_limits<std::size_t>::max();
    j += "  \"values\": {\"inline_up_to\": " + (all ? std::string("null") : std::to_string(inline_limit)) +
         ", \"summarised\": " + std::to_string(summarised) + ", \"note\": " +
         json_string(all ? "every tensor has all its values (--full-json)"
                         : "a tensor with more than " + std::to_string(inline_limit) +
                               " values has \"summary\" (count, min, max, mean, non-finite count, first and last " +
                               std::to_string(kJsonEdgeItems) + ") instead of \"values\"; --full-json or --dump DIR gives every value") +
         "},\n";
  }
  j += "  \"stages\": [";
  for (std::size_t si = 0; si < stages.size(); ++si) {
    const Stage& s = stages[si];
    j += si ? ",\n" : "\n";
    j += "    {\"index\": " + std::to_string(s.index) + ", \"title\": " + json_string(s.title) +
         ", \"equation\": " + json_string(s.equation) + ",\n     \"inputs\": [";
    for (std::size_t i = 0; i < s.inputs.size(); ++i)
      j += std::string(i ? ", " : "") + "{\"name\": " + json_string(s.inputs[i].name) +
           ", \"shape\": " + shape_json(s.inputs[i].shape) + "}";
    j += "],\n     \"tensors\": [";
    bool first = true;
    std::string checks;
    for (std::size_t i = 0; i < s.items.size(); ++i) {
      if (const auto* c = std::get_if<CheckItem>(&s.items[i]))
        checks += (checks.empty() ? "\n       " : ",\n       ") + check_json(*c);
      const auto* t = std::get_if<TensorItem>(&s.items[i]);
      if (!t) continue;
      j += first ? "\n" : ",\n";
      first = false;
      j += "       {\"name\": " + json_string(t->name) + ", \"shape\": " + shape_json(t->shape);
      if (t->attention) j += ", \"attention\": true";
      if (!t->curve_x.empty()) j += ", \"curve_x\": " + json_string(t->curve_x);
      if (inline_values) {
        std::size_t pos = 0;
        std::string values;
        if (t->values.size() <= inline_limit) nested(*t, 0, pos, values);
        j += t->values.size() <= inline_limit ? ", \"values\": " + values : ", \"summary\": " + summary_json(*t);
      } else {
        j += ", \"file\": " + json_string(tensor_file_name(s, i));
      }
      j += "}";
    }
    j += first ? "]" : "\n     ]";
    j += ",\n     \"checks\": [" + checks + (checks.empty() ? "]}" : "\n     ]}");
  }
  j += "\n  ]\n}\n";
  return j;
}

}  // namespace attn::report
