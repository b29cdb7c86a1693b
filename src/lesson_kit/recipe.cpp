// The "reproduce in PyTorch" lines rendered from the steps a lesson recorded (recipe.hpp).
#include "lesson_kit/recipe.hpp"

#include <cctype>

// GCC 12 reports -Wmaybe-uninitialized inside std::variant's move constructor when a vector of
// steps grows (a known false positive, GCC bug 105593 and relatives); nothing here is uninitialised.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace attn::recipe {
namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}


std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

// Nested Python lists of `values` for `shape`, from axis `axis` on, starting at `offset`.
std::string nested(const Shape& shape, const std::vector<float>& values, std::size_t axis, std::size_t& offset) {
  if (axis == shape.size()) return float_literal(values[offset++]);
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < shape[axis]; ++i) parts.push_back(nested(shape, values, axis + 1, offset));
  return "[" + join(parts, ", ") + "]";
}

// The same for whole numbers, written without a decimal point (an int64 tensor in PyTorch).
std::string whole_numbers(const Shape& shape, const std::vector<std::size_t>& values, std::size_t axis,
                          std::size_t& offset) {
  if (axis == shape.size()) return std::to_string(values[offset++]);
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < shape[axis]; ++i) parts.push_back(whole_numbers(shape, values, axis + 1, offset));
  return "[" + join(parts, ", ") + "]";
}

bool all_in_book(const Words& w) {
  if (w.book.empty() || w.sentences.size() != 1) return false;
  for (const auto& word : w.sentences[0]) {
    std::string key = word;
    for (auto& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!w.book.count(key)) return false;
  }
  return true;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

void render_words(const Words& w, std::vector<std::string>& out) {
  if (all_in_book(w)) {
    // The book's own literal, one token per line.
    const auto& words = w.sentences[0];
    for (std::size_t t = 0; t < words.size(); ++t) {
      std::vector<std::string> v;
      for (float f : w.book.at(lower(words[t]))) v.push_back(float_literal(f));
      const std::string lead = t == 0 ? w.name + " = torch.tensor([" : std::string(w.name.size() + 17, ' ');
      const std::string tail = t + 1 == words.size() ? "])" : ",";
      out.push_back(lead + "[" + join(v, ", ") + "]" + tail + "  # " + words[t]);
    }
    return;
  }
  // Only the book words this input uses.
  std::vector<std::string> used;
  std::set<std::string> seen;
  for (const auto& s : w.sentences)
    for (const auto& word : s) {
      const std::string key = lower(word);
      if (w.book.count(key) && seen.insert(key).second) used.push_back(key);
    }
  if (!used.empty()) {
    std::vector<std::string> entries;
    for (const auto& key : used) {
      std::vector<std::string> v;
      for (float f : w.book.at(key)) v.push_back(float_literal(f));
      entries.push_back(py_string(key, true) + ": [" + join(v, ", ") + "]");
    }
    out.push_back("book = {" + join(entries, ", ") + "}  # the book's 3-d embeddings");
  }
  out.push_back("def embed(word):  # a word's vector: " +
                std::string(used.empty() ? "" : "the book's, or ") + "seeded by fnv1a32(word.lower())");
  out.push_back("    word = word.lower()");
  if (!used.empty()) out.push_back("    if word in book: return torch.tensor(book[word])");
  out.push_back("    seed = 2166136261");
  out.push_back("    for byte in word: seed = (seed ^ byte) * 16777619 % 2**32");
  out.push_back("    torch.manual_seed(seed)");
  out.push_back("    return torch.rand(" + std::to_string(w.d_in) + ")");
  auto sentence = [](const std::vector<std::string>& words) { return py_string(join(words, " "), true); };
  if (w.sentences.size() == 1) {
    out.push_back(w.name + " = torch.stack([embed(w) for w in " + sentence(w.sentences[0]) + ".split()])");
  } else {
    std::vector<std::string> all;
    bool ragged = false;  // sentences of different lengths: padded with zero rows to the longest
    for (const auto& s : w.sentences) {
      all.push_back(sentence(s));
      ragged = ragged || s.size() != w.sentences[0].size();
    }
    const std::string each = "[torch.stack([embed(w) for w in s.split()]) for s in (" + join(all, ", ") + ")]";
    out.push_back(w.name + " = " +
                  (ragged ? "torch.nn.utils.rnn.pad_sequence(" + each + ", batch_first=True)"
                          : "torch.stack(" + each + ")"));
  }
}

}  // namespace

std::string py_string(const std::string& s, bool bytes) {
  std::string out = bytes ? "b\"" : "\"";
  for (unsigned char c : s) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else if (!bytes && c >= 0x80) {
      out += static_cast<char>(c);  // UTF-8 passes through a str literal unchanged
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out + "\"";
}

std::string float_literal(float v) {
  if (std::isnan(v)) return "float(\"nan\")";
  if (std::isinf(v)) return v > 0 ? "float(\"inf\")" : "-float(\"inf\")";
  char buf[32];
  for (int digits = 1; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(v));
    // Python reads the literal as a double, torch rounds it to float32: the same two roundings.
    if (static_cast<float>(std::strtod(buf, nullptr)) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".";  // 1 -> 1., a float literal
  return s;
}

Recipe& Recipe::seed(TorchGenerator& gen, std::uint64_t s) {
  gen = TorchGenerator(s);
  steps_.push_back(Seed{s});
  return *this;
}

Recipe& Recipe::add(Step step) {
  steps_.push_back(std::move(step));
  return *this;
}

bool Recipe::uses_seed() const {
  bool seeded = false;
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    if (std::holds_alternative<Seed>(steps_[i])) seeded = true;
    if (std::holds_alternative<Words>(steps_[i])) seeded = false;  // embed() reseeds per word
    if (!seeded) continue;
    if (std::holds_alternative<Rand>(steps_[i]) || std::holds_alternative<Embedding>(steps_[i]) ||
        std::holds_alternative<Uniform>(steps_[i]))
      return true;
    if (const auto* l = std::get_if<Linear>(&steps_[i])) {
      bool replaced = false;
      for (std::size_t j = i + 1; j < steps_.size(); ++j)
        if (const auto* load = std::get_if<Load>(&steps_[j]))
          replaced = replaced || load->target == l->name + ".weight";
      if (!replaced) return true;
    }
  }
  return false;
}

std::vector<std::string> with_imports(std::vector<std::string> lines) {
  // A word is used when it starts a line or follows a character that cannot be part of a name.
  auto uses = [&](const std::string& prefix) {
    for (const auto& line : lines) {
      if (line.rfind("#", 0) == 0) continue;  // a comment line runs nothing
      for (auto at = line.find(prefix); at != std::string::npos; at = line.find(prefix, at + 1))
        if (at == 0 || !(std::isalnum(static_cast<unsigned char>(line[at - 1])) || line[at - 1] == '_')) return true;
    }
    return false;
  };
  std::vector<std::string> out = {uses("np.") ? "import numpy as np, torch" : "import torch"};
  if (uses("nn.")) out.push_back("from torch import nn");
  out.insert(out.end(), lines.begin(), lines.end());
  return out;
}

std::vector<std::string> Recipe::lines() const {
  bool numpy = false, nn = false;
  for (const auto& s : steps_) {
    numpy = numpy || std::holds_alternative<Load>(s);
    nn = nn || std::holds_alternative<Linear>(s) || std::holds_alternative<Embedding>(s);
  }
  std::vector<std::string> out = {numpy ? "import numpy as np, torch" : "import torch"};
  if (nn) out.push_back("from torch import nn");
  for (const auto& step : steps_)
    std::visit(Overloaded{
                   [&](const Seed& s) { out.push_back("torch.manual_seed(" + std::to_string(s.seed) + ")"); },
                   [&](const Rand& r) {
                     out.push_back(r.name + " = torch.rand(" + std::to_string(r.rows) + ", " + std::to_string(r.cols) +
                                   ")");
                   },
                   [&](const Linear& l) {
                     out.push_back(l.name + " = nn.Linear(" + std::to_string(l.in) + ", " + std::to_string(l.out) +
                                   (l.bias ? "" : ", bias=False") + ")");
                   },
                   [&](const Words& w) { render_words(w, out); },
                   [&](const Literal& l) {
                     std::size_t offset = 0;
                     out.push_back(l.name + " = torch.tensor(" + nested(l.shape, l.values, 0, offset) + ")");
                   },
                   [&](const Load& l) {
                     const bool text = !ends_with(l.path, ".npy");
                     // attn's text reader splits on commas, semicolons and white space alike.
                     const std::string read =
                         text ? "np.loadtxt((line.replace(\",\", \" \").replace(\";\", \" \") for line in open(" +
                                    py_string(l.path, false) + ")), ndmin=2)"
                              : "np.load(" + py_string(l.path, false) + ")";
                     const bool param = l.target.find('.') != std::string::npos;
                     out.push_back(l.target + (param ? ".data" : "") + " = torch.tensor(" + read +
                                   ", dtype=torch.float32)" + (l.transpose ? ".T" : ""));
                   },
                   [&](const Stack& s) {
                     out.push_back(s.copies == 1 ? s.name + " = " + s.name + ".unsqueeze(0)"
                                                 : s.name + " = torch.stack([" + s.name + "] * " +
                                                       std::to_string(s.copies) + ")");
                   },
                   [&](const Comment& c) { out.push_back("# " + c.text); },
                   [&](const Embedding& e) {
                     out.push_back(e.name + " = nn.Embedding(" + std::to_string(e.num) + ", " +
                                   std::to_string(e.dim) + ")");
                   },
                   [&](const Uniform& u) {
                     out.push_back(u.name + " = torch.empty(" + std::to_string(u.n) + ").uniform_(" +
                                   float_literal(u.lo) + ", " + float_literal(u.hi) + ")");
                   },
                   [&](const Ids& ids) {
                     std::size_t offset = 0;
                     out.push_back(ids.name + " = torch.tensor(" + whole_numbers(ids.shape, ids.values, 0, offset) +
                                   ")");
                   },
               },
               step);
  return out;
}

}  // namespace attn::recipe
