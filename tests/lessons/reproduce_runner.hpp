// Runs a lesson header's "reproduce in PyTorch" lines, as printed, without PyTorch.
//
// The lines come from lessons/recipe.* and use a small subset of Python: torch.manual_seed,
// torch.rand, nn.Linear, torch.tensor of a literal or of np.load / np.loadtxt (optionally .T, or
// assigned to a layer's .weight.data / .bias.data), the embed() helper for words, torch.stack and
// unsqueeze, nn.Embedding (normal_), torch.empty(n).uniform_(lo, hi) and a literal of whole
// numbers (token ids). This reads each line back and does what PyTorch would do with it, using the
// project's TorchGenerator (which draws what torch.manual_seed + torch.rand / nn.Linear draw) and
// the .npy and text readers. torch.rand of three sizes and pad_sequence over embedded sentences
// of different lengths are known too (the padding lesson). A line it does not recognise fails the test, so a new kind of line
// needs a rule here (and a run with real PyTorch, see docs/testing.md).
//
// Legend: B batch, T tokens, d_in input width.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "core/generator.hpp"
#include "core/linear.hpp"
#include "io/npy.hpp"
#include "io/text_matrix.hpp"

namespace attn::test {

struct Held {
  Shape shape;
  std::vector<float> values;  // C order
};

namespace detail {

// The body of a Python string literal ("..." or b"..."): \\, \" and \xNN undone.
inline std::string unescape(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
    } else if (s[i + 1] == 'x') {
      out += static_cast<char>(std::stoi(s.substr(i + 2, 2), nullptr, 16));
      i += 3;
    } else {
      out += s[++i];
    }
  }
  return out;
}

inline std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::string w;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
      if (!w.empty()) out.push_back(w);
      w.clear();
    } else {
      w += c;
    }
  }
  if (!w.empty()) out.push_back(w);
  return out;
}

inline std::string ascii_lower(std::string s) {
  for (auto& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

// 32-bit FNV-1a, as the embed() lines spell it out.
inline std::uint32_t fnv1a(const std::string& s) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

// A nested Python list of numbers: its shape and values (each read as Python and torch read it:
// a double, rounded once to float32).
inline void parse_nested(const std::string& s, std::size_t& i, std::size_t depth, Shape& shape,
                         std::vector<std::size_t>& counts, std::vector<float>& values) {
  while (s[i] == ' ') ++i;
  if (s[i] == '[') {
    ++i;
    if (shape.size() <= depth) shape.push_back(0), counts.push_back(0);
    std::size_t n = 0;
    for (;;) {
      while (s[i] == ' ') ++i;
      if (s[i] == ']') {
        ++i;
        break;
      }
      parse_nested(s, i, depth + 1, shape, counts, values);
      ++n;
      while (s[i] == ' ') ++i;
      if (s[i] == ',') ++i;
    }
    if (counts[depth]++ == 0) shape[depth] = n;
    REQUIRE_MESSAGE(shape[depth] == n, "ragged literal at depth " << depth);
    return;
  }
  char* end = nullptr;
  const double v = std::strtod(s.c_str() + i, &end);
  REQUIRE_MESSAGE(end != s.c_str() + i, "not a number at: " << s.substr(i, 20));
  values.push_back(static_cast<float>(v));
  i = static_cast<std::size_t>(end - s.c_str());
}

inline Held transpose(const Held& m) {
  REQUIRE(m.shape.size() == 2);
  Held t{{m.shape[1], m.shape[0]}, std::vector<float>(m.values.size())};
  for (std::size_t i = 0; i < m.shape[0]; ++i)
    for (std::size_t j = 0; j < m.shape[1]; ++j) t.values[j * m.shape[0] + i] = m.values[i * m.shape[1] + j];
  return t;
}

}  // namespace detail

// Every variable and parameter the lines make: "x", "W_query", "W_query.weight", "out_proj.bias".
inline std::map<std::string, Held> run_reproduce(const std::vector<std::string>& lines) {
  using detail::unescape;
  std::map<std::string, Held> vars;
  TorchGenerator gen(67280421310721ull);  // PyTorch's default seed, as if no manual_seed ran
  std::map<std::string, std::vector<float>> book;
  std::size_t embed_width = 0;  // d_in of embed(), once defined
  bool embed_uses_book = false;
  const std::string q = "\"((?:[^\"\\\\]|\\\\.)*)\"";  // a string literal's body
  const std::regex seed_re(R"(torch\.manual_seed\((\d+)\))");
  const std::regex rand_re(R"((\w+) = torch\.rand\((\d+), (\d+)\))");
  const std::regex rand3_re(R"((\w+) = torch\.rand\((\d+), (\d+), (\d+)\))");
  const std::regex linear_re(R"((\w+) = nn\.Linear\((\d+), (\d+)(, bias=False)?\))");
  const std::regex embedding_re(R"((\w+) = nn\.Embedding\((\d+), (\d+)\))");
  const std::regex uniform_re(R"((\w+) = torch\.empty\((\d+)\)\.uniform_\(([-+.e\d]+), ([-+.e\d]+)\))");
  const std::string text_lines = R"(\(line\.replace\(",", " "\)\.replace\(";", " "\) for line in open\()";
  const std::regex load_re("([\\w.]+?)(\\.data)? = torch\\.tensor\\(np\\.(load\\(|loadtxt\\(" + text_lines + ")" + q +
                           "(\\)\\), ndmin=2\\)|\\)), dtype=torch\\.float32\\)(\\.T)?");
  const std::regex stack_re(R"((\w+) = torch\.stack\(\[(\w+)\] \* (\d+)\))");
  const std::regex unsqueeze_re(R"((\w+) = (\w+)\.unsqueeze\(0\))");
  const std::regex book_re(R"(book = \{(.*)\}  # the book's 3-d embeddings)");
  const std::regex book_entry_re("b" + q + ": \\[([^\\]]*)\\]");
  const std::regex embed_one_re("(\\w+) = torch\\.stack\\(\\[embed\\(w\\) for w in b" + q + "\\.split\\(\\)\\]\\)");
  const std::regex embed_many_re(
      R"((\w+) = torch\.stack\(\[torch\.stack\(\[embed\(w\) for w in s\.split\(\)\]\) for s in \((.*)\)\]\))");
  // Sentences of different lengths, padded with zero rows to the longest (batch_first).
  const std::regex embed_padded_re(
      R"((\w+) = torch\.nn\.utils\.rnn\.pad_sequence\(\[torch\.stack\(\[embed\(w\) for w in s\.split\(\)\]\) )"
      R"(for s in \((.*)\)\], batch_first=True\))");
  const std::regex bytes_re("b" + q);
  const std::regex literal_re(R"((\w+) = torch\.tensor\((.*))");
  const std::regex rand_width_re(R"(    return torch\.rand\((\d+)\))");

  auto embed = [&](const std::string& word) {
    REQUIRE_MESSAGE(embed_width > 0, "embed() used before it was defined");
    const std::string key = detail::ascii_lower(word);
    if (embed_uses_book && book.count(key)) return book.at(key);
    gen = TorchGenerator(detail::fnv1a(key));
    const Vec v = gen.rand(embed_width);  // (d_in,)
    return std::vector<float>(v.begin(), v.end());
  };
  auto sentence = [&](const std::string& words) {
    Held m{{0, embed_width}, {}};
    for (const auto& w : detail::split_words(words)) {
      const auto v = embed(w);
      m.values.insert(m.values.end(), v.begin(), v.end());
      ++m.shape[0];
    }
    return m;
  };

  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    std::smatch m;
    INFO("reproduce line: " << line);
    if (line.rfind("import ", 0) == 0 || line == "from torch import nn" || line.rfind("#", 0) == 0) continue;
    if (std::regex_match(line, m, seed_re)) {
      gen = TorchGenerator(std::stoull(m[1]));
    } else if (std::regex_match(line, m, rand_re)) {
      const Mat r = gen.rand(std::stoul(m[2]), std::stoul(m[3]));  // (rows, cols)
      vars[m[1]] = {{r.shape()[0], r.shape()[1]}, {r.begin(), r.end()}};
    } else if (std::regex_match(line, m, rand3_re)) {
      const Ten3 r = gen.rand(std::stoul(m[2]), std::stoul(m[3]), std::stoul(m[4]));  // (b, rows, cols)
      vars[m[1]] = {{r.shape()[0], r.shape()[1], r.shape()[2]}, {r.begin(), r.end()}};
    } else if (std::regex_match(line, m, linear_re)) {
      const std::size_t in = std::stoul(m[2]), out = std::stoul(m[3]);
      const Linear l = make_linear(gen, in, out, !m[4].matched);
      vars[std::string(m[1]) + ".weight"] = {{out, in}, {l.weight.begin(), l.weight.end()}};
      if (l.has_bias()) vars[std::string(m[1]) + ".bias"] = {{out}, {l.bias.begin(), l.bias.end()}};
    } else if (std::regex_match(line, m, embedding_re)) {
      const Mat w = gen.randn(std::stoul(m[2]), std::stoul(m[3]));  // (num, dim): what normal_ draws
      vars[std::string(m[1]) + ".weight"] = {{w.shape()[0], w.shape()[1]}, {w.begin(), w.end()}};
    } else if (std::regex_match(line, m, uniform_re)) {
      std::vector<float> v(std::stoul(m[2]));  // (n,)
      // Python reads each bound as a double; torch hands uniform_ that double.
      gen.uniform_(v.data(), v.size(), static_cast<float>(std::strtod(m[3].str().c_str(), nullptr)),
                   static_cast<float>(std::strtod(m[4].str().c_str(), nullptr)));
      vars[m[1]] = {{v.size()}, v};
    } else if (std::regex_match(line, m, load_re)) {
      const std::string path = unescape(m[4]);
      const bool text = m[3] != "load(";
      REQUIRE((m[5] == ")), ndmin=2)") == text);
      const NpyArray a = text ? read_text_matrix(path) : read_npy(path);
      Held h{a.shape, a.values};
      if (m[6].matched) h = detail::transpose(h);
      const std::string target = m[1];
      // A parameter keeps its shape: .data = ... must fit what nn.Linear made.
      if (m[2].matched) {
        REQUIRE_MESSAGE(vars.count(target), target << " assigned before its layer exists");
        REQUIRE(vars.at(target).shape == h.shape);
      }
      vars[target] = h;
    } else if (std::regex_match(line, m, stack_re)) {
      REQUIRE(m[1] == m[2]);
      const Held one = vars.at(m[2]);
      Held out{{std::stoul(m[3])}, {}};
      out.shape.insert(out.shape.end(), one.shape.begin(), one.shape.end());
      for (std::size_t b = 0; b < out.shape[0]; ++b) out.values.insert(out.values.end(), one.values.begin(), one.values.end());
      vars[m[1]] = out;
    } else if (std::regex_match(line, m, unsqueeze_re)) {
      Held one = vars.at(m[2]);
      one.shape.insert(one.shape.begin(), 1);
      vars[m[1]] = one;
    } else if (std::regex_match(line, m, book_re)) {
      const std::string entries = m[1];
      for (std::sregex_iterator it(entries.begin(), entries.end(), book_entry_re), end; it != end; ++it) {
        Shape s;
        std::vector<std::size_t> counts;
        std::vector<float> v;
        const std::string list = "[" + (*it)[2].str() + "]";
        std::size_t pos = 0;
        detail::parse_nested(list, pos, 0, s, counts, v);
        book[unescape((*it)[1])] = v;
      }
    } else if (line.rfind("def embed(word):", 0) == 0) {
      // The body, line by line, exactly as recipe.cpp writes it.
      std::vector<std::string> body;
      while (i + 1 < lines.size() && lines[i + 1].rfind("    ", 0) == 0) body.push_back(lines[++i]);
      std::vector<std::string> expected = {"    word = word.lower()",
                                           "    if word in book: return torch.tensor(book[word])",
                                           "    seed = 2166136261",
                                           "    for byte in word: seed = (seed ^ byte) * 16777619 % 2**32",
                                           "    torch.manual_seed(seed)"};
      embed_uses_book = body.size() == 6;
      if (!embed_uses_book) expected.erase(expected.begin() + 1);
      REQUIRE(body.size() == expected.size() + 1);
      for (std::size_t k = 0; k < expected.size(); ++k) CHECK(body[k] == expected[k]);
      REQUIRE(std::regex_match(body.back(), m, rand_width_re));
      embed_width = std::stoul(m[1]);
    } else if (std::regex_match(line, m, embed_one_re)) {
      vars[m[1]] = sentence(unescape(m[2]));
    } else if (std::regex_match(line, m, embed_many_re)) {
      const std::string all = m[2];
      Held out{{0}, {}};
      for (std::sregex_iterator it(all.begin(), all.end(), bytes_re), end; it != end; ++it) {
        const Held one = sentence(unescape((*it)[1]));
        if (out.shape[0]++ == 0) out.shape.insert(out.shape.end(), one.shape.begin(), one.shape.end());
        REQUIRE(Shape(out.shape.begin() + 1, out.shape.end()) == one.shape);
        out.values.insert(out.values.end(), one.values.begin(), one.values.end());
      }
      vars[m[1]] = out;
    } else if (std::regex_match(line, m, embed_padded_re)) {
      const std::string all = m[2];
      std::vector<Held> each;
      std::size_t longest = 0;
      for (std::sregex_iterator it(all.begin(), all.end(), bytes_re), end; it != end; ++it) {
        each.push_back(sentence(unescape((*it)[1])));
        longest = std::max(longest, each.back().shape[0]);
      }
      Held out{{each.size(), longest, embed_width}, {}};
      for (const Held& one : each) {
        out.values.insert(out.values.end(), one.values.begin(), one.values.end());
        out.values.insert(out.values.end(), (longest - one.shape[0]) * embed_width, 0.0f);  // pad_sequence's zeros
      }
      vars[m[1]] = out;
    } else if (std::regex_match(line, m, literal_re)) {
      // Possibly several lines; "# ..." comments end each.
      std::string text;
      for (std::size_t k = i;; ++k) {
        REQUIRE(k < lines.size());
        std::string part = k == i ? std::string(m[2]) : lines[k];
        const auto hash = part.find('#');
        if (hash != std::string::npos) part.erase(hash);
        text += part;
        i = k;
        int depth = 0;
        for (char c : text) depth += c == '[' ? 1 : c == ']' ? -1 : 0;
        if (depth == 0 && text.find(')') != std::string::npos) break;
      }
      Held h;
      std::vector<std::size_t> counts;
      std::size_t pos = 0;
      detail::parse_nested(text, pos, 0, h.shape, counts, h.values);
      vars[m[1]] = h;
    } else {
      FAIL("a reproduce line the runner does not know: " << line);
    }
  }
  return vars;
}

}  // namespace attn::test
