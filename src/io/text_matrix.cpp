#include "io/text_matrix.hpp"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace attn {
namespace {

bool hard_separator(char c) { return c == ',' || c == ';' || c == '\t'; }
bool space(char c) { return c == ' ' || c == '\r' || c == '\v' || c == '\f'; }

[[noreturn]] void fail_at(const std::string& path, std::size_t line, std::size_t column, const std::string& what) {
  throw NpyError(path + ": line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + what);
}

}  // namespace

std::string quoted_for_message(const std::string& text, std::size_t limit) {
  return "'" + escaped_for_message(text, limit, true) + "'";
}

NpyArray parse_text_matrix(const std::string& text, const std::string& path, bool allow_nonfinite) {
  NpyArray out;
  std::size_t cols = 0, rows = 0, line_no = 0;
  std::size_t pos = 0;
  // A UTF-8 byte-order mark (spreadsheets write one) is not part of the first value.
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) pos = 3;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    const std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;

    std::size_t i = 0;
    while (i < line.size() && space(line[i])) ++i;
    if (i == line.size() || line[i] == '#') continue;  // blank line or comment

    std::size_t n = 0;
    bool need_field = true;  // at the start of the line, or after a comma, semicolon or tab
    while (true) {
      while (i < line.size() && space(line[i])) ++i;
      if (i == line.size() || hard_separator(line[i])) {
        if (need_field) fail_at(path, line_no, n + 1, "empty field (expected a number between separators)");
        if (i == line.size()) break;
        ++i;  // the separator
        need_field = true;
        continue;
      }
      std::size_t end = i;
      while (end < line.size() && !hard_separator(line[end]) && !space(line[end])) ++end;
      const std::string field = line.substr(i, end - i);
      i = end;
      ++n;
      need_field = false;
      errno = 0;
      char* stop = nullptr;
      const float v = std::strtof(field.c_str(), &stop);
      // A NUL byte ends strtof early, so the whole field must have been consumed.
      if (field.empty() || stop != field.c_str() + field.size())
        fail_at(path, line_no, n, quoted_for_message(field) + " is not a number");
      if (!std::isfinite(v) && !allow_nonfinite) {
        const bool overflow = errno == ERANGE;
        fail_at(path, line_no, n,
                quoted_for_message(field) +
                    (overflow ? " overflows float32 (largest 3.4028235e+38; --allow-nonfinite keeps it as inf)"
                              : " is not a finite number (--allow-nonfinite keeps it)"));
      }
      // errno == ERANGE with a finite v: an underflow, kept as the float32 it rounds to.
      out.values.push_back(v);
      if (out.values.size() > kNpyMaxElements) throw NpyError(path + ": too many values (limit " + std::to_string(kNpyMaxElements) + ")");
    }
    if (rows == 0) cols = n;
    else if (n != cols)
      throw NpyError(path + ": line " + std::to_string(line_no) + " has " + std::to_string(n) + " values, the first row " +
                     std::to_string(cols));
    ++rows;
  }
  if (rows == 0) throw NpyError(path + ": no values (expected one row of numbers per line)");
  out.shape = {rows, cols};
  return out;
}

NpyArray read_text_matrix(const std::string& path, bool allow_nonfinite) {
  if (const std::string problem = not_a_file(path); !problem.empty()) throw NpyError(path + ": " + problem);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw NpyError(path + ": cannot open file");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0);
  if (size < 0 || static_cast<std::uint64_t>(size) > kTextMaxBytes)
    throw NpyError(path + ": file is too large (limit " + std::to_string(kTextMaxBytes >> 20) + " MiB)");
  std::string bytes(static_cast<std::size_t>(size), '\0');
  in.read(bytes.data(), size);
  if (!in) throw NpyError(path + ": read failed");
  return parse_text_matrix(bytes, path, allow_nonfinite);
}

}  // namespace attn
