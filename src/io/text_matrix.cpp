#include "io/text_matrix.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace attn {

NpyArray parse_text_matrix(const std::string& text, const std::string& path) {
  NpyArray out;
  std::istringstream lines(text);
  std::size_t cols = 0, rows = 0, line_no = 0;
  for (std::string line; std::getline(lines, line);) {
    ++line_no;
    for (char& c : line)
      if (c == ',' || c == '\t' || c == ';' || c == '\r') c = ' ';
    std::istringstream fields(line);
    std::string field;
    std::size_t n = 0;
    bool comment = false;
    while (fields >> field) {
      if (n == 0 && field[0] == '#') {
        comment = true;
        break;
      }
      errno = 0;
      char* end = nullptr;
      const double v = std::strtod(field.c_str(), &end);
      if (end == field.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
        throw NpyError(path + ": line " + std::to_string(line_no) + ": '" + field + "' is not a finite number");
      out.values.push_back(static_cast<float>(v));
      ++n;
    }
    if (comment || n == 0) continue;
    if (rows == 0) cols = n;
    else if (n != cols)
      throw NpyError(path + ": line " + std::to_string(line_no) + " has " + std::to_string(n) + " values, the first row " +
                     std::to_string(cols));
    ++rows;
    if (out.values.size() > kNpyMaxElements) throw NpyError(path + ": too many values");
  }
  if (rows == 0) throw NpyError(path + ": no values (expected one row of numbers per line)");
  out.shape = {rows, cols};
  return out;
}

NpyArray read_text_matrix(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw NpyError(path + ": cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_text_matrix(ss.str(), path);
}

}  // namespace attn
