#include "cli/compile_hints.hpp"

#include <sstream>
#include <vector>

namespace attn::cli {

namespace {

// g++ quotes names with U+2018/U+2019 in a UTF-8 locale and with ' in the C locale.
std::string straight_quotes(std::string s) {
  for (const std::string curly : {"\xE2\x80\x98", "\xE2\x80\x99"})
    for (std::size_t at; (at = s.find(curly)) != std::string::npos;) s.replace(at, curly.size(), "'");
  return s;
}

}  // namespace

std::string strip_colors(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\033' && i + 1 < text.size() && text[i + 1] == '[') {
      i += 2;
      while (i < text.size() && !(text[i] >= '@' && text[i] <= '~')) ++i;  // up to the final byte
      continue;
    }
    out += text[i];
  }
  return out;
}

namespace {

struct Row {
  std::vector<std::string> all_of;  // every one of these appears in the error (and its source line)
  const char* hint;
};

// First match wins, so the specific rows come before the general ones. Each hint names what
// xtensor 0.24 (or plain C++) writes for the PyTorch habit behind the error.
const std::vector<Row>& table() {
  static const std::vector<Row> rows = {
      {{"<unresolved overloaded function type>[", "for array subscript"},
       "x.shape is a function in xtensor: PyTorch's x.shape[0] is x.shape()[0]."},
      {{"no matching function for call to", "::size(int)"},
       "x.size() takes no axis and counts every entry: PyTorch's x.size(0) is x.shape()[0]."},
      {{"has no member named 'T'"}, "xtensor has no .T: write xt::transpose(x) (<xtensor/xmanipulation.hpp>), or read x(j, i)."},
      {{"has no member named 'transpose'"},
       "transpose is a free function here: xt::transpose(x) (<xtensor/xmanipulation.hpp>), or read x(j, i)."},
      {{"stray '@' in program"},
       "C++ has no @: use attn::matmul(a, b) (#include \"core/matmul.hpp\") or write the loops over i, j and k."},
      {{"'matmul' is not a member of 'xt'"},
       "xtensor has no matmul: use attn::matmul(a, b) (#include \"core/matmul.hpp\") or write the loops."},
      {{"'xt::linalg' has not been declared"},
       "xt::linalg is not available to the exercises: use attn::matmul(a, b) (#include \"core/matmul.hpp\") or loops."},
      {{"'dim' was not declared"},
       "C++ has no keyword arguments like dim=-1: pass the axes (xt::sum(x, {1}) sums each row of a (T, S) x) or loop."},
      {{"has no member named 'sum'"}, "Reductions are free functions in xtensor: PyTorch's x.sum(-1) is xt::sum(x, {1}) for a (T, S) x."},
      {{"has no member named 'max'"}, "Reductions are free functions in xtensor: PyTorch's x.max(-1).values is xt::amax(x, {1}) for a (T, S) x."},
      {{"has no member named 'mean'"}, "Reductions are free functions in xtensor: PyTorch's x.mean() is xt::mean(x)()."},
      {{"has no member named 'exp'"}, "Element-wise functions are free functions: PyTorch's x.exp() is xt::exp(x); one float is std::exp(v)."},
      {{"has no member named 'view'"},
       "xtensor has no .view: copy the entries into a tensor of the new shape with loops (clearest), or xt::reshape_view."},
      {{"has no member named 'unsqueeze'"},
       "xtensor has no .unsqueeze: xt::view(x, xt::newaxis(), xt::all(), xt::all()), or make the larger tensor and copy."},
      {{"has no member named 'permute'"}, "PyTorch's x.permute(...) is xt::transpose(x, {...}) with the new axis order."},
      {{"has no member named 'masked_fill'"},
       "xtensor has no masked_fill: copy the tensor, then loop and set out(i, j) = fill where mask(i, j) != 0."},
      {{"'inf' was not declared"}, "PyTorch's float('-inf') is -std::numeric_limits<float>::infinity() (#include <limits>)."},
      {{"invalid cast from type 'const char*' to type 'float'"},
       "float(\"-inf\") is Python: write -std::numeric_limits<float>::infinity() (#include <limits>)."},
      {{"invalid type argument of unary '*'"}, "C++ has no ** operator: write a * a, or std::pow(a, 2.0f)."},
      {{"'len' was not declared"}, "len(x) is x.shape()[0] (the rows); x.size() counts every entry."},
      {{"'torch' has not been declared"}, "There is no torch here: std::exp, std::sqrt from <cmath> for one number, xt:: functions or loops for tensors."},
      {{"'np' was not declared"}, "There is no numpy here: std::exp, std::sqrt from <cmath> for one number, xt:: functions or loops for tensors."},
      {{"'math' was not declared"}, "Python's math.sqrt is std::sqrt (#include <cmath>); math.log is std::log."},
      {{"expected primary-expression before ':'", "[", ":]"},
       "x[0, :] is Python slicing: xt::view(x, 0, xt::all()) (<xtensor/xview.hpp>), or loop over the columns."},
      {{"for array subscript", "[int]"}, "x[i][j] is x(i, j) in xtensor: one call with every index."},
      {{"narrowing conversion of"},
       "Shapes and indices are std::size_t in xtensor: declare sizes and loop counters as std::size_t."},
      {{"discards qualifiers"},
       "That argument is const (an input, read only): copy it first (Mat out = x;) and change the copy."},
      {{"expected ';' before"}, "A statement ends with ';': look at the end of the line before the one named."},
      {{"expected ',' or ';' before"}, "A statement ends with ';': look at the end of the line before the one named."},
  };
  return rows;
}

}  // namespace

std::string first_compiler_error(const std::string& compiler_output) {
  std::istringstream in(strip_colors(compiler_output));
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("error:") == std::string::npos) continue;
    // g++ quotes the offending source line next, as "    6 |   return x.T;".
    std::string next;
    if (std::getline(in, next) && next.find(" | ") != std::string::npos) return line + "\n" + next;
    return line;
  }
  return "";
}

std::string compile_hint(const std::string& first_error) {
  const std::string text = straight_quotes(first_error);
  for (const Row& row : table()) {
    bool all = true;
    for (const auto& part : row.all_of) all = all && text.find(part) != std::string::npos;
    if (all) return row.hint;
  }
  return "";
}

}  // namespace attn::cli
