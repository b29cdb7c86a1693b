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

namespace {

// A number's bytes: digits, letters (exponents, hex, nan, inf), signs and the point. Anything
// else outside a comment ends the read: a NUL, a control byte, a quote, a non-ASCII byte.
bool number_byte(int c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '+' || c == '-' || c == '.';
}

// No float32 needs this many characters (a subnormal written out in full takes about 150).
constexpr std::size_t kMaxFieldBytes = 1024;

// The stream a chunk at a time, byte by byte: a file is never held whole, and reading stops at
// the first byte that cannot be part of the matrix.
class Bytes {
 public:
  explicit Bytes(std::istream& in) : in_(in) {}
  int peek() { return pos_ < len_ || fill() ? static_cast<unsigned char>(buf_[pos_]) : -1; }
  int get() {
    const int c = peek();
    if (c >= 0) ++pos_;
    return c;
  }

 private:
  bool fill() {
    in_.read(buf_, sizeof buf_);
    len_ = static_cast<std::size_t>(in_.gcount());
    pos_ = 0;
    return len_ > 0;
  }
  std::istream& in_;
  char buf_[1 << 16];
  std::size_t pos_ = 0, len_ = 0;
};

bool end_of_field(int c) { return c < 0 || c == '\n' || space(static_cast<char>(c)) || hard_separator(static_cast<char>(c)); }

NpyArray parse_text_stream(std::istream& stream, const std::string& path, bool allow_nonfinite, const ShapeCheck& check) {
  Bytes in(stream);
  NpyArray out;
  std::size_t cols = 0, rows = 0, line_no = 0;
  // A UTF-8 byte-order mark (spreadsheets write one) is not part of the first value.
  if (in.peek() == 0xEF) {
    std::string bom;
    while (bom.size() < 3 && in.peek() >= 0x80) bom += static_cast<char>(in.get());
    if (bom != "\xEF\xBB\xBF")
      fail_at(path, 1, 1, quoted_for_message(bom) + " is not a number");
  }
  auto skip_spaces = [&] {
    while (in.peek() >= 0 && space(static_cast<char>(in.peek()))) in.get();
  };
  while (true) {
    ++line_no;
    skip_spaces();
    if (in.peek() < 0) break;
    if (in.peek() == '\n') {  // a blank line
      in.get();
      continue;
    }
    if (in.peek() == '#') {  // a comment, to the end of the line
      while (in.peek() >= 0 && in.get() != '\n') {
      }
      continue;
    }
    std::size_t n = 0;
    bool need_field = true;  // at the start of the line, or after a comma, semicolon or tab
    while (true) {
      skip_spaces();
      const int c = in.peek();
      if (c < 0 || c == '\n' || hard_separator(static_cast<char>(c))) {
        if (need_field) fail_at(path, line_no, n + 1, "empty field (expected a number between separators)");
        in.get();
        if (c < 0 || c == '\n') break;
        need_field = true;
        continue;
      }
      std::string field;
      while (number_byte(in.peek()) && field.size() <= kMaxFieldBytes) field += static_cast<char>(in.get());
      ++n;
      need_field = false;
      if (!end_of_field(in.peek())) {
        // Stop here: quote what came so far, the byte that cannot belong to a number, and a few
        // bytes after it for context, never more than the message shows.
        while (!end_of_field(in.peek()) && field.size() < kMaxFieldBytes + 32) field += static_cast<char>(in.get());
        fail_at(path, line_no, n, quoted_for_message(field) + " is not a number");
      }
      errno = 0;
      char* stop = nullptr;
      const float v = std::strtof(field.c_str(), &stop);
      if (stop != field.c_str() + field.size()) fail_at(path, line_no, n, quoted_for_message(field) + " is not a number");
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
    if (check) check(Shape{rows, cols});  // the rows so far: a limit crossed now stays crossed
  }
  if (rows == 0) throw NpyError(path + ": no values (expected one row of numbers per line)");
  out.shape = {rows, cols};
  return out;
}

}  // namespace

NpyArray parse_text_matrix(const std::string& text, const std::string& path, bool allow_nonfinite) {
  std::istringstream in(text);
  return parse_text_stream(in, path, allow_nonfinite, {});
}

NpyArray read_text_matrix(const std::string& path, bool allow_nonfinite, const ShapeCheck& check) {
  if (const std::string problem = not_a_file(path); !problem.empty()) throw NpyError(path + ": " + problem);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw NpyError(path + ": cannot open file");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0);
  if (size < 0 || static_cast<std::uint64_t>(size) > kTextMaxBytes)
    throw NpyError(path + ": file is too large (limit " + std::to_string(kTextMaxBytes >> 20) + " MiB)");
  NpyArray a = parse_text_stream(in, path, allow_nonfinite, check);
  if (in.bad()) throw NpyError(path + ": read failed");
  return a;
}

}  // namespace attn
