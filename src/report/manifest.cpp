#include "report/manifest.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <string_view>

#include "io/utf8.hpp"

namespace attn::report {

namespace {

// The UTF-8 sequence that starts at s[i] (s[i] >= 0x80): its length when it is valid, else 0, and
// in `skip` how many bytes to step over: the character, or the maximal invalid subsequence that
// one U+FFFD replaces (io/utf8.hpp).
std::size_t utf8_sequence(const std::string& s, std::size_t i, std::size_t& skip) {
  const std::size_t len = utf8_length(s, i);
  skip = len ? len : utf8_invalid_length(s, i);
  return len;
}

}  // namespace

// Bytes that are not UTF-8 (a --tokens "\xff\xfe" passed through from argv) would make the
// whole document unreadable to a JSON parser: each maximal invalid subsequence becomes U+FFFD.
// Valid text passes unchanged.
std::string json_string(const std::string& s) {
  std::string out = "\"";
  const std::size_t n = s.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      std::size_t skip = 0;
      if (utf8_sequence(s, i, skip)) out.append(s, i, skip);
      else out += "\xEF\xBF\xBD";  // U+FFFD
      i += skip;
      continue;
    }
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
    ++i;
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
// (or "none" when its measure is NaN: it then fails the run) and "because" when the answer is not yes.
std::string check_json(const CheckItem& c) {
  std::string j = "{\"kind\": " + std::string(c.question ? "\"question\"" : "\"check\"") +
                  ", \"text\": " + json_string(c.text) + ", \"measure\": " + json_string(c.measure) +
                  ", \"value\": " + number(c.value, "%.17g") + ", \"relation\": " +
                  (c.relation == Relation::AtMost ? "\"<=\"" : "\">=\"") + ", \"bound\": " + number(c.bound, "%.17g") +
                  ", \"passed\": " + (c.passed ? "true" : "false");
  if (c.question) j += std::string(", \"answer\": ") + (unanswered(c) ? "\"none\"" : c.passed ? "\"yes\"" : "\"no\"");
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

// True for text that is a JSON number as written: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
bool is_json_number(const std::string& t) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t from = i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    return i - from;
  };
  if (i < t.size() && t[i] == '-') ++i;
  const std::size_t at = i;
  const std::size_t whole = digits();
  if (whole == 0 || (whole > 1 && t[at] == '0')) return false;
  if (i < t.size() && t[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == t.size();
}

// A setting's value as JSON: a number, true/false for Python's True/False, a list of numbers for
// "[3, 2]" or "(2, 8, 32)", and otherwise the text as a string.
std::string setting_value_json(const std::string& v) {
  if (is_json_number(v)) return v;
  if (v == "True" || v == "False") return v == "True" ? "true" : "false";
  if (v.size() >= 2 && ((v.front() == '[' && v.back() == ']') || (v.front() == '(' && v.back() == ')'))) {
    std::string list = "[";
    std::size_t from = 1;
    bool ok = true;
    while (ok && from < v.size() - 1) {
      std::size_t comma = v.find(',', from);
      if (comma == std::string::npos || comma > v.size() - 1) comma = v.size() - 1;
      std::string item = v.substr(from, comma - from);
      item.erase(0, item.find_first_not_of(' '));
      item.erase(item.find_last_not_of(' ') + 1);
      ok = is_json_number(item);
      list += (list.size() > 1 ? ", " : "") + item;
      from = comma + 1;
    }
    if (ok) return list + "]";
  }
  return json_string(v);
}

// A word that starts a setting's value: a number ("789", "-1", "0.01"), a list, True or False.
bool starts_value(const std::string& word) {
  if (word.empty()) return false;
  const char c = word[0];
  return (c >= '0' && c <= '9') || (c == '-' && word.size() > 1 && word[1] >= '0' && word[1] <= '9') || c == '[' ||
         c == '(' || word == "True" || word == "False";
}

// {"seed": 789, "tokens": 6, ...} and {"seed": "the alignment model"} for the notes.
void setting_json(const std::vector<std::string>& setting, std::string& values, std::string& notes) {
  std::map<std::string, int> seen;
  for (const std::string& item : setting) {
    const SettingEntry e = parse_setting(item);
    const int n = ++seen[e.name];
    const std::string key = json_string(n > 1 ? e.name + "_" + std::to_string(n) : e.name);
    values += (values.empty() ? "" : ", ") + key + ": " + setting_value_json(e.value);
    if (!e.note.empty()) notes += (notes.empty() ? "" : ", ") + key + ": " + json_string(e.note);
  }
}

// A word the shell reads as itself, unquoted.
bool shell_safe(const std::string& w) {
  if (w.empty()) return false;
  for (const char c : w) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::string_view("_-+=@%:,./").find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

// True when `w` is UTF-8 with no control character: it can sit inside single quotes as it is.
bool printable_utf8(const std::string& w) {
  for (std::size_t i = 0, skip = 0; i < w.size(); i += skip) {
    const auto c = static_cast<unsigned char>(w[i]);
    skip = 1;
    if (c < 0x20 || c == 0x7f) return false;
    if (c >= 0x80 && !utf8_sequence(w, i, skip)) return false;
  }
  return true;
}

}  // namespace

std::string tensor_file_name(const Stage& stage, std::size_t item_index) {
  if (item_index < stage.items.size())
    if (const auto* own = std::get_if<TensorItem>(&stage.items[item_index]); own && !own->file_name.empty()) {
      std::string name;  // letters, digits, '_', '-' and inner dots; nothing else reaches a path
      for (char c : own->file_name)
        name += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || (c == '.' && !name.empty())) ? c : '_';
      return name + ".npy";
    }
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

SettingEntry parse_setting(const std::string& item) {
  std::vector<std::string> words;
  std::vector<std::size_t> starts;  // where each word starts in `item`
  for (std::size_t i = 0; i < item.size();) {
    const std::size_t end = std::min(item.find(' ', i), item.size());
    if (end > i) words.push_back(item.substr(i, end - i)), starts.push_back(i);
    i = end + 1;
  }
  if (words.empty()) return {"setting", "", ""};
  auto joins = [](const std::string& w) { return w == "from" || w == "in"; };
  // The first word of the value; never word 0, which is (the start of) the name.
  std::size_t v = words.size() > 1 ? words.size() - 1 : words.size();
  for (std::size_t i = 1; i < words.size(); ++i)
    if (starts_value(words[i]) || (i >= 2 && joins(words[i - 1]))) {
      v = i;
      break;
    }
  const std::size_t name_words = v >= 2 && joins(words[v - 1]) ? v - 1 : v;
  SettingEntry e;
  for (std::size_t i = 0; i < name_words; ++i) e.name += (i ? "_" : "") + words[i];
  std::replace(e.name.begin(), e.name.end(), '-', '_');
  if (v < words.size()) e.value = item.substr(starts[v]);
  // A trailing "(...)" after the value is a note: "789 (the alignment model)".
  const std::size_t open = e.value.find(" (");
  if (open != std::string::npos && e.value.back() == ')') {
    e.note = e.value.substr(open + 2, e.value.size() - open - 3);
    e.value.resize(open);
  }
  return e;
}

std::string shell_command(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& w : words) {
    if (!line.empty()) line += ' ';
    if (shell_safe(w)) {
      line += w;
    } else if (printable_utf8(w)) {
      line += '\'';
      for (const char c : w) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
      line += '\'';
    } else {
      line += "$'";
      for (std::size_t i = 0, skip = 1; i < w.size(); i += skip) {
        const auto c = static_cast<unsigned char>(w[i]);
        std::size_t valid = 0;
        if (c >= 0x80) valid = utf8_sequence(w, i, skip);
        skip = valid ? valid : 1;  // an invalid byte is escaped alone: every byte must survive
        if (valid) {
          line.append(w, i, valid);  // a valid character, as it is
        } else if (c < 0x20 || c >= 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          line += buf;
        } else {
          if (c == '\\' || c == '\'') line += '\\';
          line += static_cast<char>(c);
        }
      }
      line += '\'';
    }
  }
  return line;
}

std::string manifest_json(const Header& header, const std::string& command, const std::deque<Stage>& stages,
                          ValueMode mode, std::size_t inline_limit) {
  // Label lists, each written once: a tensor names its rows' and columns' list by index.
  std::vector<const Labels*> label_lists;
  std::map<Labels, std::size_t> label_index;
  auto label_ref = [&](const Labels& l) {
    const auto [it, added] = label_index.emplace(l, label_lists.size());
    if (added) label_lists.push_back(&l);
    return it->second;
  };
  const Labels* tokens = nullptr;
  for (const Stage& s : stages)
    for (const Item& item : s.items)
      if (const auto* t = std::get_if<TensorItem>(&item)) {
        if (!t->row_labels.empty()) {
          label_ref(t->row_labels);
          if (!tokens) tokens = &t->row_labels;  // the first labelled tensor: the lesson's input
        }
        if (!t->col_labels.empty()) label_ref(t->col_labels);
      }

  std::string setting, notes;
  setting_json(header.setting, setting, notes);
  std::string j = "{\n";
  j += "  \"format\": \"attn-manifest-" + std::to_string(kManifestVersion) + "\",\n";
  j += "  \"version\": " + std::to_string(kManifestVersion) + ",\n";
  j += "  \"lesson\": " + json_string(header.lesson) + ",\n";
  j += "  \"title\": " + json_string(header.title) + ",\n";
  j += "  \"follows\": " + json_string(header.follows) + ",\n";
  j += "  \"command\": " + json_string(command) + ",\n";
  j += "  \"setting\": {" + setting + "},\n";
  j += "  \"setting_notes\": {" + notes + "},\n";
  j += "  \"setting_text\": " + list_json(header.setting) + ",\n";
  j += "  \"reproduce\": " + list_json(header.reproduce) + ",\n";
  if (!header.shown.empty()) {
    // --stage: "stages" below holds only these, each with its number in the full run.
    std::string shown;
    for (std::size_t i = 0; i < header.shown.size(); ++i) shown += (i ? ", " : "") + std::to_string(header.shown[i]);
    j += "  \"stage_selection\": {\"option\": " + json_string(header.selection) + ", \"stages\": [" + shown +
         "], \"of\": " + std::to_string(header.of) + "},\n";
  }
  j += "  \"tokens\": " + (tokens ? list_json(*tokens) : std::string("[]")) + ",\n";
  j += "  \"labels\": [";
  for (std::size_t i = 0; i < label_lists.size(); ++i) j += (i ? ",\n             " : "") + list_json(*label_lists[i]);
  j += "],\n";
  std::size_t passed = 0, failed = 0, questions = 0;
  for (const Stage& s : stages)
    for (const Item& item : s.items)
      if (const auto* c = std::get_if<CheckItem>(&item)) (fails_run(*c) ? failed : c->question ? questions : passed) += 1;
  j += "  \"checks\": {\"passed\": " + std::to_string(passed) + ", \"failed\": " + std::to_string(failed) +
       ", \"questions\": " + std::to_string(questions) + "},\n";
  // Says how to read "tensors": where their values are, and which carry only a summary.
  if (mode == ValueMode::Inline) {
    std::size_t summarised = 0;
    for (const Stage& s : stages)
      for (const Item& item : s.items)
        if (const auto* t = std::get_if<TensorItem>(&item)) summarised += t->values.size() > inline_limit;
    const bool all = inline_limit == std::numeric_limits<std::size_t>::max();
    j += "  \"values\": {\"mode\": \"inline\", \"inline_up_to\": " + (all ? std::string("null") : std::to_string(inline_limit)) +
         ", \"summarised\": " + std::to_string(summarised) + ", \"note\": " +
         json_string(all ? "every tensor has all its values (--full-json)"
                         : "a tensor with more than " + std::to_string(inline_limit) +
                               " values has \"summary\" (count, min, max, mean, non-finite count, first and last " +
                               std::to_string(kJsonEdgeItems) + ") instead of \"values\"; --full-json or --dump DIR gives every value") +
         "},\n";
  } else if (mode == ValueMode::Files) {
    j += "  \"values\": {\"mode\": \"files\", \"note\": \"each tensor's values are in its \\\"file\\\", a float32 .npy beside this manifest\"},\n";
  } else {
    j += "  \"values\": {\"mode\": \"none\", \"note\": \"--shapes-only: names and shapes only, no values were kept\"},\n";
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
      if (mode == ValueMode::Inline) {
        std::size_t pos = 0;
        std::string values;
        if (t->values.size() <= inline_limit) nested(*t, 0, pos, values);
        j += t->values.size() <= inline_limit ? ", \"values\": " + values : ", \"summary\": " + summary_json(*t);
      } else if (mode == ValueMode::Files) {
        j += ", \"file\": " + json_string(tensor_file_name(s, i));
      }
      // Indexes into "labels": the tokens along the second-to-last axis, and the last when they are
      // tokens too.
      if (!t->row_labels.empty()) j += ", \"row_labels\": " + std::to_string(label_ref(t->row_labels));
      if (!t->col_labels.empty()) j += ", \"col_labels\": " + std::to_string(label_ref(t->col_labels));
      j += "}";
    }
    j += first ? "]" : "\n     ]";
    j += ",\n     \"checks\": [" + checks + (checks.empty() ? "]}" : "\n     ]}");
  }
  j += "\n  ]\n}\n";
  return j;
}

}  // namespace attn::report
