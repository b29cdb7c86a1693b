// Strict .npy reading and float32 .npy writing.
//
// xt::load_npy trusts the header: a truncated data section loads with garbage, a malformed
// shape loads as empty and a huge shape throws bad_alloc. This reader checks the header
// against the file's size before it allocates anything, and refuses what it does not convert.
#pragma once

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace attn {

struct NpyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct NpyArray {
  Shape shape;
  std::vector<float> values;  // C order, converted to float32
};

// Largest array the reader accepts (elements); a larger header is refused before allocating.
constexpr std::size_t kNpyMaxElements = std::size_t{1} << 28;
// Longest header dict accepted (bytes): NumPy writes a few hundred.
constexpr std::size_t kNpyMaxHeader = 65535;

// What the header declares, before any data is read.
struct NpyHeader {
  Shape shape;
  std::size_t count = 0;       // values, the product of shape
  std::size_t item = 4;        // bytes per value: 4 ('<f4') or 8 ('<f8')
  bool fortran = false;
  std::size_t data_start = 0;  // offset of the data section
};

// Called with the declared shape once the header has been read and the file's size agrees with
// it, before the data is read: throws to refuse the file (a lesson's size limits).
using ShapeCheck = std::function<void(const Shape&)>;

// Accepts little-endian float32 ('<f4') and float64 ('<f8'), C or Fortran order, .npy versions
// 1.0, 2.0 and 3.0. Throws NpyError naming the path and what was expected.
// A path that is not a regular file (a directory, a FIFO, a device) is refused before it is opened.
NpyArray read_npy(const std::string& path, const ShapeCheck& check = {});
NpyArray parse_npy(const std::string& bytes, const std::string& path_for_errors);
// The header of `bytes` (a whole file or its first bytes): magic, version, dtype, order, shape.
NpyHeader parse_npy_header(const std::string& bytes, const std::string& path_for_errors);

// Non-finite values (NaN, inf, -inf) of a C-order array: how many, and the first few.
struct NonFinite {
  std::size_t count = 0;
  std::vector<std::size_t> first;  // C-order indices of the first `keep` of them
};
NonFinite find_nonfinite(const std::vector<float>& values, std::size_t keep = 3);
// "[1, 2]": the index of the C-order element `flat` in an array of `shape` (0-based, as x[1, 2]).
std::string index_str(const Shape& shape, std::size_t flat);
// "nan", "inf", "-inf", or the value as printf's %g gives it.
std::string value_str(float v);
// "what is not a regular file", or "" for a regular file: "'x' is a directory", "no such file".
std::string not_a_file(const std::string& path);

// Bytes from a file, fit for a one-line error message: at most `limit` characters (then "..."),
// control bytes, bytes above 0x7e and backslashes (and single quotes when `escape_quotes`)
// written as \xNN, so that an escape sequence never reaches the terminal.
std::string escaped_for_message(const std::string& text, std::size_t limit, bool escape_quotes = false);

// float32, C order, version 1.0 header padded to 64 bytes as NumPy writes it.
// npy_header: the magic, version, length and header dict, the bytes before the data;
// npy_size: how long encode_npy's file is, known without the values (the .npz's size check).
std::string npy_header(const Shape& shape);
std::size_t npy_size(const Shape& shape);
std::string encode_npy(const Shape& shape, const float* values);
void write_npy(const std::string& path, const Shape& shape, const float* values);

}  // namespace attn
